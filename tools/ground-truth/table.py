#!/usr/bin/env python3
"""The report's tables: guest runs (logs of run.sh) and model results (compare/sweep
JSON), in the same normalized terms.

  table.py --kernel LOG... --model RESULTS.json...

Columns: anon memcg's share of pgsteal (steady window, and whole run) and of pgscan; swap-ins per 1000 pages reclaimed;
the file memcg's page cache (MiB, of 144) and the anon memcg's anon (MiB, of 590) while
both run; generations the anon and file memcgs aged (MGLRU) per 1000 pages reclaimed;
the anon and file rates; and two hotness measures:
  H = (anon accesses per anon page per s) / (file reads per file page per s)
  R = (anon accesses per anon page per s) / (pages reclaimed per s / pages of memory)
For the guest: the steady window (snapshot 'warm' to 'end', both still running); for the
model: the whole run (fio starts when the anon region is resident).
"""
import json
import subprocess
import sys
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MEM_PAGES = 603 * 256
ANON_PAGES = 590 * 256
FILE_PAGES = 4 * 36 * 256


def kernel_rows(logs):
    sys.path.insert(0, HERE)
    out = subprocess.run([sys.executable, os.path.join(HERE, "summarize.py"), *logs, "--json", "/dev/stdout"],
                         capture_output=True, text=True).stdout
    js = json.loads(out[out.index("\n["):]) if "\n[" in out else json.loads(out[out.index("["):])
    rows = []
    for s in js:
        r = s["steady"]
        a, f = r["anon"], r["file"]
        p = s["params"]
        steal = a["pgsteal"] + f["pgsteal"]
        secs = r["seconds"]
        ser = s["rates"].get("anon_series", [])
        fser = s["rates"].get("fileread_series", [])
        # rates over the steady window: the interval lines after 'warm' (skip the last,
        # which overlaps the other program's exit)
        w = float(p.get("warm", 30))
        ar = [v for t, v in ser if t > w + 5][:-1] or [v for _, v in ser]
        fr = [v for t, v in fser if t > w + 5][:-1] or [v for _, v in fser]
        arate, frate = sum(ar) / len(ar), sum(fr) / len(fr)
        rrate = steal / secs
        rows.append({
            "source": "kernel", "name": os.path.basename(s["log"]).replace(".log", ""),
            "policy": "mglru" if s["lru_gen_enabled"] != "0x0000" else "classic",
            "anon_steal_share": a["pgsteal_share"], "anon_scan_share": a["pgscan_share"],
            "anon_steal_share_run": s["run"]["anon"]["pgsteal_share"],
            "pswpin_per_1k_steal": round(1000 * r["vmstat"]["pswpin"] / steal),
            # the end snapshot if both still ran then (older runs took it after anon's
            # exit), else the warm one
            "file_mib": f["resident_mib"]["file"],
            "anon_mib": a["resident_mib"]["anon"],
            "anon_gens_per_1k_steal": round(1000 * (a["max_seq"][1] - a["max_seq"][0]) / steal, 3) if "max_seq" in a else None,
            "file_gens_per_1k_steal": round(1000 * (f["max_seq"][1] - f["max_seq"][0]) / steal, 3) if "max_seq" in f else None,
            "anon_rate": round(arate), "file_rate": round(frate),
            "H": round((arate / ANON_PAGES) / (frate / FILE_PAGES), 1),
            "R": round((arate / ANON_PAGES) / (rrate / MEM_PAGES), 1),
            "spin": p.get("anon_spin", "0"), "mode": p.get("anon_mode"),
        })
    return rows


def model_rows(paths):
    rows = []
    for path in paths:
        d = json.load(open(path))
        pts = d["points"] if "points" in d else [{"value": "2 (default)", "variants": d["variants"]}]
        for pt in pts:
            for v in pt["variants"]:
                st = lambda s, k: s.get(k + "_kswapd", 0) + s.get(k + "_direct", 0)
                a, f = v["memcgs"]["/anon"]["memory.stat"], v["memcgs"]["/file"]["memory.stat"]
                steal = st(a, "pgsteal") + st(f, "pgsteal")
                scan = st(a, "pgscan") + st(f, "pgscan")
                fio_start = 0.3
                secs = v["virtual_time_s"] - fio_start
                ts = [x for x in v.get("timeseries", []) if x["time_s"] >= v["virtual_time_s"] / 2]
                fl = sum(sum(x["lru"]["/file"][2:4]) for x in ts) / len(ts) / 256 if ts else None
                al = sum(sum(x["lru"]["/anon"][0:2]) for x in ts) / len(ts) / 256 if ts else None
                arate = v["workloads"]["anon"]["ops_per_sec"]
                frate = v["workloads"]["fio"]["ops_per_sec"]
                lg = v.get("lru_gen", {})
                seq = lambda g: lg[g][0]["max_seq"] - 3 if g in lg else None
                rows.append({
                    "source": "model", "name": f"access_hit={pt['value']}", "policy": v["name"],
                    "anon_steal_share": round(st(a, "pgsteal") / steal, 3) if steal else None,
                    "anon_steal_share_run": round(st(a, "pgsteal") / steal, 3) if steal else None,
                    "anon_scan_share": round(st(a, "pgscan") / scan, 3) if scan else None,
                    "pswpin_per_1k_steal": round(1000 * v["vmstat"].get("pswpin", 0) / steal) if steal else None,
                    "file_mib": round(fl, 1) if fl is not None else None,
                    "anon_mib": round(al, 1) if al is not None else None,
                    "anon_gens_per_1k_steal": round(1000 * seq("/anon") / steal, 3) if seq("/anon") is not None and steal else None,
                    "file_gens_per_1k_steal": round(1000 * seq("/file") / steal, 3) if seq("/file") is not None and steal else None,
                    "anon_rate": round(arate), "file_rate": round(frate),
                    "H": round((arate / ANON_PAGES) / (frate / FILE_PAGES), 1) if frate else None,
                    "R": round((arate / ANON_PAGES) / (steal / secs / MEM_PAGES), 1) if steal else None,
                })
    return rows


def main():
    args = sys.argv[1:]
    kl, ml, cur = [], [], None
    for a in args:
        if a == "--kernel":
            cur = kl
        elif a == "--model":
            cur = ml
        else:
            cur.append(a)
    rows = (kernel_rows(kl) if kl else []) + (model_rows(ml) if ml else [])
    cols = ["source", "name", "policy", "anon_steal_share", "anon_steal_share_run", "anon_scan_share", "pswpin_per_1k_steal",
            "file_mib", "anon_mib", "anon_gens_per_1k_steal", "file_gens_per_1k_steal", "anon_rate",
            "file_rate", "H", "R"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join("-" if r.get(c) is None else str(r.get(c)) for c in cols) + " |")


main()
