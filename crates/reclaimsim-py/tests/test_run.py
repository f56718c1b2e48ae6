"""run and compare: the frames, the three ways to give a scenario, determinism, the GIL."""

from __future__ import annotations

import copy
import pathlib
import threading
import tomllib

import pandas as pd
import reclaimsim

from conftest import SCENARIOS, TINY

DEMO = SCENARIOS / "demo.toml"


def no_wall(raw: dict) -> dict:
    """The results without host wall time, the one field that differs between runs."""
    raw = copy.deepcopy(raw)
    for v in raw["variants"]:
        v["wall_s"] = 0.0
    return raw


def test_run_gives_every_frame() -> None:
    r = reclaimsim.run(DEMO, set={"duration": "600ms"})
    assert r.scenario == "demo" and r.seed == 1 and r.variants == ["base"]
    assert list(r.vmstat.columns) == ["base"]
    assert r.vmstat.loc["pgscan_kswapd", "base"] == r.raw["variants"][0]["vmstat"]["pgscan_kswapd"]
    assert r.vmstat.loc["pgscan_kswapd", "base"] > 0, "the demo reclaims within 600 ms"
    ms = r.memory_stat
    assert ms.index.names == ["variant", "memcg"]
    assert set(ms.loc["base"].index) == {"/", "/memcached", "/fio"}
    assert ms.loc[("base", "/fio"), "pgscan_kswapd"] > 0
    assert (ms.dtypes == "int64").all()
    # memory.stat's columns in 6.1's print order; memory.events hierarchical, with .local.
    assert list(ms.columns[:4]) == ["file_dirty", "file_writeback", "inactive_anon", "active_anon"]
    assert list(r.memory_events.columns) == ["low", "high", "max", "oom", "oom_kill"]
    assert (r.memory_events.loc[("base", "/")] >= r.memory_events_local.loc[("base", "/")]).all()
    assert list(r.memory_swap_events.columns) == ["max", "fail"]
    w = r.workloads
    assert w.index.names == ["variant", "workload"]
    assert list(w.columns) == ["ops", "ops_per_sec", "mib_per_sec", "measured_s", "p50_ns",
                               "p99_ns", "max_ns"]
    assert w.loc[("base", "fio"), "ops"] > 0
    assert set(r.locks.index.get_level_values("lock")) >= {"lru_lock", "zone_lock"}
    assert r.lock_sites.loc[("base", "lru_lock")]["acquisitions"].sum() == \
        r.locks.loc[("base", "lru_lock"), "acquisitions"]
    profile = r.raw["variants"][0]["kswapd_profile"]
    assert r.kswapd_profile["base"].sum() == profile["total_ns"] > 0
    tp = r.task_profile
    assert list(tp.columns) == ["ns", "memstall_ns"]
    # kswapd_profile is its threads' rows summed (one node here: kswapd0).
    kswapd = tp.loc[("base", "kswapd0")]["ns"].sum()
    assert kswapd == profile["total_ns"]
    fio = tp.xs("fio/0", level="task")
    assert fio.loc[("base", "work"), "ns"] > 0, "fio's own work per I/O"
    assert (tp["memstall_ns"] <= tp["ns"]).all()
    ts = r.timeseries
    assert list(ts.columns) == ["variant", "time_s", "memcg", "free_pages", "inactive_anon",
                                "active_anon", "inactive_file", "active_file"]
    assert len(ts) == 3 * len(r.raw["variants"][0]["timeseries"])
    assert r.free_pages.index.is_monotonic_increasing
    assert r.free_pages["base"].iloc[0] > r.free_pages["base"].iloc[-1], "memory fills up"
    assert r.lru_gen.empty and r.lru_gen_timeseries.empty, "classic has no generations"
    assert list(r.alloc_stall.columns) == ["calls", "p50_ns", "p99_ns", "max_ns"]
    assert r.oom_kills.empty
    p = r.pressure
    assert p.index.names == ["variant", "memcg", "kind"]
    assert list(p.columns) == ["avg10", "avg60", "avg300", "total"]
    assert set(p.loc["base"].index.get_level_values("memcg")) == {"system", "/memcached", "/fio"}
    assert p.loc[("base", "system", "some"), "total"] == r.raw["variants"][0]["pressure"]["some"]["total"]
    pt = r.pressure_timeseries
    assert list(pt.columns) == ["variant", "time_s", "memcg", "some", "full"]
    assert len(pt) == len(ts)
    assert (pt.groupby("memcg", observed=True)["some"].diff().dropna() >= 0).all(), "totals only grow"


