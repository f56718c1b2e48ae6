"""reclaimsim from Python: run the deterministic model of Linux page reclaim and get its
results as pandas DataFrames.

    import reclaimsim
    r = reclaimsim.compare("scenarios/seeds/000-mixed-memcgs.toml",
                           set={"duration": "1s", "workload.fio.fio.ramp_time": "300ms"})
    r.workloads                # ops/s and latency per (variant, workload)
    r.free_pages.plot()        # free pages over virtual time, a line per variant
    r.to_html("report.html")   # the charts, one self-contained file

A scenario is a path to a TOML file, TOML text, or the same document as a dict. Runs
release the GIL. Bad input raises :class:`ScenarioError` with the located message the CLI
prints; a failed run raises :class:`RunError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from collections.abc import Callable, Iterable
from typing import Any, Optional, Union

from . import _core
from ._agent import AgentState, Write, shim as _shim
from ._errors import AgentError, PolicyError, RunError, ScenarioError
from ._policy import CONTINUE, EVICT, STOP, EvictCtx, FolioList, Policy
from ._results import RunResult
from ._source import Scenario, sets as _sets, source as _source
from ._sweep import Grid, SweepResult, sweep

__version__: str = _core.__version__
__all__ = [
    "run", "compare", "sweep", "load_results", "scenario_toml", "metric_info", "RunResult",
    "SweepResult",
    "ScenarioError", "RunError", "AgentError", "Scenario", "Grid", "AgentState", "Write",
    "Policy", "PolicyError", "EvictCtx", "FolioList", "CONTINUE", "EVICT", "STOP",
]

#: An agent function: called with the state at each interval, returns writes (or None).
Agent = Callable[[AgentState], Optional[Iterable[Write]]]


def _hook(agent: Optional[Agent], interval: str) -> Optional[tuple[Any, str]]:
    if agent is None:
        return None
    if not callable(agent):
        raise TypeError(f"agent: {agent!r} is not callable")
    return (_shim(agent), str(interval))


def _policy(policy: Optional[type]) -> Optional[tuple[Any, Optional[str], str]]:
    if policy is None:
        return None
    if not (isinstance(policy, type) and issubclass(policy, Policy)):
        raise TypeError(f"policy: {policy!r} is not a subclass of reclaimsim.Policy")
    return (policy, policy.memcg, policy.pages)


def run(
    scenario: Scenario,
    seed: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    variant: Optional[str] = None,
    *,
    check: bool = False,
    agent: Optional[Agent] = None,
    agent_interval: str = "1s",
    policy: Optional[type] = None,
) -> RunResult:
    """Run the base scenario, or one ``variant`` of it, as ``reclaimsim run`` does.

    ``seed`` overrides the scenario's seed; ``set`` overrides any field by dotted key, as
    ``--set`` does (``{"machine.memory": "1GiB", "duration": "2s"}``), applied to the base
    and every variant; ``check`` runs the invariant checker (slower).

    ``agent``: a function called as ``agent(state)`` at virtual time 0 and then every
    ``agent_interval`` of virtual time after each call's writes end, with an
    :class:`AgentState`; the writes it returns run as ``[[event]]`` writes would, in its
    own task (the results' ``events`` list them). A write that cannot be made raises
    :class:`AgentError`; what the function raises stops the run and is raised again.

    ``policy``: a subclass of :class:`Policy`, run as the reclaim plugin of the
    scenario's ``kernel.plugin = { name = "python", ... }``, or, when the scenario names
    none, as ``kernel.policy = "plugin"`` on the class's ``memcg`` (None: every memcg)
    and ``pages`` (``"file"``, the page cache, or ``"all"``, anon folios too).
    A hook that raises, or a folio proposed that is not resident in the memcg, raises
    :class:`PolicyError` naming the hook.
    """
    text, file = _source(scenario)
    hook = _hook(agent, agent_interval)
    pol = _policy(policy)
    return RunResult(
        json.loads(_core.run(text, file, _sets(set), seed, variant, check, hook, pol))
    )


def compare(
    scenario: Scenario,
    seed: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    *,
    check: bool = False,
    agent: Optional[Agent] = None,
    agent_interval: str = "1s",
    policy: Optional[type] = None,
) -> RunResult:
    """Run every ``[variants.NAME]`` of the scenario (in parallel, one per core), as
    ``reclaimsim compare`` does; arguments as for :func:`run`. With an ``agent`` the
    variants run one after another, in the scenario's order, each with its own calls.

    With a ``policy`` the variants also run one after another: those whose
    ``kernel.plugin.name`` is ``"python"`` run it; when none does, one more variant,
    named after the class, runs the base scenario with it, beside the others."""
    text, file = _source(scenario)
    hook = _hook(agent, agent_interval)
    pol = _policy(policy)
    pol3 = None if pol is None else (pol[0], pol[1], pol[2], policy.__name__)
    return RunResult(
        json.loads(_core.compare(text, file, _sets(set), seed, check, hook, pol3))
    )


def load_results(path: Union[str, "os.PathLike[str]"]) -> Union[RunResult, SweepResult]:
    """Read results the CLI wrote with ``--json``: a sweep's, or a run's or compare's."""
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    return SweepResult(raw) if "points" in raw else RunResult(raw)


def metric_info() -> list[tuple[str, str, str]]:
    """The library's metric registry: ``(key, title, unit)`` of each per-variant metric,
    in order. :attr:`SweepResult.points` has a column per key; the HTML sweep report
    charts the same metrics."""
    return [tuple(m) for m in _core.metric_info()]


def scenario_toml(scenario: Mapping[str, Any]) -> str:
    """A scenario dict as the TOML text it is run as (the lines a dict's errors name)."""
    return _core.scenario_toml(dict(scenario))
