#!/bin/sh
# What a page-cache hit costs more in a large cache than in a small one: fio's random
# 4 KiB buffered reads of files fully in the page cache, 2 jobs (one a CPU), with the
# files 2 x 32 MiB (the size calibrate's pread probe reads) and 2 x LARGE MiB, on ext4
# over a zram disk as tools/file-miss does. Needs root, fio, mkfs.ext4 and zram; RAM for
# the files twice (zram's copy, incompressible, and the page cache's).
# Usage: tools/cold-lookup/measure.sh [LARGE_MiB [ROUNDS]]   (default 2048 and 3)
# Prints, per engine (psync, io_uring) and round, the CPU time a read takes (fio's
# usr+sys CPU over its reads) at each size, the pages read back from zram meanwhile
# (workingset_refault_file: a miss costs ~4 us, so they are counted, not assumed away),
# and the medians' difference: the `lookup_cold` the model charges a random read in a
# page cache of GiBs (docs/reference/costs.md).
set -eu
LARGE=${1:-2048}
ROUNDS=${2:-3}
W=$(mktemp -d)
. "$(cd "$(dirname "$0")/.." && pwd)/lib/zram-ext4.sh"
trap 'zram_ext4_down "$W"; rm -rf "$W"' EXIT
zram_ext4_up $((2 * LARGE + 64 + 512)) "$W"
two_files "$W" 32 "$LARGE"
host_line
run() { # engine size -> "ns_per_read refaults reads"
    cat "$W/mnt/s$2"/* > /dev/null
    r0=$(refaults)
    fio --output-format=json --name=t --directory="$W/mnt/s$2" --ioengine="$1" \
        --iodepth=128 --iodepth_batch_submit=32 --iodepth_batch_complete=32 \
        --rw=randread --norandommap --time_based --ramp_time=2 --runtime=8 \
        --numjobs=2 --size="${2}m" --group_reporting --output="$W/out.json" > /dev/null
    r1=$(refaults)
    python3 - "$W/out.json" $((r1 - r0)) <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
ios, ms = j["read"]["total_ios"], j["job_runtime"]
cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0          # of the jobs' run time, summed
print(f"{cpu * ms * 1e6 / ios:.0f} {sys.argv[2]} {ios} {cpu:.2f}")
PY
}
for eng in psync io_uring; do
    : > "$W/small"; : > "$W/large"
    for r in $(seq "$ROUNDS"); do
        s=$(run $eng 32); l=$(run $eng "$LARGE")
        echo "$s" >> "$W/small"; echo "$l" >> "$W/large"
        echo "$eng round $r: 2 x 32 MiB $s; 2 x $LARGE MiB $l  (ns a read, refaults, reads, CPUs)"
    done
    med() { cut -d' ' -f1 "$1" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
    S=$(med "$W/small"); L=$(med "$W/large")
    echo "$eng: median $S ns at 2 x 32 MiB, $L ns at 2 x $LARGE MiB: $((L - S)) ns more a read"
done
