#!/bin/sh
# scenarios/kernel/fio-share.toml on this host's own kernel: JOBS fio jobs of buffered
# psync random 4 KiB reads (uniform, norandommap) over their own file on ext4 over a
# zram disk (bio-based and synchronous, as brd is; readahead off), inside a memcg
# LIMIT_MiB in size, for 20 s. Prints the reads, the misses a read (the zram disk's
# reads over fio's), the page cache the memcg holds (sampled every second) and what
# uniform reads would miss with that much cached: 1 - cached / files. Needs root, fio,
# mkfs.ext4, zram and a memory controller (cgroup v2, or v1 at /sys/fs/cgroup/memory).
# Usage: tools/fio-share/host.sh [JOBS [FILE_MiB [LIMIT_MiB]]]   (default 8 8 24)
set -eu
JOBS=${1:-8}; FILE=${2:-8}; LIMIT=${3:-24}
W=$(mktemp -d)
. "$(cd "$(dirname "$0")/.." && pwd)/lib/zram-ext4.sh"
memcg_up fio-share "$LIMIT"
trap 'zram_ext4_down "$W"; rmdir "$CG" 2>/dev/null || true; rm -rf "$W"' EXIT
zram_ext4_up $((JOBS * FILE + 64)) "$W"
j=0
while [ $j -lt "$JOBS" ]; do head -c "${FILE}M" /dev/urandom > "$W/mnt/t.$j.0"; j=$((j + 1)); done
sync; echo 1 > /proc/sys/vm/drop_caches
host_line ", $JOBS jobs x $FILE MiB in a $LIMIT MiB memcg"
zreads() { awk '{ print $1 }' /sys/block/zram$ZRAM_N/stat; }
z0=$(zreads)
sh -c "echo \$\$ > $CG/cgroup.procs; exec fio --output-format=json --output=$W/out.json \
    --name=t --directory=$W/mnt --buffered=1 --ioengine=psync --rw=randread \
    --random_distribution=random --norandommap --time_based --runtime=20 \
    --numjobs=$JOBS --size=${FILE}m --group_reporting" > /dev/null &
sleep 2
: > "$W/cached"
i=0
while [ $i -lt 17 ]; do
    awk -v k="$FILEKEY" '$1 == k { print $2 }' "$CG/memory.stat" >> "$W/cached"
    sleep 1; i=$((i + 1))
done
wait
z1=$(zreads)
python3 - "$W/out.json" $((z1 - z0)) "$W/cached" $((JOBS * FILE)) <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
ios = j["read"]["total_ios"]
misses = int(sys.argv[2])
cached = [int(x) for x in open(sys.argv[3]).read().split()]
share = sum(cached) / len(cached) / (int(sys.argv[4]) << 20)
print(f"reads {ios:,}, misses a read {misses / ios:.3f}; cached {share:.1%} of the files, "
      f"uniform reads would miss {1 - share:.3f}")
PY
