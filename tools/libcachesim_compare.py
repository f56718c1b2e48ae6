"""libCacheSim's policies on one trace and cache size, for `reclaimsim trace`.

Run by the CLI as `python3 -c SCRIPT REQUEST` (the script is built into the binary), or
by hand as `python3 tools/libcachesim_compare.py REQUEST`, REQUEST being JSON:
{"path", "format" (oracleGeneral, csv, txt), "cache_bytes", "ignore_obj_size",
"obj_id_col", "obj_size_col", "delimiter", "has_header"}. Prints `NAME<TAB>MISS_RATIO`
per policy: the byte miss ratio, or with ignore_obj_size the request miss ratio (objects
of one 4 KiB page, the cache in pages). Needs `pip install libcachesim` (0.3.5).
"""
import json
import sys

import libcachesim as lcs

PAGE = 4096
POLICIES = [("LRU", lcs.LRU), ("FIFO", lcs.FIFO), ("CLOCK", lcs.Clock), ("2Q", lcs.TwoQ),
            ("SLRU", lcs.SLRU), ("ARC", lcs.ARC), ("LIRS", lcs.LIRS),
            ("S3-FIFO", lcs.S3FIFO), ("SIEVE", lcs.Sieve)]


def csv_columns(req, params):
    """1-based csv columns: as given, else named by the header (time, obj_id, obj_size)."""
    header = []
    if req["has_header"] is not False and not req["path"].endswith(".zst"):
        with open(req["path"]) as f:
            header = [h.strip().lower() for h in f.readline().split(req["delimiter"] or ",")]
    named = {name: header.index(name) + 1 for name in ("time", "obj_id", "obj_size")
             if name in header}
    params.obj_id_field = req["obj_id_col"] or named.get("obj_id", 0)
    params.obj_size_field = req["obj_size_col"] or named.get("obj_size", 0)
    params.time_field = named.get("time", 0)
    if not params.obj_id_field:
        sys.exit("csv: no obj_id column (name one in the header or give --obj-id-col)")


def reader(req):
    params = lcs.ReaderInitParam(ignore_obj_size=req["ignore_obj_size"])
    kind = {"oracleGeneral": lcs.TraceType.ORACLE_GENERAL_TRACE,
            "csv": lcs.TraceType.CSV_TRACE, "txt": lcs.TraceType.PLAIN_TXT_TRACE}
    if req["format"] == "csv":
        params.has_header = req["has_header"] is not False
        params.has_header_set = True
        params.delimiter = req["delimiter"] or ","
        params.obj_id_is_num = False
        params.obj_id_is_num_set = True
        csv_columns(req, params)
    return lcs.TraceReader(req["path"], kind[req["format"]], params)


def main():
    req = json.loads(sys.argv[1])
    size = req["cache_bytes"] // PAGE if req["ignore_obj_size"] else req["cache_bytes"]
    column = 0 if req["ignore_obj_size"] else 1
    policies = POLICIES + [("Belady (optimal)", lcs.Belady)] * (req["format"] == "oracleGeneral")
    for name, policy in policies:
        ratios = policy(cache_size=size).process_trace(reader(req))
        print(f"{name}\t{ratios[column]:.6f}")


if __name__ == "__main__":
    main()
