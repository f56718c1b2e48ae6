"""Sweeps: the grid, the document (the CLI's), and Ray against the local backend."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import subprocess
import tomllib

import pytest
import reclaimsim

from conftest import REPO, TINY

GRID = {"machine.memory": ["64MiB", "96MiB"]}


def no_wall(raw: dict) -> dict:
    raw = copy.deepcopy(raw)
    for p in raw["points"]:
        for v in p["variants"]:
            v["wall_s"] = 0.0
    return raw


def test_local_sweep_document_and_frames() -> None:
    s = reclaimsim.sweep(TINY, grid=GRID)
    assert s.raw["scenario"] == "tiny" and s.raw["seed"] == 3
    assert s.raw["keys"] == ["machine.memory"]
    assert s.values == ["64MiB", "96MiB"]
    assert [[v["name"] for v in p["variants"]] for p in s.raw["points"]] == [["classic", "mglru"]] * 2
    pts = s.points
    assert list(pts.index) == [(m, v) for m in ["64MiB", "96MiB"] for v in ["classic", "mglru"]]
    assert (pts["ops_per_sec"] > 0).all()
    # A column per metric of the library's registry, in its order; pgscan is its sum.
    assert list(pts.columns) == [k for k, _, _ in reclaimsim.metric_info()]
    v0 = s.raw["points"][0]["variants"][0]["vmstat"]
    assert pts.iloc[0]["pgscan"] == v0.get("pgscan_kswapd", 0) + v0.get("pgscan_direct", 0)
    assert pts.loc[("64MiB", "classic"), "pgsteal"] > pts.loc[("96MiB", "classic"), "pgsteal"]
    w = s.frame("workloads")
    assert w.index.names == ["value", "variant", "workload"] and len(w) == 8
    # A point is the compare of the scenario with that value set.
    point = reclaimsim.compare(TINY, set={"machine.memory": "96MiB"})
    got = [dict(v, wall_s=0.0) for v in s.result("96MiB").raw["variants"]]
    want = [dict(v, wall_s=0.0) for v in point.raw["variants"]]
    assert got == want


def test_points_keep_the_grid_and_scenario_order() -> None:
    d = tomllib.loads(TINY)
    d["variants"] = {"mglru": d["variants"]["mglru"], "classic": d["variants"]["classic"]}
    s = reclaimsim.sweep(d, grid={"machine.memory": ["96MiB", "128MiB"]},
                         set={"duration": "50ms"})
    wide = s.points["pgscan"].unstack("variant")
    assert list(wide.columns) == ["mglru", "classic"]
    assert list(wide.index) == ["96MiB", "128MiB"]
    assert list(s.frame("workloads")["ops"].unstack("variant").columns) == ["mglru", "classic"]


def test_product_and_coupled_grids() -> None:
    s = reclaimsim.sweep(TINY, grid={"machine.memory": ["64MiB", "96MiB"],
                                     "kernel.swappiness": [0, 200]}, set={"duration": "50ms"})
    assert s.values == ["machine.memory=64MiB, kernel.swappiness=0",
                        "machine.memory=64MiB, kernel.swappiness=200",
                        "machine.memory=96MiB, kernel.swappiness=0",
                        "machine.memory=96MiB, kernel.swappiness=200"]
    assert s.raw["points"][1]["values"] == {"machine.memory": "64MiB", "kernel.swappiness": "200"}
    coupled = reclaimsim.sweep(TINY, grid={("kernel.swappiness", "seed"): [10, 20]},
                               set={"duration": "50ms"})
    assert coupled.raw["keys"] == ["kernel.swappiness", "seed"]
    assert coupled.values == ["10", "20"]


def test_ray_backend_equals_local() -> None:
    import ray

    local = reclaimsim.sweep(TINY, grid=GRID, backend="local")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = reclaimsim.sweep(TINY, grid=GRID, backend="ray")
        assert ray.is_initialized(), "a cluster the caller started is left running"
    finally:
        ray.shutdown()
    assert no_wall(on_ray.raw) == no_wall(local.raw)
    assert json.dumps(no_wall(on_ray.raw)) == json.dumps(no_wall(local.raw))


def cli() -> str:
    """The reclaimsim binary: $RECLAIMSIM_BIN (test.sh sets it)."""
    path = os.environ.get("RECLAIMSIM_BIN") or str(REPO / "target" / "release" / "reclaimsim")
    if not os.path.exists(path):
        pytest.fail(f"no reclaimsim binary at {path}: build it (cargo build --release) "
                    "or set RECLAIMSIM_BIN")
    return path


def test_cli_sweep_on_ray_equals_cli_local(tmp_path: pathlib.Path) -> None:
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY)
    args = [cli(), "sweep", str(scenario), "--key", "machine.memory", "--values", "64MiB,96MiB"]
    local = subprocess.run(args + ["--json", str(tmp_path / "local.json")],
                           capture_output=True, text=True)
    assert local.returncode == 0, local.stderr
    on_ray = subprocess.run(args + ["--ray", "--json", str(tmp_path / "ray.json")],
                            capture_output=True, text=True)
    assert on_ray.returncode == 0, on_ray.stderr
    assert on_ray.stdout == local.stdout, "the same table"
    a = json.loads((tmp_path / "local.json").read_text())
    b = json.loads((tmp_path / "ray.json").read_text())
    assert no_wall(a) == no_wall(b)
    # And the Python sweep's document is the CLI's.
    py = reclaimsim.sweep(scenario, grid=GRID)
    assert no_wall(py.raw) == no_wall(a)
