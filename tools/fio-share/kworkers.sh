#!/bin/sh
# What preempts fio's jobs on this host's kernel while they reclaim in a memcg
# (docs/guide/kernel.md, fio-share): runs tools/fio-share/host.sh, and 8 s into its 20 s
# records one second of sched_switch and workqueue_execute_start events with perf.
# Prints how long each fio job ran at a stretch (CPU time over involuntary switches),
# the per-CPU kworkers' runs in the second and how long each stayed on its CPU, and the
# work functions they ran. Needs root, perf and what host.sh needs.
# Usage: tools/fio-share/kworkers.sh [JOBS [FILE_MiB [LIMIT_MiB]]]   (default 8 8 33)
set -eu
JOBS=${1:-8}; FILE=${2:-8}; LIMIT=${3:-33}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
"$(dirname "$0")/host.sh" "$JOBS" "$FILE" "$LIMIT" > "$D/host.txt" 2>&1 &
sleep 8
for p in $(pgrep -x fio); do
    sw=$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "/proc/$p/status")
    ms=$(awk '/se.sum_exec_runtime/ { print $3 }' "/proc/$p/sched")
    echo "$sw $ms"
done > "$D/jobs"
perf record -q -o "$D/perf.data" -e sched:sched_switch \
    -e workqueue:workqueue_execute_start -a sleep 1 2> /dev/null
wait
cat "$D/host.txt"
# The busiest fio processes are the jobs (the parent mostly sleeps).
sort -k2 -n -r "$D/jobs" | head -n "$JOBS" | awk '{ n += $1; ms += $2 }
    END { if (n) printf "fio jobs: %d involuntary switches in %.0f ms of CPU: %.2f ms at a stretch\n", n, ms, ms / n }'
perf script -i "$D/perf.data" -F cpu,time,event,trace 2> /dev/null > "$D/events"
awk '/sched_switch/ {
        cpu = $1; t = $2; sub(":", "", t)
        if ($0 ~ /next_comm=kworker\/[0-9]+:[0-9]+ /) start[cpu] = t
        else if ($0 ~ /prev_comm=kworker\/[0-9]+:[0-9]+ / && (cpu in start)) {
            printf "%.1f\n", (t - start[cpu]) * 1e6; delete start[cpu]
        }
    }' "$D/events" | sort -n | awk '{ a[NR] = $1; s += $1 }
    END { if (NR) printf "per-CPU kworker runs in 1 s: %d, on the CPU %.1f us on average (p10 %s, p50 %s, p90 %s us)\n",
        NR, s / NR, a[int(NR * 0.1) + 1], a[int(NR / 2) + 1], a[int(NR * 0.9) + 1] }'
echo "work functions run in that second:"
grep -o 'function [a-z_0-9]*' "$D/events" | sort | uniq -c | sort -r -n | head -5
