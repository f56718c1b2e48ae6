#!/usr/bin/env python3
"""Times two commands against each other, pair by pair, on a noisy machine.

    tools/ab-time.py [-n RUNS] [--warmup W] -- 'COMMAND A' 'COMMAND B'

Runs A and B in turn (A B A B ...) RUNS times each after W unpaired warm-up runs of
each, and prints, for each command, the CPU seconds (user + system, the kernel's
accounting of the finished child, os.wait4) and wall seconds as min / median / max,
then the ratio A/B of CPU and wall time taken pair by pair, as min / median / max.
Pairing keeps the ratio meaningful when the machine's speed drifts during the call:
quote the median ratio. Each command is split as a shell splits words (no shell runs:
write `sh -c '...'` for a pipe); its output is discarded. Exits 1 if a run fails.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def run(cmd):
    """One run of `cmd`: (cpu seconds, wall seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"ab-time: {shlex.join(cmd)} exited with {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime, wall


def spread(xs, unit=""):
    return f"{min(xs):.3f}{unit} / {statistics.median(xs):.3f}{unit} / {max(xs):.3f}{unit}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5, help="paired runs (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="unpaired runs first (default 1)")
    ap.add_argument("a", help="command A, one string")
    ap.add_argument("b", help="command B (the baseline), one string")
    args = ap.parse_args()
    if args.n < 1:
        ap.error(f"-n {args.n}: at least one run")
    a, b = shlex.split(args.a), shlex.split(args.b)
    for _ in range(args.warmup):
        run(a)
        run(b)
    ra, rb = [], []
    for _ in range(args.n):
        ra.append(run(a))
        rb.append(run(b))
    for name, r in (("A", ra), ("B", rb)):
        print(f"{name}: cpu s {spread([c for c, _ in r])}, wall s {spread([w for _, w in r])}")
    cpu = [x[0] / y[0] for x, y in zip(ra, rb)]
    wall = [x[1] / y[1] for x, y in zip(ra, rb)]
    print(f"A/B (min / median / max of {args.n} pairs): cpu {spread(cpu)}, wall {spread(wall)}")


if __name__ == "__main__":
    main()
