//! `[[agent]]`s: senpai (senpai.py's loop) end to end through the engine: its probes
//! without pressure, its back-off above the target, its floor, its memory.reclaim mode
//! (oomd's Senpai), determinism, and the errors a bad agent gets.

mod common;

use common::run_checked;
use reclaimsim::results::{AgentWrite, VariantResult};
use reclaimsim::scenario;

/// A memcg /a with 16 MiB of anon memory stored once, then `then` (a phase), and a
/// senpai agent on it from 10 ms with `agent` lines added.
fn scenario_text(then: &str, agent: &str) -> String {
    format!(
        r#"name = "senpai"
[machine]
memory = "64MiB"
cpus = 2
swap = {{ device = "zram", size = "64MiB" }}
[[memcg]]
path = "/a"
[[workload]]
name = "w"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "16MiB"
populate = true
{then}
[[agent]]
kind = "senpai"
memcg = "/a"
start = "10ms"
interval = "6ms"
min_size = "1MiB"
cpu = 1
{agent}
"#
    )
}

/// The workload holds its memory and sleeps: no access, no stall.
const IDLE: &str = "[[workload.anon.phase]]\nsleep_until = \"200ms\"\n";

/// The workload keeps touching its 16 MiB at random for 80 ms (its thrashing under the
/// squeeze below starts at about 60 ms, once the writer's reclaim is done).
const BUSY: &str = "pattern = \"random\"\nruntime = \"80ms\"\n";

/// At 30 ms another writer sets memory.high to 4 MiB: the workload thrashes.
const SQUEEZE: &str =
    "[[event]]\nat = \"30ms\"\nmemcg = \"/a\"\nfile = \"memory.high\"\nvalue = \"4MiB\"\n";

fn writes(r: &VariantResult) -> &[AgentWrite] {
    assert_eq!(r.agents.len(), 1);
    &r.agents[0].writes
}

/// senpai.py's adjustment of `prev` after `integral` µs of stall (defaults but
/// `max_probe`, target `pressure`): Senpai.tick's formula, then import_limit's clamp and
/// rounding (min_size 1 MiB).
fn expected(prev: u64, integral: u64, pressure: u64, max_probe: f64) -> u64 {
    let adj = if integral > pressure {
        let err = integral as f64 / pressure as f64;
        ((err / 20.0).powi(2) * 1.0).min(1.0)
    } else {
        let err = pressure as f64 / integral.max(1) as f64;
        -((err / 10.0).powi(2) * max_probe).min(max_probe)
    };
    let x = prev as f64;
    let v = (x + x * adj).trunc() as u64;
    v.min(100 << 30).max(1 << 20) & !4095
}

/// Each write after the first follows from the one before and the stall read.
fn assert_formula(w: &[AgentWrite], pressure: u64, max_probe: f64) {
    for pair in w.windows(2) {
        let want = expected(
            pair[0].memory_high,
            pair[1].pressure_us,
            pressure,
            max_probe,
        );
        assert_eq!(pair[1].memory_high, want, "{pair:?}");
    }
}

#[test]
fn without_pressure_senpai_probes_down_step_by_step() {
    let r = run_checked(&scenario_text(IDLE, ""));
    // While the workload sleeps (its exit at 200 ms is not this test's).
    let w: Vec<AgentWrite> = (writes(&r).iter())
        .filter(|x| x.time_s < 0.195)
        .cloned()
        .collect();
    assert!(w.len() >= 20, "{} writes", w.len());
    // The first write: memory.current, 16 MiB and the process's other pages.
    assert!(w[0].memory_high >= 16 << 20, "{:?}", w[0]);
    for pair in w.windows(2) {
        let (prev, next) = (pair[0].memory_high, pair[1].memory_high);
        assert_eq!(pair[1].pressure_us, 0, "{pair:?}");
        assert!(next < prev, "{pair:?}");
        assert!(next as f64 >= prev as f64 * 0.99 - 4096.0, "{pair:?}");
    }
    assert_formula(&w, 10_000, 0.01);
    // Each write is in the events list as typed.
    let shown = format!("echo {} > /a/memory.high", w[1].memory_high);
    assert!(r
        .events
        .iter()
        .any(|e| e.command == shown && e.result == "ok"));
}

