"""The agent hook: ``run(..., agent=fn)`` calls fn with the kernel's files at each
interval and runs the writes it returns as ``[[event]]`` writes."""

from __future__ import annotations

import copy

import pytest
import reclaimsim

from conftest import TINY

# TINY's base (classic) only: 200 ms of anon in /a (48 MiB) next to fio in /b.
BASE = {"duration": "200ms"}


def lower_once(at: float, size: str, seen: list):
    """An agent that writes /a's memory.high once, at the first call at or after ``at``,
    and keeps each state it was shown."""

    def agent(state: reclaimsim.AgentState):
        seen.append(state)
        if state.now >= at and not any(s.last_writes for s in seen):
            if not getattr(agent, "done", False):
                agent.done = True
                return [("/a", "memory.high", size)]
        return None

    return agent


def test_agent_lowers_memory_high_and_the_memcg_shrinks() -> None:
    seen: list = []
    plain = reclaimsim.run(TINY, set=BASE)
    r = reclaimsim.run(TINY, set=BASE, agent=lower_once(0.1, "16M", seen), agent_interval="10ms")
    # Called at 0 and about every 10 ms after: some 20 calls over 200 ms.
    # The first call at 0, after a context switch and the reads' CPU time (cgroup_read
    # and cgroup_stat_read of every memcg's files).
    assert seen[0].now < 1e-3, seen[0].now
    assert 15 <= len(seen) <= 21, len(seen)
    assert all(b.now - a.now >= 0.01 - 1e-9 for a, b in zip(seen, seen[1:]))
    # The write ran, as an [[event]]'s would, and shows in the next state.
    ev = r.raw["variants"][0]["events"]
    assert [(e["command"], e["result"]) for e in ev] == [("echo 16M > /a/memory.high", "ok")]
    assert 0.1 <= ev[0]["time_s"] < 0.12
    after = [s for s in seen if s.now > ev[0]["time_s"]]
    assert after[0].last_writes == [("echo 16M > /a/memory.high", "ok")]
    assert all(s.memcg("/a")["memory.high"] == 16 << 20 for s in after)
    assert seen[0].memcg("/a")["memory.high"] is None, "max before the write"
    # Below the limit from the write on (within a charge batch's worth), where the run
    # without the agent keeps over 20 MiB (what global reclaim leaves it).
    assert all(s.memcg("/a")["memory.current"] <= (16 << 20) + (1 << 20) for s in after)
    cur = lambda x: x.raw["variants"][0]["memcgs"]["/a"]["memory.current"]
    assert cur(r) <= (16 << 20) + (1 << 20) < (20 << 20) < cur(plain)
    assert r.raw["variants"][0]["agents"] == [{"kind": "python", "memcg": "/", "writes": []}]


def test_the_state_has_what_the_kernel_exposes() -> None:
    seen: list = []
    reclaimsim.run(TINY, set=BASE, agent=lambda s: seen.append(s), agent_interval="50ms")
    s = seen[-1]
    assert set(s.memcgs) == {"/", "/a", "/b"}
    a = s.memcg("/a")
    assert {"memory.current", "memory.swap.current", "memory.high", "memory.max",
            "memory.low", "memory.min", "memory.pressure", "memory.stat",
            "memory.events", "memory.events.local"} == set(a)
    assert a["memory.current"] > 0 and a["memory.max"] is None and a["memory.low"] == 0
    assert set(a["memory.pressure"]) == {"some", "full"}
    assert set(a["memory.pressure"]["some"]) == {"avg10", "avg60", "avg300", "total"}
    assert a["memory.stat"]["inactive_anon"] + a["memory.stat"]["active_anon"] > 0 and "workingset_refault_anon" in a["memory.stat"]
    assert list(a["memory.events"]) == ["low", "high", "max", "oom", "oom_kill"]
    assert s.pressure["some"]["total"] >= a["memory.pressure"]["some"]["total"]


