#!/bin/sh
# Boots the guest once and saves its console log.
#   tools/ground-truth/run.sh LOG [rs_NAME=VALUE ...]
# e.g. run.sh /work/qemu/mglru-1.log rs_mglru=y rs_dur=90
# Parameters (see init): rs_mglru (y|0), rs_anon_mb, rs_anon_threads, rs_anon_mode (r|w),
# rs_file_mb, rs_file_threads, rs_brd_mb, rs_dur, rs_warm, rs_interval, rs_ra_kb.
set -eu
W=${W:-/work/qemu}
LOG=$1
shift
# the host's load matters: an overcommitted host starves the vCPUs while guest timers
# run on, and vCPUs lose the CPU while holding locks
echo "host loadavg at start: $(cat /proc/loadavg)" > "$LOG.host"
timeout ${TIMEOUT:-900} qemu-system-x86_64 -machine q35 -accel tcg -cpu max -smp 2 -m 1024 \
	-nographic -no-reboot -kernel "$W/vmlinuz" -initrd "$W/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 transparent_hugepage=never $*" > "$LOG" 2>&1 || true
echo "host loadavg at end: $(cat /proc/loadavg)" >> "$LOG.host"
grep -q '=== DONE' "$LOG" && echo "ok: $LOG" || { echo "run did not finish: $LOG"; tail -20 "$LOG"; }
