#!/usr/bin/env python3
"""Per-memcg reclaim split from `reclaimsim compare --json` or `sweep --json` results, in
the terms summarize.py uses for the guest.

  model_summary.py RESULTS.json
"""
import json
import sys


def row(v):
    m, vm = v["memcgs"], v["vmstat"]
    a, f = m["/anon"]["memory.stat"], m["/file"]["memory.stat"]
    scan = lambda s: s.get("pgscan_kswapd", 0) + s.get("pgscan_direct", 0)
    steal = lambda s: s.get("pgsteal_kswapd", 0) + s.get("pgsteal_direct", 0)
    st, sc = steal(a) + steal(f), scan(a) + scan(f)
    lru = lambda s, t: (s.get("active_" + t, 0) + s.get("inactive_" + t, 0)) / 2**20
    r = {
        "variant": v["name"],
        "virtual_s": round(v["virtual_time_s"], 2),
        "anon_steal_share": round(steal(a) / st, 3) if st else None,
        "anon_scan_share": round(scan(a) / sc, 3) if sc else None,
        "anon_pgscan": scan(a), "anon_pgsteal": steal(a),
        "file_pgscan": scan(f), "file_pgsteal": steal(f),
        "pswpin": vm.get("pswpin"), "pswpout": vm.get("pswpout"),
        "refault_file": vm.get("workingset_refault_file"),
        "refault_anon": vm.get("workingset_refault_anon"),
        "file_majfault": f.get("pgmajfault"),
        "anon_aging": a.get("lru_gen_aging"), "file_aging": f.get("lru_gen_aging"),
        "aging_skipped": vm.get("lru_gen_aging_skipped"),
        "allocstall": vm.get("allocstall_normal"),
        "pgscan_kswapd": vm.get("pgscan_kswapd"), "pgscan_direct": vm.get("pgscan_direct"),
        "anon_lru_mib_end": round(lru(a, "anon"), 1), "file_lru_mib_end": round(lru(f, "file"), 1),
        "ops_per_sec": {k: round(w["ops_per_sec"]) for k, w in v["workloads"].items()},
    }
    lg = v.get("lru_gen", {})
    for g in ("/anon", "/file"):
        if g in lg:
            r[g + " max_seq"] = lg[g][0]["max_seq"]
    ts = v.get("timeseries") or []
    if ts:
        # file memcg's page cache over the second half (steady state)
        half = [s for s in ts if s["time_s"] >= ts[-1]["time_s"] / 2]
        fl = [sum(s["lru"]["/file"][2:4]) * 4096 / 2**20 for s in half]
        al = [sum(s["lru"]["/anon"][0:2]) * 4096 / 2**20 for s in half]
        r["file_lru_mib_2nd_half_mean"] = round(sum(fl) / len(fl), 1)
        r["anon_lru_mib_2nd_half_mean"] = round(sum(al) / len(al), 1)
    return r


d = json.load(open(sys.argv[1]))
if "points" in d:
    for p in d["points"]:
        for v in p["variants"]:
            print(json.dumps({"value": p["value"], **row(v)}))
else:
    for v in d["variants"]:
        print(json.dumps(row(v)))
