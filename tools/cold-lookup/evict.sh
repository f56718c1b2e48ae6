#!/bin/sh
# What evicting a page-cache page costs more in a large cache than in a small one: fio's
# random 4 KiB psync reads, 2 jobs, in a memcg a quarter of their files' size, with the
# files 2 x 32 MiB (a 24 MiB memcg, fio's own ~9 MiB in it too) and 2 x LARGE MiB (a
# memcg of LARGE / 2 MiB), on ext4 over zram as measure.sh. Per round and size, perf
# samples 6 s of the run (all CPUs, call graphs), and the time __remove_mapping takes
# per evicted page is its share of the samples times the CPU time of the window over
# the pages it read back meanwhile (workingset_refault_file: in the steady state each
# refault evicts a page; cgroup v1's pgpgout counts more than evictions); likewise
# shrink_folio_list and the whole of memcg reclaim (try_to_free_mem_cgroup_pages).
# Needs root, fio, perf, mkfs.ext4, zram and cgroup v1's memory controller.
# Usage: tools/cold-lookup/evict.sh [LARGE_MiB [ROUNDS]]   (default 2048 and 3)
set -eu
LARGE=${1:-2048}
ROUNDS=${2:-3}
W=$(mktemp -d)
CGS=/sys/fs/cgroup/memory/evict.$$
. "$(cd "$(dirname "$0")/.." && pwd)/lib/zram-ext4.sh"
trap 'zram_ext4_down "$W"; rmdir "$CGS".* 2>/dev/null || true; rm -rf "$W"' EXIT
zram_ext4_up $((2 * LARGE + 64 + 512)) "$W"
two_files "$W" 32 "$LARGE"
host_line
run() { # size limit_MiB round
    cg="$CGS.$1.$3"; mkdir "$cg"; echo "$2M" > "$cg/memory.limit_in_bytes"
    sync; echo 1 > /proc/sys/vm/drop_caches
    sh -c "echo \$\$ > $cg/cgroup.procs; exec fio --name=t --directory=$W/mnt/s$1 \
        --buffered=1 --ioengine=psync --rw=randread --norandommap --time_based \
        --runtime=16 --numjobs=2 --size=${1}m" > /dev/null &
    sleep 8
    o0=$(refaults)
    c0=$(awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
    i0=$(awk '/^cpu / { print $5 + $6 }' /proc/stat)
    perf record -q -a -g -F 2999 -o "$W/p.data" -- sleep 6 2> /dev/null
    c1=$(awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
    i1=$(awk '/^cpu / { print $5 + $6 }' /proc/stat)
    o1=$(refaults)
    wait
    # Busy CPU time of the window in ns (USER_HZ ticks of every CPU, idle and iowait out).
    busy=$(( (c1 - c0 - (i1 - i0)) * 1000000000 / $(getconf CLK_TCK) ))
    perf report -i "$W/p.data" --children --sort sym --stdio -g none 2> /dev/null > "$W/r"
    awk -v busy="$busy" -v ev=$((o1 - o0)) -v sz="$1" '
        $NF == "__remove_mapping" { rm = $1 } $NF == "shrink_folio_list" { sf = $1 }
        $NF == "try_to_free_mem_cgroup_pages" { tf = $1 }
        END { sub("%", "", rm); sub("%", "", sf); sub("%", "", tf)
              printf "%5d MiB files: %d evictions in 6 s; ns an eviction: __remove_mapping %.0f, shrink_folio_list %.0f, memcg reclaim %.0f\n",
                  sz, ev, rm / 100 * busy / ev, sf / 100 * busy / ev, tf / 100 * busy / ev }' "$W/r"
    rmdir "$cg"
}
for r in $(seq "$ROUNDS"); do
    echo "round $r:"
    run 32 24 "$r"
    run "$LARGE" $((LARGE / 2)) "$r"
done
