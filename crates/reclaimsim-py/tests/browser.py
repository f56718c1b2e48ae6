"""Open a page in headless Chromium (Debian's ``chromium``): its DOM after the scripts ran,
what it logged to the console, and a screenshot."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest


def chromium() -> str:
    """The browser: $CHROMIUM, or chromium / chromium-browser on PATH."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    pytest.fail("no headless browser: install Debian's chromium (apt-get install chromium) "
                "or set CHROMIUM to one")


def _args(page: pathlib.Path, profile: str) -> list[str]:
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--no-first-run",
            "--enable-logging=stderr", "--log-level=0"]


def load(page: pathlib.Path) -> tuple[str, list[str]]:
    """The page's DOM after its scripts ran, and every console message it logged."""
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(_args(page, profile) + ["--dump-dom", page.resolve().as_uri()],
                             capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    console = [line for line in out.stderr.splitlines() if ":CONSOLE" in line]
    return out.stdout, console


def screenshot(page: pathlib.Path, png: pathlib.Path, height: int) -> None:
    """A screenshot of the page, 1400 px wide and ``height`` tall."""
    with tempfile.TemporaryDirectory() as profile:
        args = _args(page, profile) + [f"--window-size=1400,{height}",
                                       f"--screenshot={png}", page.resolve().as_uri()]
        out = subprocess.run(args, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]


def extent(d: str) -> tuple[float, float]:
    """The width and height of an SVG path's M/L/H/V points (plotly's bars, lines, areas)."""
    xs: list[float] = []
    ys: list[float] = []
    for cmd, args in re.findall(r"([MLHVZA-Za-z])([^MLHVZA-Za-z]*)", d):
        nums = [float(n) for n in re.findall(r"-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", args)]
        if cmd in "ML":
            xs += nums[0::2]
            ys += nums[1::2]
        elif cmd == "H":
            xs += nums
        elif cmd == "V":
            ys += nums
    width = max(xs) - min(xs) if xs else 0.0
    height = max(ys) - min(ys) if ys else 0.0
    return width, height


@dataclass
class PlotDiv:
    """What a plot div drew: its SVGs, and per trace whether it drew any data."""
    id: str
    svgs: int = 0
    traces: list[bool] = field(default_factory=list)


class _Plots(HTMLParser):
    """Collects the `plot-N` divs and, in each, plotly's trace groups and their paths."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: list[PlotDiv] = []
        self.stack: list[tuple[str, str]] = []  # (tag, role): role "plot", "trace" or ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        role = ""
        if tag == "div" and re.fullmatch(r"plot-\d+", a.get("id", "")):
            self.plots.append(PlotDiv(a["id"]))
            role = "plot"
        elif self._inside("plot") and tag == "svg" and "main-svg" in classes:
            self.plots[-1].svgs += 1
        elif self._inside("plot") and tag == "g" and "trace" in classes:
            self.plots[-1].traces.append(False)
            role = "trace"
        elif self._inside("trace") and tag == "path" and a.get("d"):
            w, h = extent(a["d"])
            if (w > 0 and h > 0) or ("js-line" in classes and w > 0):
                self.plots[-1].traces[-1] = True
        if tag not in ("path", "rect", "line", "circle", "img", "br", "meta", "input"):
            self.stack.append((tag, role))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def _inside(self, role: str) -> bool:
        return any(r == role for _, r in self.stack)


def plots(dom: str) -> list[PlotDiv]:
    """Every plot div of a page's DOM."""
    p = _Plots()
    p.feed(dom)
    return p.plots


def problems(html: pathlib.Path) -> list[str]:
    """What is wrong with a report in the browser: console messages, plots missing or
    without drawn data. Empty when every plot the page announces drew data."""
    dom, console = load(html)
    found = [f"console: {c}" for c in console]
    expected = re.search(r'name="reclaimsim-plots" content="(\d+)"', html.read_text())
    want = int(expected.group(1)) if expected else -1
    divs = plots(dom)
    if len(divs) != want:
        found.append(f"{len(divs)} plot divs, the page announces {want}")
    for p in divs:
        if p.svgs == 0:
            found.append(f"{p.id}: no SVG (plotly did not draw)")
        elif not any(p.traces):
            found.append(f"{p.id}: {len(p.traces)} traces, none drew data")
    return found