#[test]
fn above_the_target_senpai_backs_off() {
    // A target of 1 us: the model's zram swap-ins stall little (a thrashing workload's
    // stall is not counted when it refaults pages that were not in its working set).
    let r = run_checked(&format!(
        "{}{SQUEEZE}",
        scenario_text(BUSY, "pressure = 1\n")
    ));
    let w = writes(&r);
    // senpai.py's import_limit: the 4 MiB it did not write makes it start over from
    // memory.current; then the thrashing's stall backs it off, upwards.
    let after = (w.iter().position(|x| x.time_s > 0.03)).unwrap_or_else(|| panic!("{w:?}"));
    let backoffs = (w[after + 1..].windows(2))
        .filter(|p| p[1].pressure_us > 1 && p[1].memory_high > p[0].memory_high)
        .count();
    assert!(backoffs > 0, "{w:?}");
    assert_formula(&w[..after], 1, 0.01);
    assert_formula(&w[after..], 1, 0.01);
}

#[test]
fn memory_high_never_goes_below_min_size() {
    let agent = "max_probe = 0.3\n".replace("min_size", "");
    let text = scenario_text(IDLE, &agent).replace("min_size = \"1MiB\"", "min_size = \"12MiB\"");
    let r = run_checked(&text);
    let w = writes(&r);
    assert!(w.iter().all(|x| x.memory_high >= 12 << 20), "{w:?}");
    assert_eq!(w.last().unwrap().memory_high, 12 << 20, "{w:?}");
}

#[test]
fn agents_are_deterministic() {
    let text = format!("{}{SQUEEZE}", scenario_text(BUSY, "pressure = 100\n"));
    let json = |mut r: VariantResult| {
        r.wall_s = 0.0;
        r.model_bytes = 0;
        serde_json::to_string(&r).unwrap()
    };
    let a = json(run_checked(&text));
    assert_eq!(a, json(run_checked(&text)));
}

#[test]
fn bad_agents_are_named_with_their_field_and_line() {
    let cases = [
        ("kind = \"senpai\"", "kind = \"senpaii\"", "agent[0].kind"),
        (
            "memcg = \"/a\"\nstart",
            "memcg = \"/b\"\nstart",
            "agent[0].memcg",
        ),
        ("cpu = 1", "cpu = 1\nmax_probe = 2.0", "agent[0].max_probe"),
        (
            "cpu = 1",
            "cpu = 1\ncoeff_backoff = 0",
            "agent[0].coeff_backoff",
        ),
        ("cpu = 1", "cpu = 1\npressure = 0", "agent[0].pressure"),
        ("cpu = 1", "cpu = 1\ntick = \"1s\"", "agent[0].tick"),
        ("cpu = 1", "cpu = 7", "agent[0].cpu"),
        (
            "min_size = \"1MiB\"",
            "min_size = \"1MiB\"\nmax_size = \"512KiB\"",
            "agent[0].min_size",
        ),
        ("cpu = 1", "cpu = 1\ncoef_probe = 3", "agent[0].coef_probe"),
        ("cpu = 1", "cpu = 1\nmode = \"limit\"", "agent[0].mode"),
        (
            "cpu = 1",
            "cpu = 1\nmem_pressure_pct = 0.5",
            "agent[0].mem_pressure_pct",
        ),
        (
            "cpu = 1",
            "cpu = 1\nmode = \"reclaim\"\nmem_pressure_pct = 101",
            "agent[0].mem_pressure_pct",
        ),
    ];
    for (from, to, field) in cases {
        let text = scenario_text(IDLE, "").replacen(from, to, 1);
        let e = scenario::parse(&text, "s.toml", &[], None)
            .err()
            .unwrap_or_else(|| panic!("accepted:\n{text}"));
        assert_eq!(e.field, field, "{e}");
        let line = e.line.unwrap_or_else(|| panic!("no line: {e}"));
        let at = text.lines().nth(line - 1).unwrap();
        let key = field.rsplit('.').next().unwrap();
        assert!(
            at.starts_with(key) || (at.starts_with("[[agent]]") && key == "min_size"),
            "{e}: line {line} is {at:?}"
        );
    }
}

