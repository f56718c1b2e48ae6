"""Host cost of a Python policy's hook calls: the same run with the Rust FIFO and with
the same FIFO in Python; the wall-time difference per hook call."""
import sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "crates/reclaimsim-py/tests"))
import reclaimsim
from test_policy import FIO, Fifo

text = FIO.replace('"100ms"', '"1s"')
best = {}
for _ in range(3):
    r = reclaimsim.compare(text, policy=Fifo)
    for v in r.raw["variants"]:
        best[v["name"]] = min(best.get(v["name"], 1e9), v["wall_s"])
        if v["name"] == "python":
            p = v["plugin"]
calls = p["folio_added"] + p["folio_accessed"] + p["folio_removed"] + p["evict_folios"]
events = p["folio_added"] + p["folio_accessed"] + p["folio_removed"]
print(f"wall s, best of 3: {best}")
print(f"hook calls: {calls} ({p})")
print(f"python - rust: {(best['python'] - best['rust']) / calls * 1e9:.0f} ns per hook call")
