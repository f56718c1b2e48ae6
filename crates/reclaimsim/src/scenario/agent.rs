//! Reading an `[[agent]]`: its kind and that kind's parameters, with their defaults, as
//! plain values for the engine (`engine::agent`).

use crate::scenario::config::AgentConfig;
use crate::scenario::oomd::{self, OomdConf};

/// The kinds of agent.
pub const KINDS: [&str; 3] = ["senpai", "oomd", "chromeos"];

/// senpai.py's options (facebookincubator/senpai, senpai.py's argparse defaults), the
/// interval and tick as times.
#[derive(Clone, Debug, PartialEq)]
pub struct SenpaiConf {
    /// `--min-size`, bytes (default 100 << 20).
    pub min_size: u64,
    /// `--max-size`, bytes (default 100 << 30).
    pub max_size: u64,
    /// The time between two reads (its `time.sleep(1)`), ns.
    pub tick_ns: u64,
    /// `--interval`: ticks between two probes (default 6).
    pub interval: u64,
    /// `--pressure`: target stall, µs of the `some` total since the last adjustment
    /// (default 10 * 1000).
    pub pressure: u64,
    /// `--max-probe` (default 0.01), `--max-backoff` (default 1.0).
    pub max_probe: f64,
    pub max_backoff: f64,
    /// `--coeff-probe` (default 10), `--coeff-backoff` (default 20).
    pub coeff_probe: f64,
    pub coeff_backoff: f64,
    /// What it writes: memory.high (senpai.py) or memory.reclaim (oomd's Senpai).
    pub mode: SenpaiMode,
    /// Reclaim mode: the `some` avg10 and avg60 (percent) must both be under this
    /// (oomd Senpai's `mem_pressure_pct`, default 0.1).
    pub mem_pressure_pct: f64,
}

/// How a senpai agent shrinks its memcg.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenpaiMode {
    /// senpai.py: probe and back off by writing memory.high, on the stall integral.
    High,
    /// oomd's Senpai plugin with `immediate_backoff` (the memory.reclaim mode the TMO
    /// paper describes): every `interval` ticks, while memory pressure's avg10 and avg60
    /// are under `mem_pressure_pct`, reclaim `max_probe` of what lies above `min_size`
    /// plus the unreclaimable memory, through memory.reclaim; no limit is kept.
    Reclaim,
}

/// Chrome OS's low-memory handling as of 2022: resourced's available memory
/// (platform2 `resourced/src/memory.rs`, calculate_available_memory_kb: free memory above
/// the reserve, the file cache above min_filelist less dirty pages, and
/// min(anon, free swap) / ram_swap_weight) against the critical margin that swap.sh sets
/// (5.2% of MemTotal), checked as often as Chrome's memory pressure monitor checks
/// (kMemoryPressureIntervalMs, 1 s); at critical pressure Chrome discards one tab.
#[derive(Clone, Debug, PartialEq)]
pub struct ChromeOsConf {
    /// The tabs workload (by name) whose renderers it discards.
    pub workload: String,
    /// The critical margin, bytes; None: 5.2% of MemTotal (swap.sh's 520 bips).
    pub critical_margin: Option<u64>,
    /// resourced's ram_swap_weight (the chromeos-low_mem file's default, 4).
    pub ram_swap_weight: u64,
    /// vm.min_filelist_kbytes as swap.sh sets it, bytes (100000 KiB).
    pub min_filelist: u64,
    /// Between two checks, ns (Chrome's kMemoryPressureIntervalMs, 1000).
    pub interval_ns: u64,
}

/// swap.sh's critical margin, in basis points of MemTotal.
pub const CRITICAL_MARGIN_BIPS: u64 = 520;

/// What an agent is, by kind.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentKind {
    Senpai(SenpaiConf),
    Oomd(OomdConf),
    ChromeOs(ChromeOsConf),
}

/// An agent read: its kind, the memcg it controls (by path; oomd: none, its rulesets
/// name theirs) and when it starts (ns).
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedAgent {
    pub kind: AgentKind,
    pub memcg: Option<String>,
    pub start_ns: u64,
}

/// A problem with an agent: the key it is about (under the agent: `interval`,
/// `ruleset[0].actions[1].cgroup`) and what is wrong.
pub type AgentProblem = (String, String);

