"""Results as pandas DataFrames, made from the JSON the Rust library writes (the same
document as ``reclaimsim run/compare --json``). Each frame is built on first use."""

from __future__ import annotations

import functools
import json
import os
from typing import Any, Union

import pandas as pd

from . import _core

LRU_LISTS = ["inactive_anon", "active_anon", "inactive_file", "active_file"]


def _frame(records: list[dict[str, Any]], columns: list[str], index: list[str],
           variants: list[str]) -> pd.DataFrame:
    """A frame of records with these columns (also when there are none), indexed. Its
    ``variant`` column is an ordered categorical in the scenario's order (``variants``),
    so that sorting, ``groupby`` and ``unstack`` keep that order, not the alphabet's."""
    df = pd.DataFrame.from_records(records, columns=columns)
    df["variant"] = pd.Categorical(df["variant"], categories=variants, ordered=True)
    return df.set_index(index) if index else df


def _wide(variants: list[dict[str, Any]], get: Any, index_name: str) -> pd.DataFrame:
    """One column per variant of a counter map; missing counters are 0."""
    df = pd.DataFrame({v["name"]: pd.Series(get(v), dtype="int64") for v in variants})
    df = df.fillna(0).astype("int64").sort_index()
    df.index.name = index_name
    df.columns.name = "variant"
    return df