def test_compare_runs_every_variant_with_mglru_frames() -> None:
    r = reclaimsim.compare(TINY)
    assert r.variants == ["classic", "mglru"]
    assert list(r.vmstat.columns) == ["classic", "mglru"]
    assert list(r.kswapd_profile.columns) == ["classic", "mglru"]
    assert list(r.alloc_stall.index) == ["classic", "mglru"]
    assert set(r.lru_gen.index.get_level_values("variant")) == {"mglru"}
    gens = r.lru_gen.loc[("mglru", "/a")]
    assert (gens["anon"] + gens["file"]).sum() > 0
    lgt = r.lru_gen_timeseries
    assert set(lgt["variant"]) == {"mglru"} and lgt["time_s"].nunique() > 5
    assert r.vmstat.loc["pswpout"].gt(0).all(), "anon is swapped out under both"


def test_same_seed_same_results_other_seed_differs() -> None:
    a = reclaimsim.compare(TINY)
    b = reclaimsim.compare(TINY)
    assert no_wall(a.raw) == no_wall(b.raw)
    c = reclaimsim.compare(TINY, seed=4)
    assert c.seed == 4
    assert no_wall(c.raw) != no_wall(a.raw)


def test_path_text_and_dict_give_the_same_results(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    from_text = reclaimsim.compare(TINY)
    from_path = reclaimsim.compare(path)
    from_str_path = reclaimsim.compare(str(path))
    from_dict = reclaimsim.compare(tomllib.loads(TINY))
    assert no_wall(from_text.raw) == no_wall(from_path.raw) == no_wall(from_str_path.raw)
    assert no_wall(from_dict.raw) == no_wall(from_text.raw)
    # Dict order is variant order.
    d = tomllib.loads(TINY)
    d["variants"] = {"mglru": d["variants"]["mglru"], "classic": d["variants"]["classic"]}
    swapped = reclaimsim.compare(d)
    assert swapped.variants == ["mglru", "classic"]
    assert list(swapped.free_pages.columns) == ["mglru", "classic"]
    assert list(swapped.vmstat.columns) == ["mglru", "classic"]


def test_variants_keep_the_scenario_order_through_unstack() -> None:
    # The scenario lists mglru before classic: frames keep that order, not the alphabet's.
    d = tomllib.loads(TINY)
    d["variants"] = {"mglru": d["variants"]["mglru"], "classic": d["variants"]["classic"]}
    r = reclaimsim.compare(d, set={"duration": "50ms"})
    order = ["mglru", "classic"]
    assert list(r.workloads["ops"].unstack("variant").columns) == order
    assert list(r.workloads.sort_index().index.get_level_values("variant").unique()) == order
    assert list(r.locks["wait_ns"].unstack(0).columns) == order
    assert list(r.memory_stat["pgscan_kswapd"].unstack("variant").columns) == order
    assert list(r.alloc_stall.sort_index().index) == order
    ts = r.timeseries.groupby("variant", observed=True)["free_pages"].min()
    assert list(ts.index) == order
    assert r.workloads.loc[("classic", "fio"), "ops"] > 0, "labels still select"


def test_variant_and_set() -> None:
    both = reclaimsim.compare(TINY)
    one = reclaimsim.run(TINY, variant="mglru")
    assert one.variants == ["mglru"]
    assert no_wall(one.raw)["variants"][0] == no_wall(both.raw)["variants"][1]
    roomy = reclaimsim.run(TINY, variant="mglru", set={"machine.memory": "256MiB"})
    assert roomy.vmstat.loc["pswpout", "mglru"] == 0, "no pressure with 256 MiB"
    base = reclaimsim.run(TINY, set={"kernel.policy": "mglru"})
    assert base.variants == ["base"] and not base.lru_gen.empty


def test_runs_release_the_gil() -> None:
    # While a run is in Rust, this thread keeps running Python: with the GIL held it
    # could not count at all until the run ended.
    counted = 0
    done = threading.Event()
    t = threading.Thread(target=lambda: (reclaimsim.run(DEMO, set={"duration": "300ms"}),
                                         done.set()))
    t.start()
    while not done.is_set() and t.is_alive():
        counted += 1
    t.join()
    assert done.is_set()
    assert counted > 10_000, counted


def test_json_round_trip_and_html(tmp_path: pathlib.Path) -> None:
    r = reclaimsim.compare(TINY)
    r.to_json(tmp_path / "r.json")
    back = reclaimsim.load_results(tmp_path / "r.json")
    assert isinstance(back, reclaimsim.RunResult) and back.raw == r.raw
    pd.testing.assert_frame_equal(back.workloads, r.workloads)
    html = r.to_html(tmp_path / "r.html")
    assert html == (tmp_path / "r.html").read_text()
    assert html == reclaimsim.compare(TINY).to_html(), "the report is deterministic"
    assert "<script src" not in html and "plotly.js v" in html
