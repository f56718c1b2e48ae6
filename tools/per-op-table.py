#!/usr/bin/env python3
"""Time per operation and thread, model against seed: reads a JSON file that `reclaimsim
validate --json` wrote and prints one Markdown row per seed figure the postings give as
an absolute throughput (not only as a change): the seed's threads over its ops/s beside
the model's threads over its ops/s, in microseconds, and their ratio.

    reclaimsim validate -q --json v.json
    python3 tools/per-op-table.py v.json

A thread here is one of the workload's own tasks (fio's jobs, memcached's server
threads, dd's readers), not memtier's clients; the model counts its tasks from the run's
scheduler record, so a scenario run at other thread counts is measured at its own."""

import argparse
import json
import sys

# (scenario, variant, workload, seed ops/s, seed threads, source): the postings' own
# figures (see each scenario's [[expect]] source and docs/seed-gaps.md).
SEED = [
    ("000-mixed-memcgs", "v11-patch1-8", "fio", 2154e3, 36, "000 patch1-8"),
    ("000-mixed-memcgs", "v11-patch1-9", "fio", 2205e3, 36, "000 patch1-9"),
    ("000-mixed-memcgs", "classic", "fio", 1378e3, 36, "000 5.18-rc1"),
    ("000-mixed-memcgs", "v11-patch1-8", "memcached:run", 819618, 36, "000 patch1-8"),
    ("000-mixed-memcgs", "v11-patch1-9", "memcached:run", 1916516, 36, "000 patch1-9"),
    ("000-mixed-memcgs", "classic", "memcached:run", 578946, 36, "000 5.18-rc1"),
    ("000-mixed-memcgs", "patch1-8", "fio", 1880e3, 36, "001 patch1-8"),
    ("000-mixed-memcgs", "patch1-9", "fio", 2252e3, 36, "001 patch1-9"),
    ("000-mixed-memcgs", "classic-v5.19", "fio", 1279e3, 36, "001 5.19-rc1"),
    ("000-mixed-memcgs", "patch1-8", "memcached:run", 862769, 36, "001 patch1-8"),
    ("000-mixed-memcgs", "patch1-9", "memcached:run", 1911022, 36, "001 patch1-9"),
    ("000-mixed-memcgs", "classic-v5.19", "memcached:run", 1673524, 36, "001 5.19-rc1"),
    ("002-look-around", "brd_look_around_off", "memcached:run", 1106168, 36, "002 patch1-6"),
    ("002-look-around", "brd_look_around_on", "memcached:run", 1147697, 36, "002 patch1-7"),
    ("mglru-vs-classic-memcached", "classic", "memcached:run", 476771, 36, "v7 5.17-rc2"),
    ("mglru-vs-classic-memcached", "mglru", "memcached:run", 972526, 36, "v7 MGLRU"),
    ("mglru-vs-classic-fio", "classic", "fio", 2242e3, 72, "v7 5.17-rc2"),
    ("mglru-vs-classic-fio", "mglru", "fio", 3323e3, 72, "v7 MGLRU"),
    ("003-batch-aging", "off", "fio", 2247109, 16, "003 without"),
    ("003-batch-aging", "on", "fio", 2417858, 16, "003 with"),
]


def threads(variant, workload):
    """The workload's own tasks in the run: `NAME/...`, memtier's `client` tasks aside."""
    name = workload.split(":")[0]
    tasks = variant.get("sched", {}).get("tasks", [])
    return sum(
        1
        for t in tasks
        if t["task"].startswith(name + "/") and "client" not in t["task"].split("/", 1)[1]
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="the file `reclaimsim validate --json` wrote")
    args = ap.parse_args()
    try:
        with open(args.json) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"{args.json}: {e}")
    runs = {
        (s["scenario"], v["name"]): v for s in doc.get("scenarios", []) for v in s["variants"]
    }
    print("| scenario, variant | workload | seed | seed us | model threads | model ops/s | model us | model/seed |")
    print("|---|---|---|---|---|---|---|---|")
    for scenario, variant, workload, ops, n, source in SEED:
        v = runs.get((scenario, variant))
        if v is None or workload not in v["workloads"]:
            continue
        m_ops = v["workloads"][workload]["ops_per_sec"]
        m_threads = threads(v, workload)
        if not m_ops or not m_threads:
            continue
        seed_us = n / ops * 1e6
        model_us = m_threads / m_ops * 1e6
        print(
            f"| {scenario}, {variant} | {workload} | {source}: {ops / 1e3:,.0f}k / {n} "
            f"| {seed_us:.1f} | {m_threads} | {m_ops / 1e3:,.0f}k | {model_us:.1f} "
            f"| {model_us / seed_us:.2f} |"
        )


if __name__ == "__main__":
    main()
