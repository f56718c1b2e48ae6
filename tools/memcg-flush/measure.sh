#!/bin/sh
# memcg_flush_memcg on this host: measure.py at N = 25, 100, 200 and 400 memcgs, ROUNDS
# rounds each (default 30); prints each N's medians and the slopes between them, in ns a
# (CPU, memcg) pair. Needs root and cgroup v1's memory controller (see measure.py).
# Usage: tools/memcg-flush/measure.sh [ROUNDS]
set -eu
ROUNDS=${1:-30}
HERE=$(cd "$(dirname "$0")" && pwd)
echo "$(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs, $(date -u '+%F %H:%M') UTC"
for n in 25 100 200 400; do
    python3 "$HERE/measure.py" "$n" "$ROUNDS"
done | awk '{ print; n[NR] = $1; d[NR] = $8 }
    END { for (i = 2; i <= NR; i++)
        printf "slope %d -> %d: %.0f ns a pair\n", n[i-1], n[i], (d[i] - d[i-1]) / (2 * (n[i] - n[i-1])) }'
