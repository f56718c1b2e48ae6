"""The Rust extension: scenarios in, the library's results JSON out. Runs release the GIL."""

from collections.abc import Callable
from typing import Any, Optional

__version__: str

def inspect(
    text: str, file: str, sets: list[str], seed: Optional[int] = None
) -> tuple[str, int, list[str]]:
    """Load and check a scenario: (name, seed, variant names). Raises ScenarioError."""

def run(
    text: str,
    file: str,
    sets: list[str],
    seed: Optional[int] = None,
    variant: Optional[str] = None,
    check: bool = False,
    agent: Optional[tuple[Callable[[str], list[tuple[Optional[str], str, str]]], str]] = None,
    policy: Optional[tuple[type, Optional[str]]] = None,
) -> str:
    """Run the base or one variant: the results JSON. Raises ScenarioError or RunError."""

def compare(
    text: str,
    file: str,
    sets: list[str],
    seed: Optional[int] = None,
    check: bool = False,
    agent: Optional[tuple[Callable[[str], list[tuple[Optional[str], str, str]]], str]] = None,
    policy: Optional[tuple[type, Optional[str], str]] = None,
) -> str:
    """Run every variant in parallel: the results JSON. Raises ScenarioError or RunError."""

def html_report(results_json: str) -> str:
    """The self-contained HTML report of results JSON (run, compare or sweep)."""

def scenario_toml(scenario: dict[str, Any]) -> str:
    """A scenario dict as TOML text, keys in the dict's order. Raises ScenarioError."""
