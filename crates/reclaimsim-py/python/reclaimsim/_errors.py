"""The exceptions reclaimsim raises."""

from __future__ import annotations

from typing import Optional


class ScenarioError(ValueError):
    """A bad scenario, ``set`` override or grid: where, and what is wrong.

    ``str(e)`` is the located message the CLI prints (``FILE:LINE: FIELD: MESSAGE``, or
    ``--set KEY: MESSAGE``). The parts:

    - ``file``: the scenario's path, ``"<string>"`` for TOML text, ``"<dict>"`` for a dict;
    - ``line``: the 1-based line in that text, or None (a dict's lines are those of the TOML
      text it becomes, ``reclaimsim.scenario_toml(d)``);
    - ``field``: the field as a dotted path (``machine.memory``, ``workload[0].anon.size``),
      or the ``set`` key when the value came from ``set``;
    - ``detail``: the message without its location;
    - ``from_set``: the bad value came from ``set`` (or a sweep's grid), not the scenario.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str = "",
        line: Optional[int] = None,
        field: str = "",
        detail: str = "",
        from_set: bool = False,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.field = field
        self.detail = detail or message
        self.from_set = from_set


class RunError(RuntimeError):
    """A run that failed (the model stopped with an error): which variant, and why."""


class AgentError(RunError):
    """A write an ``agent=fn`` returned that cannot be made (an unknown file, memcg or
    sysctl, a bad value): ``str(e)`` names the variant, the write as returned and what is
    wrong. The run stops there."""


class PolicyError(RunError):
    """A ``policy=`` class's hook raised, or it proposed a folio not resident in its
    memcg: ``str(e)`` names the variant and the hook (``policy hook evict_folios: ...``);
    the hook's own exception, if any, is ``e.__cause__``. The run stops there."""
