"""The HTML report in a real browser: no console messages, every plot drew data, and a
screenshot (in $RECLAIMSIM_ARTIFACTS, default the test's temporary folder)."""

from __future__ import annotations

import os
import pathlib

import reclaimsim

import browser
from conftest import SEED000


def artifacts(tmp_path: pathlib.Path) -> pathlib.Path:
    d = pathlib.Path(os.environ.get("RECLAIMSIM_ARTIFACTS", tmp_path))
    d.mkdir(parents=True, exist_ok=True)
    return d


def test_seed000_compare_report_draws_every_plot(tmp_path: pathlib.Path) -> None:
    # fio's ramp shortened so that every workload has figures to plot in 600 ms.
    r = reclaimsim.compare(
        SEED000, set={"duration": "600ms", "workload.fio.fio.ramp_time": "300ms"}
    )
    assert r.variants == [
        "classic",
        "classic-v5.19",
        "patch1-8",
        "patch1-9",
        "memcg-lru",
        "v11-patch1-8",
        "v11-patch1-9",
    ]
    out = artifacts(tmp_path)
    html = out / "seed000-report.html"
    r.to_html(html)
    assert browser.problems(html) == []
    n = browser.plots(browser.load(html)[0])
    # Free memory, LRU lists and generations per memcg, throughput, bandwidth, latency
    # per workload, stalls, lock wait, kswapd, reclaim share.
    assert len(n) >= 15
    png = out / "seed000-report.png"
    browser.screenshot(html, png, height=9000)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 100_000, "a page of charts, not a blank one"


def test_sweep_report_draws_every_plot(tmp_path: pathlib.Path, tiny: str) -> None:
    s = reclaimsim.sweep(tiny, grid={"machine.memory": ["64MiB", "96MiB"]})
    html = artifacts(tmp_path) / "sweep-report.html"
    s.to_html(html)
    assert browser.problems(html) == []


def test_the_check_finds_console_errors_and_empty_plots(tmp_path: pathlib.Path) -> None:
    # A report whose second plot has no data and whose page logs an error: both found.
    good = reclaimsim.compare(SEED000.parent.parent / "demo.toml", set={"duration": "100ms"})
    html = good.to_html()
    html = html.replace('<div id="plot-1"', '<div id="plot-1-gone"', 1)
    html = html.replace("</body>", '<div id="plot-99"></div><script>console.error("boom")'
                        "</script></body>")
    page = tmp_path / "broken.html"
    page.write_text(html)
    found = browser.problems(page)
    assert any("boom" in p for p in found), found
    assert any(p.startswith("plot-99: no SVG") for p in found), found
    assert browser.extent("M0,10V0H5V10Z") == (5.0, 10.0)
    assert browser.extent("M0,10V10H5V10Z") == (5.0, 0.0)