/// The agent task's CPU time in a run.
fn agent_cpu_s(r: &VariantResult) -> f64 {
    let t = r.sched.tasks.iter().find(|t| t.task == "agent0");
    t.unwrap_or_else(|| panic!("no agent task: {:?}", r.sched.tasks))
        .cpu_s
}

#[test]
fn an_agents_reads_and_writes_cost_its_task_cpu_time() {
    // Idle: senpai reads memory.pressure every 1 ms tick from 10 ms to the end (200 ms),
    // and probes (memory.high read, written) every 6 ms.
    let costs = |read: u64, write: u64| {
        let text = scenario_text(IDLE, "");
        let text = text.replace(
            "[[memcg]]",
            &format!("[costs]\ncgroup_read = {read}\ncgroup_write = {write}\n[[memcg]]"),
        );
        let r = run_checked(&text);
        (agent_cpu_s(&r), writes(&r).len())
    };
    let (free, n) = costs(0, 0);
    let (reads, _) = costs(100_000, 0);
    let (both, n_both) = costs(100_000, 1_000_000);
    // At least one read per tick (over 150 ticks of 1 ms and the reads), each 100 µs;
    // the writes 1 ms each.
    assert!(reads - free >= 150.0 * 100e-6, "{free} {reads}");
    assert!(
        n_both > 10 && both - reads > n_both as f64 * 1e-3 * 0.5,
        "{reads} {both} {n_both}"
    );
    assert!(n > 10 && free < 0.01, "{n} {free}");
}

#[test]
fn in_reclaim_mode_senpai_writes_memory_reclaim_and_no_limit() {
    let r = run_checked(&scenario_text(IDLE, "mode = \"reclaim\"\n"));
    let w: Vec<AgentWrite> = (writes(&r).iter())
        .filter(|x| x.time_s < 0.195)
        .cloned()
        .collect();
    // From 10 ms, a write every seven ticks after the first interval's wait.
    assert!(w.len() >= 25, "{} writes", w.len());
    for pair in w.windows(2) {
        let (a, b) = (pair[0].memory_reclaim, pair[1].memory_reclaim);
        let (a, b) = (a.expect("a reclaim write"), b.expect("a reclaim write"));
        assert!(
            a > 0 && a % 4096 == 0 && pair[0].memory_high == 0,
            "{pair:?}"
        );
        // max_probe of what is above the floor: less each time as the memcg shrinks.
        assert!(b <= a && b as f64 >= a as f64 * 0.95, "{pair:?}");
        // Six ticks of 1 ms waited, the seventh's write, and the write's reclaim before
        // the next tick is counted: about 0.13 ms, more for the first (it ages /a).
        let gap = pair[1].time_s - pair[0].time_s;
        assert!(
            gap >= 0.007 && (gap < 0.0075 || pair[0] == w[0]),
            "{pair:?}"
        );
    }
    // The first asks 1% of the 16 MiB and the process's other pages above the 1 MiB
    // floor: all of it is reclaimable, anon into zram.
    let first = w[0].memory_reclaim.unwrap();
    assert!((150 << 10..=170 << 10).contains(&first), "{first}");
    assert!(r.events.iter().all(|e| !e.command.contains("memory.high")));
    let reclaim = format!("echo {first} > /a/memory.reclaim");
    assert!(
        r.events.iter().any(|e| e.command == reclaim),
        "{:?}",
        r.events
    );
    // What it asked for, it got (memory_reclaim() stops once it has the amount; one
    // reclaim pass may take up to a batch more).
    let asked: u64 = writes(&r).iter().map(|x| x.memory_reclaim.unwrap()).sum();
    let stolen = r.memcgs["/a"].stat["pgsteal"];
    let (pages, n) = (asked / 4096, writes(&r).len() as u64);
    assert!(
        (pages..=pages + 32 * n).contains(&stolen),
        "{stolen} {pages}"
    );
}

#[test]
fn in_reclaim_mode_senpai_waits_while_pressure_is_not_under_its_bar() {
    // With a bar of 0 %, no pressure is under it, not even none at all.
    let r = run_checked(&scenario_text(
        IDLE,
        "mode = \"reclaim\"\nmem_pressure_pct = 0\n",
    ));
    assert!(writes(&r).is_empty(), "{:?}", writes(&r));
}
