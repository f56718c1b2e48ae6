"""Sweeps: every variant of a scenario at every point of a grid, each (point, variant)
one task, run on this machine's cores or on a Ray cluster. The gathered document is the
one ``reclaimsim sweep --json`` writes, whichever ran the tasks."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Union

import pandas as pd

from . import _core
from ._errors import RunError, ScenarioError
from ._results import RunResult, _dump, _html
from ._source import Scenario, literal, sets, source

#: A grid: dotted key -> values. A tuple of keys sets every one of them to each value
#: (like the CLI's repeated ``--key``); several entries make their Cartesian product.
Grid = Mapping[Union[str, Sequence[str]], Sequence[Any]]

#: One task: the arguments of ``_core.run`` for one variant at one point.
Task = tuple[str, str, list[str], Optional[int], str, bool]


def _show(x: Any) -> str:
    """A grid key or value as a message shows it: strings quoted, tuples of them too."""
    if isinstance(x, tuple):
        return "(" + ", ".join(_show(k) for k in x) + ")"
    return json.dumps(x) if isinstance(x, str) else repr(x)


def _points(grid: Grid) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """Each point's label, its key -> value (as set takes it) and key -> where in the grid
    that value is (``grid["machine.memory"][2] = "8XB"``), in grid order."""
    if not isinstance(grid, Mapping) or not grid:
        raise ScenarioError("grid: expected a non-empty dict of key -> values", field="grid",
                            detail="expected a non-empty dict of key -> values")
    axes = []
    for entry, values in grid.items():
        keys = (entry,) if isinstance(entry, str) else tuple(entry)
        if isinstance(values, (str, bytes)) or not list(values):
            detail = "expected a non-empty list of values"
            raise ScenarioError(f"grid {', '.join(keys)}: {detail}", field=", ".join(keys),
                                detail=detail, from_set=True)
        axes.append([(keys, literal(v), f"grid[{_show(entry)}][{i}] = {_show(v)}")
                     for i, v in enumerate(values)])
    points = []
    for combo in itertools.product(*axes):
        assigned = {k: v for keys, v, _ in combo for k in keys}
        if len(combo) == 1:
            label = combo[0][1]
        else:
            label = ", ".join(f"{'+'.join(keys)}={v}" for keys, v, _ in combo)
        points.append((label, assigned, {k: at for keys, _, at in combo for k in keys}))
    return points


def _grid_error(e: ScenarioError, origin: dict[str, str]) -> ScenarioError:
    """A point's error about a key the grid sets, naming the grid's key and value (the
    ones of ``origin``, key -> where in the grid) instead of ``--set KEY``."""
    keys = e.field.split(", ") if e.from_set else []
    at = list(dict.fromkeys(origin[k] for k in keys if k in origin))
    if not at:
        return e
    return ScenarioError(f"{'; '.join(at)}: {e.detail}", file=e.file, line=e.line,
                         field=e.field, detail=e.detail, from_set=True)


def _run_task(task: Task) -> dict[str, Any]:
    """Run one variant at one point: its results (the ``variants[0]`` of a run)."""
    text, file, task_sets, seed, variant, check = task
    raw = json.loads(_core.run(text, file, task_sets, seed, variant, check))
    return raw["variants"][0]


def _local(tasks: list[Task], workers: Optional[int]) -> list[dict[str, Any]]:
    """Tasks on this machine's cores (the runs release the GIL)."""
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return list(pool.map(_run_task, tasks))


def _ray(tasks: list[Task], address: Optional[str], workers: Optional[int]) -> list[dict[str, Any]]:
    """Tasks on a Ray cluster: the one at ``address``, or a local one started for them
    (with ``workers`` CPUs, default all) and stopped after."""
    try:
        import ray
    except ImportError:
        raise RunError("backend='ray' needs Ray: pip install 'ray>=2.5'") from None
    started = not ray.is_initialized()
    if started:
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1)(_run_task)
        refs = [remote.remote(t) for t in tasks]
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as e:
            raise RunError(str(getattr(e, "cause", e))) from None
    finally:
        if started:
            ray.shutdown()


def sweep(
    scenario: Scenario,
    grid: Grid,
    *,
    seed: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    backend: str = "local",
    address: Optional[str] = None,
    workers: Optional[int] = None,
    check: bool = False,
) -> "SweepResult":
    """Run every variant of the scenario at every point of ``grid``, as ``reclaimsim
    sweep`` does; each (point, variant) is one task.

    ``grid`` maps a dotted key (as ``set`` takes it) to its values; a tuple of keys sets
    every one of them to each value (the CLI's repeated ``--key``); several entries make
    their Cartesian product. ``backend="local"`` runs the tasks on this machine's cores
    (``workers`` threads, default all); ``backend="ray"`` on a Ray cluster: the one this
    process is connected to, else the one at ``address``, else a local one started for the
    sweep (``workers`` CPUs) and stopped after. Both give the same document (bar
    ``wall_s``) for the same seeds. Every point is checked before anything runs.
    ``seed``, ``set`` and ``check`` are as for :func:`reclaimsim.run`.
    """
    return run_sweep(scenario, grid, seed, sets(set), backend, address, workers, check)


