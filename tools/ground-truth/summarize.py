#!/usr/bin/env python3
"""Summarizes guest logs of run.sh: per memcg reclaim shares, swap and file misses, the
anon memcg's aging (lru_gen max_seq), and the workloads' rates, over the whole run
(start -> end) and the steady state (warm -> end).

  summarize.py LOG... [--json OUT]
"""
import json
import re
import sys


def parse(path):
    snaps, cur, lg, rates, params = {}, None, None, {}, {}
    enabled = None
    for raw in open(path, errors="replace"):
        line = raw.rstrip("\r\n")
        m = re.match(r"=== PARAMS (.*)", line)
        if m:
            params = dict(kv.split("=", 1) for kv in m.group(1).split())
        m = re.match(r"=== lru_gen/enabled: (\S+)", line)
        if m:
            enabled = m.group(1)
        m = re.match(r"=== SNAP (\w+) uptime ([\d.]+)", line)
        if m:
            cur = {"uptime": float(m.group(2)), "vmstat": {}, "memcg": {}, "lru_gen": {}, "meminfo": {},
                   "after_exit": "anon" in rates}
            snaps[m.group(1)] = cur
            lg = None
            continue
        if line.startswith("=== END"):
            cur = None
            continue
        m = re.match(r"(anon|fileread): RESULT .* rate=(\d+)/s", line)
        if m:
            rates[m.group(1)] = int(m.group(2))
        m = re.match(r"(anon|fileread): t=(\d+) s (\d+)", line)
        if m:
            rates.setdefault(m.group(1) + "_series", []).append((int(m.group(2)), int(m.group(3))))
        if cur is None:
            continue
        p = line.split()
        if len(p) == 3 and p[0] == "vmstat":
            cur["vmstat"][p[1]] = int(p[2])
        elif len(p) == 4 and p[0] == "memcg" and p[1] in ("anon", "file"):
            cur["memcg"].setdefault(p[1], {})[p[2]] = int(p[3])
        elif len(p) >= 3 and p[0] == "meminfo":
            cur["meminfo"][p[1].rstrip(":")] = int(p[2])
        elif len(p) == 3 and p[0] == "memcg" and p[2].startswith("/"):
            lg = p[2]
            cur["lru_gen"][lg] = []
        elif lg and len(p) == 4 and p[0].isdigit():
            # gen seq, age_ms, anon, file (node lines skipped)
            cur["lru_gen"][lg].append([int(p[0]), int(p[1]), int(p[2]), int(p[3])])
    return params, enabled, snaps, rates


def delta(a, b, k):
    return b.get(k, 0) - a.get(k, 0)


def summary(path):
    params, enabled, snaps, rates = parse(path)
    out = {"log": path, "params": params, "lru_gen_enabled": enabled, "rates": {}}
    for name, (a, b) in {"run": ("start", "end"), "steady": ("warm", "end")}.items():
        if a not in snaps or b not in snaps:
            continue
        A, B = snaps[a], snaps[b]
        r = {"seconds": round(B["uptime"] - A["uptime"], 1)}
        v = {k: delta(A["vmstat"], B["vmstat"], k) for k in B["vmstat"]}
        r["vmstat"] = {k: v[k] for k in (
            "pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgscan_anon",
            "pgscan_file", "pgsteal_anon", "pgsteal_file", "pswpin", "pswpout", "allocstall_normal",
            "allocstall_movable", "pgpgin", "pgmajfault", "workingset_refault_anon",
            "workingset_refault_file") if k in v}
        tot_scan = sum(delta(A["memcg"][g], B["memcg"][g], "pgscan") for g in ("anon", "file"))
        tot_steal = sum(delta(A["memcg"][g], B["memcg"][g], "pgsteal") for g in ("anon", "file"))
        for g in ("anon", "file"):
            ma, mb = A["memcg"][g], B["memcg"][g]
            d = {k: delta(ma, mb, k) for k in ("pgscan", "pgsteal", "pgscan_kswapd", "pgscan_direct",
                                                "pgsteal_kswapd", "pgsteal_direct", "pgmajfault",
                                                "workingset_refault_anon", "workingset_refault_file",
                                                "workingset_activate_anon", "workingset_activate_file",
                                                "pgrefill", "pgactivate", "pgdeactivate")}
            d["pgscan_share"] = round(d["pgscan"] / tot_scan, 3) if tot_scan else None
            d["pgsteal_share"] = round(d["pgsteal"] / tot_steal, 3) if tot_steal else None
            for k in ("anon", "file"):
                d[k + "_mib_end"] = round(mb.get(k, 0) / 2**20, 1)
                d[k + "_mib_start"] = round(ma.get(k, 0) / 2**20, 1)
            d["swap_mib_end"] = round(mb.get("swap.current", 0) / 2**20, 1)
            path_ = "/" + g
            ga, gb = A["lru_gen"].get(path_, []), B["lru_gen"].get(path_, [])
            if ga and gb:
                d["max_seq"] = [max(x[0] for x in ga), max(x[0] for x in gb)]
                d["gens_end"] = gb
            r[g] = d
        # resident sizes while both ran: the end snapshot, unless the programs had
        # already exited (older runs), then the warm one
        live = B if not B["after_exit"] else A
        for g in ("anon", "file"):
            r[g]["resident_mib"] = {k: round(live["memcg"][g].get(k, 0) / 2**20, 1) for k in ("anon", "file")}
            r[g]["resident_from"] = b if live is B else a
        out[name] = r
    out["rates"] = {k: v for k, v in rates.items()}
    return out


def main():
    args = sys.argv[1:]
    js = None
    if "--json" in args:
        i = args.index("--json")
        js = args[i + 1]
        del args[i:i + 2]
    res = [summary(p) for p in args]
    for s in res:
        print(f"== {s['log']}  lru_gen={s['lru_gen_enabled']}  rates={ {k: v for k, v in s['rates'].items() if not k.endswith('series')} }")
        for k in ("anon_series", "fileread_series"):
            if k in s["rates"]:
                print("  ", k, " ".join(str(v) for _, v in s["rates"][k]))
        for name in ("run", "steady"):
            if name not in s:
                continue
            r = s[name]
            print(f"  [{name}, {r['seconds']} s] vmstat {r['vmstat']}")
            for g in ("anon", "file"):
                d = r[g]
                print(f"    {g}: " + ", ".join(f"{k}={v}" for k, v in d.items() if k != "gens_end"))
    if js:
        json.dump(res, open(js, "w"), indent=1)


main()
