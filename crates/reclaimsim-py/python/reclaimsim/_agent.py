"""The ``agent=fn`` hook of :func:`reclaimsim.run` and :func:`reclaimsim.compare`: the
state the engine reads at each interval, handed to the user's function, and its writes
handed back as the engine takes them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Union

#: What an agent function returns: writes as ``(memcg, file, value)`` for a memcg's file
#: (``("/memcached", "memory.high", "80M")``) or ``(sysctl, value)`` for a sysctl
#: (``("vm.swappiness", 100)``); values as an ``[[event]]``'s (a size, ``"max"``, a
#: number, ``"32M swappiness=0"`` for memory.reclaim).
Write = Union[tuple[str, str, Any], tuple[str, Any]]


@dataclass(frozen=True)
class AgentState:
    """What the kernel exposes at one call, read at virtual time ``now`` (s).

    - ``pressure``: /proc/pressure/memory, ``{"some": {"avg10", "avg60", "avg300",
      "total"}, "full": {...}}`` (averages in %, totals in µs);
    - ``memcgs``: per memcg path (the root ``"/"`` too) a dict of its files:
      ``memory.current``, ``memory.swap.current``, ``memory.high``, ``memory.max``
      (bytes; None for "max"), ``memory.low``, ``memory.min``, ``memory.pressure`` (as
      ``pressure``), ``memory.stat``, ``memory.events``, ``memory.events.local``;
    - ``last_writes``: the previous call's writes as they ran, ``(command, result)``
      with result ``"ok"``, an errno (``"EAGAIN"``) or the memcg OOM kills of a lower
      memory.max.
    """

    now: float
    pressure: Mapping[str, Mapping[str, float]]
    memcgs: Mapping[str, Mapping[str, Any]]
    last_writes: list[tuple[str, str]] = field(default_factory=list)

    def memcg(self, path: str) -> Mapping[str, Any]:
        """The files of the memcg at ``path`` (``"/memcached"``)."""
        return self.memcgs[path]


def _write(w: Any) -> tuple[Optional[str], str, str]:
    if not isinstance(w, (tuple, list)) or len(w) not in (2, 3):
        raise TypeError(
            f"agent write {w!r}: not (memcg, file, value) or (sysctl, value)"
        )
    if len(w) == 2:
        name, value = w
        memcg = None
    else:
        memcg, name, value = w
        if not isinstance(memcg, str):
            raise TypeError(f"agent write {w!r}: the memcg is not a path")
    if not isinstance(name, str):
        raise TypeError(f"agent write {w!r}: the file is not a string")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"agent write {w!r}: the value is not a string or an integer")
    return (memcg, name, str(value))


def shim(fn: Callable[[AgentState], Optional[Iterable[Write]]]) -> Callable[[str], list]:
    """The callable the extension calls with the state as JSON: ``fn``'s writes as
    ``(memcg or None, file, value)`` triples of strings (None from ``fn``: no write)."""

    def call(state_json: str) -> list:
        raw = json.loads(state_json)
        state = AgentState(
            now=raw["now"],
            pressure=raw["pressure"],
            memcgs=raw["memcgs"],
            last_writes=[(w["command"], w["result"]) for w in raw["last_writes"]],
        )
        writes = fn(state)
        return [] if writes is None else [_write(w) for w in writes]

    return call
