#!/bin/sh
# The CPU time of an anon swap-out and swap-in on this host, and what the same paths
# cost on brd (zram's own work and the bio layer taken out, by perf's call-graph
# shares): swapcost.c pushes MiB of random pages out with MADV_PAGEOUT and reads them
# back in a random order, three rounds, on a zram swap device of its own. Needs root,
# perf, gcc, python3, mkswap and a kernel with zram. Sets vm.page-cluster to 0.
# Usage: tools/swap-cost/measure.sh [MiB]   (default 256; BRD_LOOKUP=100 ns)
set -eu
MB=${1:-256}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
gcc -O2 -o "$W/swapcost" "$HERE/swapcost.c"
[ -e /sys/class/zram-control ] || modprobe zram num_devices=0
N=$(cat /sys/class/zram-control/hot_add)
PC=$(cat /proc/sys/vm/page-cluster)
cleanup() {
    swapoff /dev/zram$N 2>/dev/null || true
    echo 1 > /sys/block/zram$N/reset 2>/dev/null || true
    echo "$N" > /sys/class/zram-control/hot_remove 2>/dev/null || true
    echo "$PC" > /proc/sys/vm/page-cluster
    rm -rf "$W"
}
trap cleanup EXIT
echo $((MB * 2))M > /sys/block/zram$N/disksize
mkswap /dev/zram$N > /dev/null
swapon -p 32767 /dev/zram$N
echo 0 > /proc/sys/vm/page-cluster
echo "$(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs, $(date -u '+%F %H:%M') UTC"
"$W/swapcost" "$MB" | tee "$W/rounds"
med() { awk -v f="$1" '{ for (i = 1; i <= NF; i++) if ($i == f) print $(i + 3) }' "$W/rounds" | sort -n | sed -n 2p; }
IN=$(med in:); OUT=$(med out:)
echo "median CPU a page: swap-in $IN ns, swap-out $OUT ns"
perf record -q -F 20000 -g -o "$W/perf.data" "$W/swapcost" "$MB" > /dev/null 2>&1
perf script -i "$W/perf.data" -F ip,sym 2>/dev/null | python3 "$HERE/shares.py" "$IN" "$OUT" "${BRD_LOOKUP:-100}"