/// A problem with a senpai option.
type SenpaiProblem = (&'static str, String);

/// senpai.py's default `--interval` (6 ticks of 1 s).
pub const SENPAI_INTERVAL_NS: u64 = 6_000_000_000;
/// senpai.py's default `--interval`, in ticks.
pub const SENPAI_TICKS: u64 = 6;

/// Reads an agent of a known `kind`, its parameters checked.
pub fn parse(a: &AgentConfig) -> Result<ParsedAgent, AgentProblem> {
    if a.kind != "chromeos" {
        only_for(
            "a chromeos agent",
            &[
                ("workload", a.workload.is_some()),
                ("critical_margin", a.critical_margin.is_some()),
                ("ram_swap_weight", a.ram_swap_weight.is_some()),
                ("min_filelist", a.min_filelist.is_some()),
            ],
        )?;
    }
    let kind = match a.kind.as_str() {
        "senpai" => {
            if a.memcg.is_none() {
                return Err(("memcg".into(), "senpai needs the `memcg` it sizes".into()));
            }
            if !a.rulesets.is_empty() {
                return Err(("ruleset".into(), "only an oomd agent has rulesets".into()));
            }
            AgentKind::Senpai(senpai(a).map_err(|(f, e)| (f.to_string(), e))?)
        }
        "oomd" => {
            if a.memcg.is_some() {
                return Err((
                    "memcg".into(),
                    "an oomd agent names its memcgs in its rulesets' `cgroup`s".into(),
                ));
            }
            AgentKind::Oomd(oomd::parse(a.interval.map(|d| d.0), &a.rulesets)?)
        }
        "chromeos" => AgentKind::ChromeOs(chromeos(a)?),
        other => {
            return Err((
                "kind".into(),
                format!(
                    "unknown agent kind \"{other}\" (one of {})",
                    KINDS.join(", ")
                ),
            ))
        }
    };
    Ok(ParsedAgent {
        kind,
        memcg: a.memcg.clone(),
        start_ns: a.start.map_or(0, |d| d.0),
    })
}

/// An error naming the first of `keys` given (`true`): only `owner` has it.
fn only_for(owner: &str, keys: &[(&str, bool)]) -> Result<(), AgentProblem> {
    match keys.iter().find(|(_, given)| *given) {
        Some((key, _)) => Err((key.to_string(), format!("only {owner} has it"))),
        None => Ok(()),
    }
}

/// A chromeos agent's options, Chrome OS's defaults for those not given.
fn chromeos(a: &AgentConfig) -> Result<ChromeOsConf, AgentProblem> {
    let problem = |key: &str, why: &str| Err((key.to_string(), why.to_string()));
    if a.memcg.is_some() {
        return problem("memcg", "a chromeos agent watches the whole machine");
    }
    if !a.rulesets.is_empty() {
        return problem("ruleset", "only an oomd agent has rulesets");
    }
    only_for(
        "a senpai agent",
        &[
            ("tick", a.tick.is_some()),
            ("min_size", a.min_size.is_some()),
            ("max_size", a.max_size.is_some()),
            ("pressure", a.pressure.is_some()),
            ("max_probe", a.max_probe.is_some()),
            ("max_backoff", a.max_backoff.is_some()),
            ("coeff_probe", a.coeff_probe.is_some()),
            ("coeff_backoff", a.coeff_backoff.is_some()),
            ("mode", a.mode.is_some()),
            ("mem_pressure_pct", a.mem_pressure_pct.is_some()),
        ],
    )?;
    let Some(workload) = a.workload.clone() else {
        return problem(
            "workload",
            "a chromeos agent needs the tabs `workload` it discards",
        );
    };
    let ram_swap_weight = a.ram_swap_weight.unwrap_or(4);
    if ram_swap_weight == 0 {
        return problem("ram_swap_weight", "must be more than 0");
    }
    let interval_ns = a.interval.map_or(1_000_000_000, |d| d.0);
    if interval_ns == 0 {
        return problem("interval", "must be more than 0");
    }
    Ok(ChromeOsConf {
        workload,
        critical_margin: a.critical_margin.map(|b| b.0),
        ram_swap_weight,
        min_filelist: a.min_filelist.map_or(100_000 * 1024, |b| b.0),
        interval_ns,
    })
}

/// A senpai agent's options, senpai.py's defaults for those not given. The tick is
/// `interval` / 6 by default (senpai.py's ratio: 1 s ticks, 6 per interval); a given
/// `tick` makes `interval` / `tick` ticks per interval, rounded down.
fn senpai(a: &AgentConfig) -> Result<SenpaiConf, SenpaiProblem> {
    let interval_ns = a.interval.map_or(SENPAI_INTERVAL_NS, |d| d.0);
    let (tick_ns, interval) = match a.tick {
        None => (interval_ns / SENPAI_TICKS, SENPAI_TICKS),
        Some(t) if t.0 == 0 => return Err(("tick", "must be more than 0".into())),
        Some(t) if t.0 > interval_ns => {
            return Err(("tick", "must not be longer than `interval`".into()))
        }
        Some(t) => (t.0, interval_ns / t.0),
    };
    if tick_ns == 0 {
        return Err(("interval", "must be at least 6 ns (six ticks)".into()));
    }
    let min_size = a.min_size.map_or(100 << 20, |b| b.0);
    let max_size = a.max_size.map_or(100 << 30, |b| b.0);
    if min_size > max_size {
        return Err(("min_size", "must not be more than `max_size`".into()));
    }
    let pressure = a.pressure.unwrap_or(10 * 1000);
    if pressure == 0 {
        return Err(("pressure", "must be more than 0 (µs)".into()));
    }
    let (mode, mem_pressure_pct) = senpai_mode(a)?;
    Ok(SenpaiConf {
        mode,
        mem_pressure_pct,
        min_size,
        max_size,
        tick_ns,
        interval,
        pressure,
        max_probe: fraction("max_probe", a.max_probe, 0.01)?,
        max_backoff: fraction("max_backoff", a.max_backoff, 1.0)?,
        coeff_probe: positive("coeff_probe", a.coeff_probe, 10.0)?,
        coeff_backoff: positive("coeff_backoff", a.coeff_backoff, 20.0)?,
    })
}

/// A senpai agent's `mode` and, in reclaim mode, its `mem_pressure_pct`.
fn senpai_mode(a: &AgentConfig) -> Result<(SenpaiMode, f64), SenpaiProblem> {
    let mode = match a.mode.as_deref() {
        None | Some("high") => SenpaiMode::High,
        Some("reclaim") => SenpaiMode::Reclaim,
        Some(other) => {
            let e = format!("unknown mode \"{other}\" (one of high, reclaim)");
            return Err(("mode", e));
        }
    };
    let mem_pressure_pct = match (mode, a.mem_pressure_pct) {
        (SenpaiMode::High, Some(_)) => {
            return Err(("mem_pressure_pct", "only with mode = \"reclaim\"".into()))
        }
        (_, v) => v.unwrap_or(0.1),
    };
    if !(mem_pressure_pct.is_finite() && (0.0..=100.0).contains(&mem_pressure_pct)) {
        let e = format!("{mem_pressure_pct} is not a percentage (0 to 100)");
        return Err(("mem_pressure_pct", e));
    }
    Ok((mode, mem_pressure_pct))
}

/// A share of the limit: 0 to 1 for a probe (it cannot lower by more than all of it),
/// any finite non-negative for a back-off; `default` when not given.
fn fraction(key: &'static str, v: Option<f64>, default: f64) -> Result<f64, SenpaiProblem> {
    let v = v.unwrap_or(default);
    let top = if key == "max_probe" { 1.0 } else { f64::MAX };
    if !(v.is_finite() && (0.0..=top).contains(&v)) {
        let range = if key == "max_probe" {
            "0 to 1"
        } else {
            "0 or more"
        };
        return Err((key, format!("{v} is not {range}")));
    }
    Ok(v)
}

fn positive(key: &'static str, v: Option<f64>, default: f64) -> Result<f64, SenpaiProblem> {
    let v = v.unwrap_or(default);
    if !(v.is_finite() && v > 0.0) {
        return Err((key, format!("{v} is not more than 0")));
    }
    Ok(v)
}