def run_sweep(
    scenario: Scenario,
    grid: Grid,
    seed: Optional[int],
    base_sets: list[str],
    backend: str,
    address: Optional[str],
    workers: Optional[int],
    check: bool,
) -> "SweepResult":
    """``sweep`` with the overrides as ``KEY=VALUE`` strings, as the CLI takes them."""
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    text, file = source(scenario)
    points = _points(grid)
    keys = [k for entry in grid for k in ((entry,) if isinstance(entry, str) else entry)]
    # Every point is loaded (and checked) before anything runs.
    plans = []
    for label, assigned, origin in points:
        point_sets = base_sets + [f"{k}={v}" for k, v in assigned.items()]
        try:
            name, point_seed, variants = _core.inspect(text, file, point_sets, seed)
        except ScenarioError as e:
            raise _grid_error(e, origin) from None
        plans.append((label, assigned, point_sets, name, point_seed, variants))
    tasks: list[Task] = [
        (text, file, point_sets, seed, variant, check)
        for _, _, point_sets, _, _, variants in plans
        for variant in variants
    ]
    if backend == "local":
        results = iter(_local(tasks, workers))
    else:
        results = iter(_ray(tasks, address, workers))
    raw_points = []
    for label, assigned, _, _, _, variants in plans:
        point: dict[str, Any] = {"value": label, "variants": [next(results) for _ in variants]}
        if len(grid) > 1:
            point["values"] = assigned
        raw_points.append(point)
    raw = {"scenario": plans[0][3], "seed": plans[0][4], "keys": keys, "points": raw_points}
    return SweepResult(raw)


class SweepResult:
    """The results of :func:`reclaimsim.sweep`.

    ``raw`` is the document ``reclaimsim sweep --json`` writes: ``{"scenario", "seed",
    "keys", "points": [{"value", "variants": [...]}]}`` (a grid of several entries adds
    each point's ``"values"``). ``points`` is the summary frame; ``result(value)`` one
    point's full results, and ``frame(name)`` any :class:`RunResult` frame over all points.
    """

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw: dict[str, Any] = raw

    def __repr__(self) -> str:
        values = [p["value"] for p in self.raw["points"]]
        return f"<reclaimsim.SweepResult {self.raw['scenario']!r} keys={self.raw['keys']} values={values}>"

    @property
    def values(self) -> list[str]:
        """The points' labels, in grid order."""
        return [p["value"] for p in self.raw["points"]]

    def result(self, value: str) -> RunResult:
        """One point's results (every variant), as a :class:`RunResult`."""
        for p in self.raw["points"]:
            if p["value"] == str(value):
                raw = {"scenario": self.raw["scenario"], "seed": self.raw["seed"],
                       "variants": p["variants"]}
                return RunResult(raw)
        raise KeyError(f"no point {value!r} (there are: {', '.join(self.values)})")

    @property
    def points(self) -> pd.DataFrame:
        """One row per (value, variant), a column per metric of the library's registry
        (``reclaimsim.metric_info()``: throughput summed over workloads in ops/s and MiB/s,
        lock spin share, allocation stalls, pgscan, pgsteal, pswpin, refaults, kswapd CPU
        ns and virtual seconds), computed by the library as its reports compute them.
        Values keep the grid's order and variants the scenario's (ordered categoricals),
        also through ``unstack``."""
        records = []
        for p in self.raw["points"]:
            for v in p["variants"]:
                records.append({
                    "value": p["value"], "variant": v["name"],
                    **dict(_core.variant_metrics(json.dumps(v))),
                })
        df = pd.DataFrame.from_records(records)
        variants = list(dict.fromkeys(df["variant"]))
        df["value"] = pd.Categorical(df["value"], categories=self.values, ordered=True)
        df["variant"] = pd.Categorical(df["variant"], categories=variants, ordered=True)
        return df.set_index(["value", "variant"])

    def frame(self, name: str) -> pd.DataFrame:
        """A :class:`RunResult` frame (``"workloads"``, ``"vmstat"``, ...) of every point,
        concatenated with the point's value as the outer index level."""
        frames = {p: getattr(self.result(p), name) for p in self.values}
        return pd.concat(frames, names=["value"])

    def to_json(self, path: Union[str, "os.PathLike[str]", None] = None) -> str:
        """The document as JSON; written to ``path`` too when given."""
        return _dump(self.raw, path)

    def to_html(self, path: Union[str, "os.PathLike[str]", None] = None) -> str:
        """The HTML report (each metric against the swept value, a line per variant);
        written to ``path`` too when given."""
        return _html(self.raw, path)
