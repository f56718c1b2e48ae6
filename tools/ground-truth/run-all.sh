#!/bin/sh
# The whole experiment: builds the guest, boots it once per configuration and
# summarizes. About 2.5 to 4 minutes per boot under TCG on a shared 2-core host.
#   tools/ground-truth/run-all.sh [WORKDIR]          (default /work/qemu)
# Then the model:
#   reclaimsim compare scenarios/ground-truth/qemu-mixed-memcgs.toml --json model.json
#   reclaimsim sweep scenarios/ground-truth/qemu-mixed-memcgs.toml --key costs.access_hit \
#       --values 20,50,100,500,1000 --json sweep.json
#   tools/ground-truth/model_summary.py model.json
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
W=${1:-/work/qemu}
export W
"$HERE/build-initramfs.sh" "$W"
for i in 1 2; do
	"$HERE/run.sh" "$W/mglru-$i.log" rs_mglru=y
	"$HERE/run.sh" "$W/classic-$i.log" rs_mglru=0
done
# stores instead of loads (what the model's anon workload does)
"$HERE/run.sh" "$W/mglru-w1.log" rs_mglru=y rs_anon_mode=w
"$HERE/run.sh" "$W/classic-w1.log" rs_mglru=0 rs_anon_mode=w
# colder anon: CPU work between accesses
for s in 300 3000; do
	"$HERE/run.sh" "$W/mglru-spin$s.log" rs_mglru=y rs_anon_spin=$s
	"$HERE/run.sh" "$W/classic-spin$s.log" rs_mglru=0 rs_anon_spin=$s
done
# which paths age (ftrace)
"$HERE/run.sh" "$W/mglru-trace.log" rs_mglru=y rs_trace=1
"$HERE/summarize.py" "$W"/*.log --json "$W/kernel-summary.json"