def no_wall(raw: dict) -> dict:
    raw = copy.deepcopy(raw)
    for v in raw["variants"]:
        v["wall_s"] = 0.0
    return raw


def test_an_agent_run_is_deterministic() -> None:
    runs = [
        reclaimsim.run(TINY, set=BASE, agent=lower_once(0.05, "20M", []), agent_interval="7ms")
        for _ in range(2)
    ]
    assert no_wall(runs[0].raw) == no_wall(runs[1].raw)


@pytest.mark.parametrize(
    "write, named",
    [
        (("/a", "memory.hgih", "16M"), "memory.hgih"),
        (("/nope", "memory.high", "16M"), "/nope"),
        (("/a", "memory.high", "lots"), "lots"),
        (("vm.swapiness", 60), "vm.swapiness"),
        (("vm.swappiness", 300), "300"),
        (("/", "memory.high", "16M"), "root"),
    ],
)
def test_a_bad_write_raises_naming_it(write: tuple, named: str) -> None:
    with pytest.raises(reclaimsim.AgentError) as e:
        reclaimsim.run(TINY, set=BASE, agent=lambda s: [write] if s.now > 0.02 else None,
                       agent_interval="10ms")
    assert named in str(e.value) and "agent write" in str(e.value), str(e.value)


def test_a_malformed_write_or_an_exception_in_the_agent_raises_it() -> None:
    class Stop(Exception):
        pass

    def boom(state):
        raise Stop("at %.2f" % state.now)

    with pytest.raises(Stop, match="at 0.00"):
        reclaimsim.run(TINY, set=BASE, agent=boom)
    with pytest.raises(TypeError, match="not \\(memcg, file, value\\)"):
        reclaimsim.run(TINY, set=BASE, agent=lambda s: ["/a memory.high 16M"])
    with pytest.raises(reclaimsim.AgentError, match="agent_interval"):
        reclaimsim.run(TINY, set=BASE, agent=lambda s: None, agent_interval="soon")


def test_a_sysctl_and_compare() -> None:
    calls: list = []

    def agent(state):
        calls.append(state.now)
        return [("vm.swappiness", 100)] if state.now < 1e-3 else []

    r = reclaimsim.compare(TINY, set={"duration": "60ms"}, agent=agent, agent_interval="20ms")
    for v in r.raw["variants"]:
        assert v["events"][0]["command"] == "sysctl vm.swappiness=100"
    # The variants one after the other, each from 0.
    firsts = [i for i, t in enumerate(calls) if t < 1e-3]
    assert len(firsts) == 2 and firsts[0] == 0 and firsts[1] > 1


# An anon worker storing 16 MiB in /a without swap (the Rust tests' MAX_UNDER_ANON).
NO_SWAP = """\
name = "max-under-anon"
[machine]
memory = "64MiB"
cpus = 2
[[memcg]]
path = "/a"
[[workload]]
name = "anon"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "16MiB"
populate = true
runtime = "50ms"
"""


def test_a_lower_memory_max_oom_kills_and_the_timeline_shows_the_stall() -> None:
    def agent(state):
        if 0.005 <= state.now < 0.006:
            return [("/a", "memory.max", "4M")]
        return None

    r = reclaimsim.run(NO_SWAP, agent=agent, agent_interval="1ms")
    ev = r.raw["variants"][0]["events"]
    assert [e["command"] for e in ev] == ["echo 4M > /a/memory.max"]
    # The memcg OOM: the write's, or the worker's own charge's when it meets the new
    # limit first (the write then finds no process left).
    assert ev[0]["result"].startswith("ok (memcg OOM: "), ev[0]["result"]
    kills = r.oom_kills
    assert len(kills) == 1
    k = kills.iloc[0]
    assert (k["scope"], k["victim"], k["victim_memcg"]) == ("/a", "anon", "/a")
    # A stall of reclaim against the new limit, from after the write began to the kill.
    assert 0 < k["stall_s"] <= k["time_s"] - ev[0]["time_s"] + 1e-9, k
