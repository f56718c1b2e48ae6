"""Writes a zipf-distributed trace in libCacheSim's oracleGeneral format (with each
record's next access time, so Belady works too), for `reclaimsim trace`.

    python3 tools/gen_zipf_trace.py OUT --requests 10000000 --objects 1000000 \
        --alpha 0.9 [--size 4096] [--rate 100000] [--seed 1]

Object i (1-based) is requested with probability proportional to 1 / i^alpha; every
object is --size bytes; --rate requests per trace second. Needs numpy.
"""
import argparse

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--requests", type=int, default=1_000_000)
    p.add_argument("--objects", type=int, default=100_000)
    p.add_argument("--alpha", type=float, default=0.9)
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--rate", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    cdf = np.cumsum(1.0 / np.arange(1, a.objects + 1) ** a.alpha)
    ids = np.searchsorted(cdf / cdf[-1], np.random.default_rng(a.seed).random(a.requests)) + 1
    # Each request's next access: the index of the next request for the same object.
    order = np.argsort(ids, kind="stable")
    same = ids[order[1:]] == ids[order[:-1]]
    nxt = np.full(a.requests, -1, dtype=np.int64)
    nxt[order[:-1][same]] = order[1:][same]
    rec = np.zeros(a.requests, dtype=[("t", "<u4"), ("id", "<u8"), ("size", "<u4"),
                                      ("next", "<i8")])
    rec["t"] = np.arange(a.requests) // a.rate
    rec["id"], rec["size"], rec["next"] = ids, a.size, nxt
    rec.tofile(a.out)


if __name__ == "__main__":
    main()
