"""``reclaimsim sweep --ray``'s Python side. The CLI has loaded and checked every point,
then runs ``python3 -m reclaimsim._ray_cli`` with a request on stdin:

    {"scenario": PATH, "sets": ["KEY=VALUE", ...], "keys": [KEY, ...], "values": [V, ...],
     "seed": N or null, "check": bool, "address": ADDRESS or null, "out": PATH}

runs every (value, variant) as a Ray task (on the cluster at ADDRESS, or a local one
started for the sweep) and writes the sweep's document (``sweep --json``'s) to ``out``.
Errors go to stderr, with exit status 2 for bad input and 1 for a failed run."""

from __future__ import annotations

import json
import sys

from ._errors import RunError, ScenarioError
from ._sweep import run_sweep


def main() -> int:
    req = json.load(sys.stdin)
    try:
        result = run_sweep(req["scenario"], {tuple(req["keys"]): req["values"]}, req["seed"],
                           req["sets"], "ray", req["address"], None, req["check"])
    except ScenarioError as e:
        print(e, file=sys.stderr)
        return 2
    except RunError as e:
        print(e, file=sys.stderr)
        return 1
    with open(req["out"], "w", encoding="utf-8") as f:
        json.dump(result.raw, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
