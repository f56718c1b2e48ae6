"""Shared scenarios: small ones that run in a fraction of a second."""

from __future__ import annotations

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
SCENARIOS = REPO / "scenarios"
SEED000 = SCENARIOS / "seeds" / "000-mixed-memcgs.toml"

# Two memcgs under global pressure, anon and page cache, with a classic and an MGLRU
# variant and samples every 20 ms; about 0.2 s of virtual time.
TINY = """\
name = "tiny"
description = "anon + fio in two memcgs, classic vs mglru"
seed = 3
duration = "200ms"
sample_interval = "20ms"

[machine]
memory = "64MiB"
cpus = 2
swap = { device = "zram", size = "128MiB" }

[kernel]
policy = "classic"

[[memcg]]
path = "/a"

[[memcg]]
path = "/b"

[[workload]]
name = "anon"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "48MiB"
pattern = "random"
passes = 4

[[workload]]
name = "fio"
memcg = "/b"
cpus = [1]
[workload.fio]
rw = "randread"
size = "40MiB"
time_based = true
runtime = "10s"

[variants.classic]
kernel.policy = "classic"

[variants.mglru]
kernel.policy = "mglru"
"""


@pytest.fixture
def tiny() -> str:
    return TINY
