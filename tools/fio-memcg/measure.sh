#!/bin/sh
# The real kernel's side of scenarios/analysis/host-fio-memcg.toml: fio's 2 jobs of
# buffered io_uring random reads (zipf:0.5) over 2 x 150 MiB files on ext4 over a zram
# disk (bio-based and synchronous, as brd is; tools/file-miss), inside a memcg of
# 80 MiB, on this host's own kernel. Prints the reads a second and CPU time a read, the
# refaults a read, and what the memcg holds beside the files' pages half-way (fio's
# own memory, charged to it too). Needs root, fio, mkfs.ext4, zram and a memory
# controller (cgroup v2, or v1 mounted at /sys/fs/cgroup/memory).
# Usage: tools/fio-memcg/measure.sh [LIMIT_MiB]   (default 80)
set -eu
LIMIT=${1:-80}
W=$(mktemp -d)
. "$(cd "$(dirname "$0")/.." && pwd)/lib/zram-ext4.sh"
memcg_up fio-memcg "$LIMIT"
STAT=memory.stat
trap 'zram_ext4_down "$W"; rmdir "$CG" 2>/dev/null || true; rm -rf "$W"' EXIT
zram_ext4_up 800 "$W"
for j in 0 1; do head -c 150M /dev/urandom > "$W/mnt/t.$j.0"; done
sync; echo 1 > /proc/sys/vm/drop_caches
host_line ", memcg $LIMIT MiB"
r0=$(refaults)
sh -c "echo \$\$ > $CG/cgroup.procs; exec fio --output-format=json --output=$W/out.json \
    --name=t --directory=$W/mnt --buffered=1 --ioengine=io_uring --iodepth=128 \
    --iodepth_batch_submit=32 --iodepth_batch_complete=32 --rw=randread \
    --random_distribution=zipf:0.5 --norandommap --time_based --ramp_time=10 \
    --runtime=20 --numjobs=2 --size=150m --group_reporting" > /dev/null &
sleep 15
echo "memcg half-way ($STAT, bytes):"; grep -E '^(cache|rss|shmem|mapped_file|file|anon|file_mapped|kernel) ' "$CG/$STAT" | sed 's/^/  /'
r1=$(refaults)
wait
r2=$(refaults)
python3 - "$W/out.json" $((r2 - r1)) $((r2 - r0)) <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
ios, ms, iops = j["read"]["total_ios"], j["job_runtime"], j["read"]["iops"]
cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0
late, total = int(sys.argv[2]), int(sys.argv[3])
print(f"reads {iops:,.0f}/s, CPU {cpu * ms * 1e6 / ios:.0f} ns a read ({cpu:.2f} of each job's time)")
# The last 15 s of the 20 s run: refaults over the reads at the run's rate.
print(f"refaults a read: {late / (iops * 15):.3f} (last 15 s); all {total:,} in 30 s")
PY
