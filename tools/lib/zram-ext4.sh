# Sourced by the measurement tools (tools/cold-lookup, tools/fio-memcg, tools/fio-share): an ext4 file
# system on a zram disk of its own, which is bio-based and synchronous as brd is, with
# readahead off so that a miss reads one page as the model's does. Needs root,
# mkfs.ext4 and zram (loaded here if it is a module).
#
# zram_ext4_up MIB DIR: a MIB MiB disk mounted on DIR/mnt; sets ZRAM_N.
# zram_ext4_down DIR: unmounts it and gives the device back (safe to call twice).
zram_ext4_up() {
    [ -e /sys/class/zram-control ] || modprobe zram num_devices=0
    ZRAM_N=$(cat /sys/class/zram-control/hot_add)
    echo "$1M" > /sys/block/zram$ZRAM_N/disksize
    mkfs.ext4 -q -F /dev/zram$ZRAM_N
    mkdir -p "$2/mnt" && mount /dev/zram$ZRAM_N "$2/mnt"
    echo 0 > /sys/block/zram$ZRAM_N/queue/read_ahead_kb
}
zram_ext4_down() {
    umount "$1/mnt" 2>/dev/null || true
    [ -n "${ZRAM_N:-}" ] || return 0
    echo 1 > /sys/block/zram$ZRAM_N/reset 2>/dev/null || true
    echo "$ZRAM_N" > /sys/class/zram-control/hot_remove 2>/dev/null || true
    ZRAM_N=
}

# two_files DIR MIB...: for each MIB, two files of MIB MiB of random data (t.0.0 and
# t.1.0, fio's names for 2 jobs) in DIR/mnt/sMIB.
two_files() {
    d=$1; shift
    for sz in "$@"; do
        mkdir "$d/mnt/s$sz"
        for j in 0 1; do head -c "${sz}M" /dev/urandom > "$d/mnt/s$sz/t.$j.0"; done
    done
}
# The machine a figure comes from, and when.
host_line() {
    echo "$(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs, $(date -u '+%F %H:%M') UTC$*"
}
# Page-cache pages read back since boot (workingset_refault_file).
refaults() { awk '$1 == "workingset_refault_file" { print $2 }' /proc/vmstat; }

# memcg_up NAME MIB: a memcg NAME.$$ limited to MIB MiB under cgroup v2, or v1 at
# /sys/fs/cgroup/memory; sets CG (its directory) and FILEKEY (memory.stat's page-cache
# key: file on v2, cache on v1). The caller removes it (rmdir "$CG") when done.
memcg_up() {
    if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
        CG=/sys/fs/cgroup/$1.$$; mkdir "$CG"; echo "$2M" > "$CG/memory.max"; FILEKEY=file
    else
        CG=/sys/fs/cgroup/memory/$1.$$; mkdir "$CG"
        echo "$2M" > "$CG/memory.limit_in_bytes"; FILEKEY=cache
    fi
}
