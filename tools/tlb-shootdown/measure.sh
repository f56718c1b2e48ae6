#!/bin/sh
# The cost of a TLB flush IPI on this host (tlb_ipi for the sender, tlb_flush_irq for a
# receiver): shootdown.c run alternately with its spinner in another process (no IPIs)
# and as a thread of the shooter's process (an IPI each call), ROUNDS pairs of SECS
# seconds. Needs gcc and two CPUs (0 and 1). Prints each pair and the per-IPI figures.
# Usage: tools/tlb-shootdown/measure.sh [ROUNDS] [SECS]   (default 4 pairs of 3 s)
set -eu
ROUNDS=${1:-4}
SECS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
gcc -O2 -pthread -o "$W/shootdown" "$HERE/shootdown.c"
echo "$(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs, $(date -u '+%F %H:%M') UTC"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
    a=$("$W/shootdown" 0 "$SECS" | sort | tr '\n' ' ')
    b=$("$W/shootdown" 1 "$SECS" | sort | tr '\n' ' ')
    echo "$a|$b" | awk '{
        # $2 ns/call alone, $7 loops/s alone; after "|": ns/call, calls/s, loops/s
        split($0, h, "|"); split(h[1], x, " "); split(h[2], y, " ");
        sender = y[2] - x[2]; lost = (x[7] - y[7]) / x[7];
        printf "alone %.0f ns/call, spinner %.3g/s | IPI each %.0f ns/call (%.3g/s), spinner %.3g/s | sender +%.0f ns, receiver %.0f ns/IPI\n",
            x[2], x[7], y[2], y[4], y[7], sender, lost / y[4] * 1e9 }'
    i=$((i + 1))
done
