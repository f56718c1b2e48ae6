#!/usr/bin/env python3
"""Each seed headline against scale: reads the JSON files `reclaimsim validate --json`
wrote at several scales (`--set scale=K`; a run without it is scale 1) and prints one
Markdown row per expectation, the model's change at each scale beside the seed's.

    reclaimsim validate -q --json v1.json
    reclaimsim validate -q --allow-long --set scale=4 --json v4.json
    python3 tools/scale-table.py v1.json v4.json

A headline has settled when its change at the two largest scales differs by no more
than --settled points (default 3)."""

import argparse
import json
import sys


def scale_of(doc):
    """The scale the runs in a validate JSON were made at (each variant records it)."""
    scales = {v.get("scale", 1.0) for s in doc["scenarios"] for v in s["variants"]}
    if len(scales) != 1:
        sys.exit(f"runs at several scales in one file: {sorted(scales)}")
    return scales.pop()


def rows(doc):
    """(scenario, metric, from, to, expected) -> model change, in file order."""
    out = {}
    for s in doc["scenarios"]:
        for e in s["expectations"]:
            key = (s["scenario"], e["metric"], e["from"], e["to"], tuple(e["expected"]))
            out[key] = e.get("change")
    return out


def pct(x):
    return "-" if x is None else f"{x * 100:+.1f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="validate --json files, one per scale")
    ap.add_argument("--settled", type=float, default=3.0, help="points (default 3)")
    a = ap.parse_args()
    runs = sorted((scale_of(d), rows(d)) for d in (json.load(open(f)) for f in a.files))
    scales = [k for k, _ in runs]
    head = ["scenario", "metric", "from -> to", "seed"] + [f"x{k:g}" for k in scales]
    print("| " + " | ".join(head + ["settled"]) + " |")
    print("|" + "---|" * (len(head) + 1))
    for key in runs[0][1]:
        scen, metric, frm, to, exp = key
        seed = pct(exp[0]) if exp[0] == exp[1] else f"{pct(exp[0])}..{pct(exp[1])}"
        ch = [r.get(key) for _, r in runs]
        last = [c for c in ch[-2:] if c is not None]
        settled = "-"
        if len(ch) >= 2 and len(last) == 2:
            settled = "yes" if abs(last[1] - last[0]) * 100 <= a.settled else "no"
        cells = [scen, metric.replace('"', ""), f"{frm} -> {to}", seed]
        print("| " + " | ".join(cells + [pct(c) for c in ch] + [settled]) + " |")


if __name__ == "__main__":
    main()
