"""How a scenario and its overrides reach the Rust side: TOML text, a name for errors."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Optional, Union

from . import _core
from ._errors import ScenarioError

#: A scenario: a path to a TOML file, TOML text, or the TOML document as a dict.
Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def source(scenario: Scenario) -> tuple[str, str]:
    """The scenario's TOML text and the name its errors give it.

    A ``str`` is a path when it names a file, or has no newline, ``=`` or ``[`` in it;
    otherwise it is TOML text.
    """
    if isinstance(scenario, Mapping):
        return _core.scenario_toml(dict(scenario)), "<dict>"
    if isinstance(scenario, str) and not os.path.isfile(scenario):
        if any(c in scenario for c in "\n=["):
            return scenario, "<string>"
    if not isinstance(scenario, (str, os.PathLike)):
        raise TypeError(
            f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}"
        )
    path = os.fspath(scenario)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except (OSError, UnicodeDecodeError) as e:
        detail = f"cannot read: {e}"
        raise ScenarioError(f"{path}: {detail}", file=path, detail=detail) from None


def literal(value: Any) -> str:
    """A value as ``--set KEY=VALUE`` takes it: strings as they are, others as TOML."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value))
    raise TypeError(f"a {type(value).__name__} cannot be a set value: {value!r}")


def sets(overrides: Optional[Mapping[str, Any]]) -> list[str]:
    """``{"machine.memory": "1GiB"}`` as ``["machine.memory=1GiB"]``."""
    if overrides is None:
        return []
    if not isinstance(overrides, Mapping):
        raise TypeError("set must be a dict of dotted key -> value")
    return [f"{k}={literal(v)}" for k, v in overrides.items()]