class RunResult:
    """The results of :func:`reclaimsim.run` or :func:`reclaimsim.compare`.

    ``raw`` is the results document as a dict (``reclaimsim run --json``'s JSON); the
    properties are pandas DataFrames made from it. Every frame has the variant in it
    (a ``run`` has one, named ``"base"`` or after its variant), so frames of a run and of
    a compare are used alike.
    """

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw: dict[str, Any] = raw

    @property
    def scenario(self) -> str:
        """The scenario's name."""
        return self.raw["scenario"]

    @property
    def seed(self) -> int:
        """The seed the runs used."""
        return self.raw["seed"]

    @property
    def description(self) -> str:
        """The scenario's description."""
        return self.raw.get("description", "")

    @property
    def variants(self) -> list[str]:
        """The variants' names, in run order (the first is what changes are against)."""
        return [v["name"] for v in self.raw["variants"]]

    def __repr__(self) -> str:
        return f"<reclaimsim.RunResult {self.scenario!r} seed={self.seed} variants={self.variants}>"

    @functools.cached_property
    def vmstat(self) -> pd.DataFrame:
        """/proc/vmstat counters: one row per counter, one column per variant."""
        return _wide(self.raw["variants"], lambda v: v["vmstat"], "counter")

    @functools.cached_property
    def model_counters(self) -> pd.DataFrame:
        """The model's own global counters (lru_gen_*, the throttles): one row per counter,
        one column per variant."""
        return _wide(self.raw["variants"], lambda v: v.get("model_counters", {}), "counter")

    def _memcg_frame(self, part: str) -> pd.DataFrame:
        records = [
            {"variant": v["name"], "memcg": path, **m.get(part, {})}
            for v in self.raw["variants"]
            for path, m in v["memcgs"].items()
        ]
        # In the order the kernel prints them (memory.stat, memory.events), as the JSON
        # keeps it.
        keys = list(dict.fromkeys(k for r in records for k in r if k not in ("variant", "memcg")))
        df = _frame(records, ["variant", "memcg", *keys], ["variant", "memcg"], self.variants)
        return df.fillna(0).astype("int64")

    @functools.cached_property
    def memory_stat(self) -> pd.DataFrame:
        """Each memcg's memory.stat (hierarchical, as cgroup v2): rows (variant, memcg),
        one column per counter."""
        return self._memcg_frame("memory.stat")

    @functools.cached_property
    def memcg_model_counters(self) -> pd.DataFrame:
        """Each memcg's counts outside memory.stat (hierarchical): counters 6.1 keeps only
        globally as the model attributes them (pswpin, pswpout, ...) and the model's own
        (lru_gen_aging, ...): rows (variant, memcg), one column per counter."""
        return self._memcg_frame("model_counters")

    @functools.cached_property
    def memory_events(self) -> pd.DataFrame:
        """Each memcg's memory.events (hierarchical: its own events and its
        descendants'): rows (variant, memcg), one column per event."""
        return self._memcg_frame("memory.events")

    @functools.cached_property
    def memory_events_local(self) -> pd.DataFrame:
        """Each memcg's memory.events.local (its own events only): rows (variant, memcg),
        one column per event."""
        return self._memcg_frame("memory.events.local")

    @functools.cached_property
    def memory_swap_events(self) -> pd.DataFrame:
        """Each memcg's memory.swap.events (hierarchical): ``max`` (swap charges that met
        memory.swap.max) and ``fail`` (swap-outs that got no slot); rows (variant, memcg)."""
        return self._memcg_frame("memory.swap.events")

    @functools.cached_property
    def workloads(self) -> pd.DataFrame:
        """Per workload (or ``workload:phase``): ops, ops/s, MiB/s, measured seconds and
        latency percentiles in ns; rows (variant, workload)."""
        records = [
            {
                "variant": v["name"],
                "workload": name,
                "ops": w["ops"],
                "ops_per_sec": w["ops_per_sec"],
                "mib_per_sec": w["mib_per_sec"],
                "measured_s": w["measured_s"],
                "p50_ns": w["latency_ns"]["p50"],
                "p99_ns": w["latency_ns"]["p99"],
                "max_ns": w["latency_ns"]["max"],
            }
            for v in self.raw["variants"]
            for name, w in v["workloads"].items()
        ]
        cols = ["variant", "workload", "ops", "ops_per_sec", "mib_per_sec", "measured_s",
                "p50_ns", "p99_ns", "max_ns"]
        return _frame(records, cols, ["variant", "workload"], self.variants)

    @functools.cached_property
    def locks(self) -> pd.DataFrame:
        """Per lock class (totals over its instances): rows (variant, lock)."""
        cols = ["instances", "acquisitions", "contended", "wait_ns", "hold_ns",
                "spin_share", "relocks", "max_wait_ns"]
        records = [
            {"variant": v["name"], "lock": name, **{c: lock[c] for c in cols}}
            for v in self.raw["variants"]
            for name, lock in v["locks"].items()
        ]
        return _frame(records, ["variant", "lock", *cols], ["variant", "lock"],
                      self.variants)

    @functools.cached_property
    def lock_sites(self) -> pd.DataFrame:
        """Per lock class and call site: acquisitions, wait and hold ns; rows
        (variant, lock, site)."""
        records = [
            {"variant": v["name"], "lock": name, "site": site, **s}
            for v in self.raw["variants"]
            for name, lock in v["locks"].items()
            for site, s in lock["sites"].items()
        ]
        cols = ["variant", "lock", "site", "acquisitions", "wait_ns", "hold_ns"]
        return _frame(records, cols, ["variant", "lock", "site"], self.variants)

    @functools.cached_property
    def kswapd_profile(self) -> pd.DataFrame:
        """kswapd's virtual CPU time (ns) by category, side by side: one row per category,
        one column per variant (the columns' sums are each variant's total)."""
        return _wide(self.raw["variants"], lambda v: v["kswapd_profile"]["categories"], "category")

    @functools.cached_property
    def task_profile(self) -> pd.DataFrame:
        """Each task's virtual CPU time (ns) by category, the scheduler's tasks
        (``workload/N``, ``workload/clientN``, ``kswapdN``, ``flusher``): a row per
        (variant, task, category) with ``ns`` and ``memstall_ns``, the part spent in a
        memory stall as PSI counts one. Categories are kswapd's, with ``work`` (the
        workload's own work per operation) and ``irq`` (flush IPIs handled)."""
        records = [
            {"variant": v["name"], "task": t["task"], "category": c, "ns": ns,
             "memstall_ns": t["memstall"]["categories"].get(c, 0)}
            for v in self.raw["variants"]
            for t in v["sched"]["tasks"]
            for c, ns in t.get("profile", {"categories": {}})["categories"].items()
        ]
        cols = ["variant", "task", "category", "ns", "memstall_ns"]
        return _frame(records, cols, ["variant", "task", "category"], self.variants).sort_index()

    @functools.cached_property
    def timeseries(self) -> pd.DataFrame:
        """Samples over virtual time (every ``sample_interval``, or without it 100 to 200
        over the run), one row per (variant, sample, memcg): free pages (machine-wide) and
        the memcg's four LRU lists in pages."""
        records = [
            {"variant": v["name"], "time_s": s["time_s"], "memcg": path,
             "free_pages": s["free_pages"], **dict(zip(LRU_LISTS, lru))}
            for v in self.raw["variants"]
            for s in v["timeseries"]
            for path, lru in s["lru"].items()
        ]
        cols = ["variant", "time_s", "memcg", "free_pages", *LRU_LISTS]
        return _frame(records, cols, [], self.variants)

    @functools.cached_property
    def free_pages(self) -> pd.DataFrame:
        """Free pages over virtual time: index time_s, one column per variant."""
        records = [
            {"variant": v["name"], "time_s": s["time_s"], "free_pages": s["free_pages"]}
            for v in self.raw["variants"]
            for s in v["timeseries"]
        ]
        df = _frame(records, ["variant", "time_s", "free_pages"], [], self.variants)
        wide = df.pivot(index="time_s", columns="variant", values="free_pages")
        return wide.reindex(columns=[v for v in self.variants if v in wide.columns])

    @functools.cached_property
    def lru_gen(self) -> pd.DataFrame:
        """MGLRU at the end of each run: one row per generation of each lruvec
        (variant, memcg, node, seq) with its age and anon/file pages, and the lruvec's
        max_seq and min_seq. Empty for the classic LRU."""
        records = [
            {"variant": v["name"], "memcg": path, "node": st["node"], "seq": g["seq"],
             "age_ms": g["age_ms"], "anon": g["anon"], "file": g["file"],
             "max_seq": st["max_seq"], "min_seq_anon": st["min_seq"][0],
             "min_seq_file": st["min_seq"][1]}
            for v in self.raw["variants"]
            for path, states in v.get("lru_gen", {}).items()
            for st in states
            for g in st["gens"]
        ]
        cols = ["variant", "memcg", "node", "seq", "age_ms", "anon", "file", "max_seq",
                "min_seq_anon", "min_seq_file"]
        return _frame(records, cols, ["variant", "memcg", "node", "seq"], self.variants)

    @functools.cached_property
    def lru_gen_timeseries(self) -> pd.DataFrame:
        """MGLRU generations over virtual time: one row per (variant, sample, memcg, node,
        generation) with its age and anon/file pages. Empty for the classic LRU."""
        records = [
            {"variant": v["name"], "time_s": s["time_s"], "memcg": path,
             "node": view["node"], "seq": g["seq"], "age_ms": g["age_ms"],
             "anon": g["anon"], "file": g["file"]}
            for v in self.raw["variants"]
            for s in v["timeseries"]
            for path, views in (s.get("lru_gen") or {}).items()
            for view in views
            for g in view["gens"]
        ]
        cols = ["variant", "time_s", "memcg", "node", "seq", "age_ms", "anon", "file"]
        return _frame(records, cols, [], self.variants)

    @functools.cached_property
    def pressure(self) -> pd.DataFrame:
        """Memory pressure at the end of each run, as 6.1's psi_show prints it: one row per
        (variant, memcg, kind) with kind ``some`` or ``full``: avg10, avg60, avg300 (%) and
        total (stall µs). The memcg ``system`` is /proc/pressure/memory (the root's)."""
        def lines(v: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
            out = [("system", v.get("pressure") or {})]
            out += [(path, m.get("memory.pressure") or {})
                    for path, m in v["memcgs"].items() if path != "/"]
            return out
        records = [
            {"variant": v["name"], "memcg": path, "kind": kind, **p.get(kind, {})}
            for v in self.raw["variants"]
            for path, p in lines(v)
            for kind in ("some", "full")
        ]
        cols = ["variant", "memcg", "kind", "avg10", "avg60", "avg300", "total"]
        return _frame(records, cols, ["variant", "memcg", "kind"], self.variants)

    @functools.cached_property
    def pressure_timeseries(self) -> pd.DataFrame:
        """Memory pressure over virtual time: one row per (variant, sample, memcg) with the
        ``some`` and ``full`` totals so far (µs); the memcg ``/`` is system-wide."""
        records = [
            {"variant": v["name"], "time_s": s["time_s"], "memcg": path,
             "some": p[0], "full": p[1]}
            for v in self.raw["variants"]
            for s in v["timeseries"]
            for path, p in (s.get("pressure") or {}).items()
        ]
        cols = ["variant", "time_s", "memcg", "some", "full"]
        return _frame(records, cols, [], self.variants)

    @functools.cached_property
    def alloc_stall(self) -> pd.DataFrame:
        """Allocation stalls (direct reclaim, try_to_free_pages calls): how many, and the
        p50/p99/max ns each took; one row per variant."""
        records = [
            {"variant": v["name"], "calls": v["alloc_stall"]["calls"],
             **{f"{q}_ns": v["alloc_stall"]["latency_ns"][q] for q in ("p50", "p99", "max")}}
            for v in self.raw["variants"]
        ]
        cols = ["variant", "calls", "p50_ns", "p99_ns", "max_ns"]
        return _frame(records, cols, ["variant"], self.variants)

    @functools.cached_property
    def oom_kills(self) -> pd.DataFrame:
        """The kernel's OOM kills (the OOM timeline): virtual time, scope (``global`` or the
        memcg), the victim's workload and memcg, and ``stall_s``, the stall before the
        kill (None when kswapd called the OOM killer)."""
        records = [{"variant": v["name"], **k} for v in self.raw["variants"] for k in v["oom_kills"]]
        columns = ["variant", "time_s", "scope", "victim", "victim_memcg", "stall_s"]
        return _frame(records, columns, [], self.variants)

    def to_json(self, path: Union[str, "os.PathLike[str]", None] = None) -> str:
        """The results document as JSON (``reclaimsim report`` reads it); written to
        ``path`` too when given."""
        return _dump(self.raw, path)

    def to_html(self, path: Union[str, "os.PathLike[str]", None] = None) -> str:
        """The HTML report (charts; one self-contained file, as ``reclaimsim compare
        --html`` writes); written to ``path`` too when given."""
        return _html(self.raw, path)


def _dump(raw: dict[str, Any], path: Union[str, "os.PathLike[str]", None]) -> str:
    text = json.dumps(raw, indent=2)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return text


def _html(raw: dict[str, Any], path: Union[str, "os.PathLike[str]", None]) -> str:
    html = _core.html_report(json.dumps(raw))
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
    return html
