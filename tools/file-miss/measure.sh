#!/bin/sh
# The CPU time of a page-cache miss on ext4 over a bio-based synchronous disk (a zram
# device, standing for brd, which this host's kernel may lack), and perf's shares of the
# parts the model's `file_read_miss` cost stands for. Needs root, perf, mkfs.ext4, gcc
# and a kernel with zram built in or loadable. Drops the host's page cache.
# Usage: tools/file-miss/measure.sh [MiB]   (default 1024)
# CHARGED (720) is what the model charges on a miss beyond a hit apart from
# file_read_miss, at the default profile: page_alloc 150, charge 30, xarray 50 and
# lock_acquire 20 for the insertion, batch_add 10, the LRU add's list_op 20, two
# lru_flag_atomic 20 and lock_acquire 20, brd's page_copy 400. BRD_LOOKUP (100) stands
# for brd's lookup of its page, which zram's own work does not measure.
set -eu
MB=${1:-1024}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
gcc -O2 -o "$W/rd" "$HERE/rd.c"
[ -e /sys/class/zram-control ] || modprobe zram num_devices=0
N=$(cat /sys/class/zram-control/hot_add)
DEV=/dev/zram$N
cleanup() {
    umount "$W/mnt" 2>/dev/null || true
    echo 1 > /sys/block/zram$N/reset 2>/dev/null || true
    echo "$N" > /sys/class/zram-control/hot_remove 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
echo $((MB + 400))M > /sys/block/zram$N/disksize
mkfs.ext4 -q -F "$DEV"
mkdir "$W/mnt" && mount "$DEV" "$W/mnt"
dd if=/dev/urandom of="$W/mnt/f" bs=1M count="$MB" status=none
sync
echo 0 > /sys/block/zram$N/queue/read_ahead_kb
echo "$(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs, $(date -u '+%F %H:%M') UTC"
# One pass with the page cache dropped fills the inode's extent-status cache, which a
# steady reader keeps; the measured passes drop only the page cache (drop_caches = 1).
sync; echo 3 > /proc/sys/vm/drop_caches; "$W/rd" "$W/mnt/f" > /dev/null
for i in 1 2 3 4 5; do
    sync; echo 1 > /proc/sys/vm/drop_caches
    printf 'miss: '; "$W/rd" "$W/mnt/f" | tee -a "$W/miss"
    printf 'hit:  '; "$W/rd" "$W/mnt/f" | tee -a "$W/hit"
done
med() { awk '{ for (i = 1; i <= NF; i++) if ($i == "cpu") print $(i + 1) }' "$1" | sort -n | sed -n 3p; }
MISS=$(med "$W/miss"); HIT=$(med "$W/hit")
echo "median CPU a read: miss $MISS ns, hit $HIT ns"
sync; echo 1 > /proc/sys/vm/drop_caches
printf 'miss under perf: '
perf record -q -F 20000 -g -o "$W/perf.data" "$W/rd" "$W/mnt/f" 2>/dev/null
perf report -i "$W/perf.data" --children --sort sym --stdio -g none 2>/dev/null > "$W/report"
share() { awk -v f="$1" '$NF == f { sub("%", "", $1); print $1; exit }' "$W/report"; }
echo "perf shares of all samples (children included):"
for f in page_cache_ra_unbounded read_pages ext4_mpage_readpages ext4_map_blocks \
    bio_alloc_bioset submit_bio_noacct_nocheck zram_submit_bio copy_page \
    zs_obj_read_begin folio_alloc_noprof filemap_add_folio __mem_cgroup_charge; do
    printf '  %-28s %s%%\n' "$f" "$(share $f)"
done
awk '
    $NF == "page_cache_ra_unbounded" { ra = $1 } $NF == "read_pages" { rp = $1 }
    $NF == "ext4_mpage_readpages" { mp = $1 } $NF == "submit_bio_noacct_nocheck" { sb = $1 }
    $NF == "zram_submit_bio" { zr = $1 } $NF == "filemap_add_folio" { fa = $1 }
    $NF == "folio_alloc_noprof" { al = $1 } $NF == "copy_page" { cp = $1 }
    END {
        # readahead setup (ra less read_pages, the folio allocation and insertion), the
        # read_pages and ext4_mpage_readpages work outside submit_bio, and submit_bio
        # less the driver (zram) itself.
        setup = ra - rp - fa - al; outside = rp - sb; block = sb - zr
        printf "the driver'"'"'s own work but its copy (zram_submit_bio less copy_page): %.1f%%, %.0f ns of the median miss\n", zr - cp, (zr - cp) * miss / 100
        printf "file_read_miss share (readahead setup %.1f + read_pages and ext4 outside submit_bio %.1f + block layer %.1f): %.1f%%, %.0f ns of the median miss\n", setup, outside, block, setup + outside + block, (setup + outside + block) * miss / 100
        d = miss - hit - (zr - cp) * miss / 100
        printf "a miss less a hit less the driver'"'"'s own work: %.0f ns; less what the model charges on a miss beside file_read_miss (%d ns at the default profile) plus brd'"'"'s page lookup (%d ns): file_read_miss = %.0f ns\n", d, charged, brd, d - charged + brd
    }' miss="$MISS" hit="$HIT" charged="${CHARGED:-720}" brd="${BRD_LOOKUP:-100}" "$W/report"
