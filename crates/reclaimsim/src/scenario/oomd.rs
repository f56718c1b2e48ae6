//! Reading an oomd agent (`[[agent]] kind = "oomd"`): its rulesets as oomd's JSON config
//! gives them (facebookincubator/oomd, docs/core_plugins.md, v0.5 and later): per
//! ruleset, detector groups (a group fires when every detector in it says CONTINUE; the
//! ruleset's actions run when any group fires) and an action chain. The core plugins the
//! model has, with oomd's defaults: detectors `pressure_above`, `pressure_rising_beyond`,
//! `swap_free`, `memory_reclaim`; actions `kill_by_memory_size_or_growth`,
//! `kill_by_pressure`, `kill_by_swap_usage`.

use crate::scenario::config::{PluginConfig, PluginValue, RulesetConfig};
use crate::units::{parse_duration, parse_size};

/// oomd's `--interval` default: 5 s between two runs of the rulesets.
pub const OOMD_INTERVAL_NS: u64 = 5_000_000_000;

/// The detectors, by their names in oomd's config.
pub const DETECTORS: [&str; 4] = [
    "pressure_above",
    "pressure_rising_beyond",
    "swap_free",
    "memory_reclaim",
];

/// The actions, by their names in oomd's config.
pub const ACTIONS: [&str; 3] = [
    "kill_by_memory_size_or_growth",
    "kill_by_pressure",
    "kill_by_swap_usage",
];

/// Which cgroups a plugin reads or may kill: memcg paths, each exact or `PATH/*` (its
/// children), as oomd's `cgroup` argument (comma separated).
pub type Cgroups = Vec<String>;

/// A detector and its arguments; pressures are memory.pressure's `full` line (oomd's
/// mem_pressure()), thresholds in %, durations in ns.
#[derive(Clone, Debug, PartialEq)]
pub enum Detector {
    /// PressureAbove: CONTINUE once the highest avg10 has been above `threshold` for
    /// `duration`.
    PressureAbove {
        cgroups: Cgroups,
        threshold: f64,
        duration_ns: u64,
    },
    /// PressureRisingBeyond: avg60 above `threshold` for `duration`, avg10 above it, and
    /// avg10 not below `fast_fall_ratio` (default 0.85) of its last value.
    PressureRisingBeyond {
        cgroups: Cgroups,
        threshold: f64,
        duration_ns: u64,
        fast_fall_ratio: f64,
    },
    /// SwapFree: free swap below `threshold_pct` % of the total.
    SwapFree { threshold_pct: u64 },
    /// MemoryReclaim: the cgroups' memory.stat `pgscan` grew within `duration`.
    MemoryReclaim { cgroups: Cgroups, duration_ns: u64 },
}

/// How an action ranks the candidates (BaseKillPlugin's rankForKilling per plugin).
#[derive(Clone, Debug, PartialEq)]
pub enum Rank {
    /// KillMemoryGrowth: `size_threshold` (% of the candidates' total, default 50),
    /// `min_growth_ratio` (default 1.25), `growing_size_percentile` (default 80).
    SizeOrGrowth {
        size_threshold: u64,
        min_growth_ratio: f64,
        growing_size_percentile: u64,
    },
    /// KillPressure: avg10 / 2 + avg60 / 2 of memory.pressure's `full`, as an int.
    Pressure,
    /// KillSwapUsage: memory.swap.current above `threshold` bytes (default 1, a bare
    /// number meaning MiB: 1 MiB).
    SwapUsage { threshold: u64 },
}

/// An action: its ranking, the cgroups it may kill, oomd's `post_action_delay` (default
/// 15 s), `dry` and `always_continue` (default false).
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub rank: Rank,
    pub cgroups: Cgroups,
    pub post_action_delay_ns: u64,
    pub dry: bool,
    pub always_continue: bool,
}

/// A ruleset: its name, detector groups and action chain.
#[derive(Clone, Debug, PartialEq)]
pub struct Ruleset {
    pub name: String,
    pub groups: Vec<Vec<Detector>>,
    pub actions: Vec<Action>,
}

/// An oomd agent: its interval and rulesets.
#[derive(Clone, Debug, PartialEq)]
pub struct OomdConf {
    pub interval_ns: u64,
    pub rulesets: Vec<Ruleset>,
}

/// A problem: where under the agent (`ruleset[0].detectors[1][0].threshold`) and what.
pub type Problem = (String, String);

/// Reads an oomd agent's rulesets; `interval` (default 5 s) as given.
pub fn parse(interval_ns: Option<u64>, rulesets: &[RulesetConfig]) -> Result<OomdConf, Problem> {
    if rulesets.is_empty() {
        return Err((
            "ruleset".into(),
            "an oomd agent needs a [[agent.ruleset]]".into(),
        ));
    }
    let rulesets = (rulesets.iter().enumerate())
        .map(|(r, rs)| ruleset(r, rs))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(OomdConf {
        interval_ns: interval_ns.unwrap_or(OOMD_INTERVAL_NS),
        rulesets,
    })
}

fn ruleset(r: usize, rs: &RulesetConfig) -> Result<Ruleset, Problem> {
    let at = |rest: String| format!("ruleset[{r}].{rest}");
    if rs.detectors.is_empty() || rs.detectors.iter().any(Vec::is_empty) {
        return Err((
            at("detectors".into()),
            "needs one or more groups of one or more detectors".into(),
        ));
    }
    if rs.actions.is_empty() {
        return Err((at("actions".into()), "needs one or more actions".into()));
    }
    let mut groups = Vec::new();
    for (g, group) in rs.detectors.iter().enumerate() {
        let ds = (group.iter().enumerate())
            .map(|(d, p)| detector(p).map_err(|(f, e)| (at(format!("detectors[{g}][{d}].{f}")), e)))
            .collect::<Result<Vec<_>, _>>()?;
        groups.push(ds);
    }
    let actions = (rs.actions.iter().enumerate())
        .map(|(a, p)| action(p).map_err(|(f, e)| (at(format!("actions[{a}].{f}")), e)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Ruleset {
        name: rs.name.clone().unwrap_or_else(|| format!("ruleset {r}")),
        groups,
        actions,
    })
}

/// A plugin's arguments, each taken once; what is left over is an unknown argument.
struct Args<'a> {
    p: &'a PluginConfig,
    taken: Vec<&'static str>,
}

type Bad = (String, String);

impl<'a> Args<'a> {
    fn new(p: &'a PluginConfig, kinds: &[&str]) -> Result<(Self, String), Bad> {
        let mut a = Args { p, taken: vec![] };
        let name = a
            .text("name")?
            .ok_or(("name".to_string(), "a plugin needs its `name`".to_string()))?;
        if !kinds.contains(&name.as_str()) {
            return Err((
                "name".to_string(),
                format!("unknown plugin \"{name}\" (one of {})", kinds.join(", ")),
            ));
        }
        Ok((a, name))
    }

    fn get(&mut self, key: &'static str) -> Option<&'a PluginValue> {
        self.taken.push(key);
        self.p.get(key)
    }

    fn text(&mut self, key: &'static str) -> Result<Option<String>, Bad> {
        match self.get(key) {
            None => Ok(None),
            Some(PluginValue::Text(s)) => Ok(Some(s.clone())),
            Some(v) => Err((key.to_string(), format!("{v:?} is not a string"))),
        }
    }

    /// A number (oomd's args are strings: "60" is taken too), at least 0.
    fn number(&mut self, key: &'static str) -> Result<Option<f64>, Bad> {
        let v = match self.get(key) {
            None => return Ok(None),
            Some(PluginValue::Int(n)) => *n as f64,
            Some(PluginValue::Float(x)) => *x,
            Some(PluginValue::Text(s)) => (s.trim().parse::<f64>())
                .map_err(|_| (key.to_string(), format!("\"{s}\" is not a number")))?,
            Some(v) => return Err((key.to_string(), format!("{v:?} is not a number"))),
        };
        if !(v.is_finite() && v >= 0.0) {
            return Err((key.to_string(), format!("{v} is not a number of 0 or more")));
        }
        Ok(Some(v))
    }

    fn required(&mut self, key: &'static str) -> Result<f64, Bad> {
        self.number(key)?
            .ok_or((key.to_string(), format!("`{key}` is required")))
    }

    fn flag(&mut self, key: &'static str) -> Result<bool, Bad> {
        match self.get(key) {
            None => Ok(false),
            Some(PluginValue::Bool(b)) => Ok(*b),
            Some(PluginValue::Text(s)) if s == "true" || s == "false" => Ok(s == "true"),
            Some(v) => Err((key.to_string(), format!("{v:?} is not true or false"))),
        }
    }

    /// A duration: seconds as oomd takes them (a number), or a duration ("500ms").
    fn duration(&mut self, key: &'static str, default: Option<u64>) -> Result<u64, Bad> {
        match self.get(key) {
            None => default.ok_or((key.to_string(), format!("`{key}` is required"))),
            Some(PluginValue::Int(n)) if *n >= 0 => Ok(*n as u64 * 1_000_000_000),
            Some(PluginValue::Text(s)) => parse_duration(s).map_err(|e| (key.to_string(), e)),
            Some(v) => Err((
                key.to_string(),
                format!("{v:?} is not whole seconds or a duration"),
            )),
        }
    }

    /// `cgroup`: comma separated paths, each `/PATH` or `/PATH/*`.
    fn cgroups(&mut self) -> Result<Cgroups, Bad> {
        let text = self
            .text("cgroup")?
            .ok_or(("cgroup".to_string(), "`cgroup` is required".to_string()))?;
        let list: Vec<String> = text.split(',').map(str::to_string).collect();
        if let Some(bad) = list.iter().find(|c| !c.starts_with('/') || c.is_empty()) {
            return Err((
                "cgroup".to_string(),
                format!("\"{bad}\" is not a memcg path (/PATH or /PATH/*)"),
            ));
        }
        Ok(list)
    }

    /// `resource`: memory only (io is not modelled).
    fn memory(&mut self) -> Result<(), Bad> {
        match self.text("resource")?.as_deref() {
            Some("memory") => Ok(()),
            Some(r) => Err((
                "resource".to_string(),
                format!("\"{r}\": only memory is modelled"),
            )),
            None => Err((
                "resource".to_string(),
                "`resource` is required (memory)".into(),
            )),
        }
    }

    /// No argument left that was not read.
    fn done(self) -> Result<(), Bad> {
        match self.p.keys().find(|k| !self.taken.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err((k.clone(), format!("unknown argument `{k}` of this plugin"))),
        }
    }
}

fn detector(p: &PluginConfig) -> Result<Detector, Bad> {
    let (mut a, name) = Args::new(p, &DETECTORS)?;
    let d = match name.as_str() {
        "pressure_above" => {
            a.memory()?;
            Detector::PressureAbove {
                cgroups: a.cgroups()?,
                threshold: a.required("threshold")?,
                duration_ns: a.duration("duration", None)?,
            }
        }
        "pressure_rising_beyond" => {
            a.memory()?;
            Detector::PressureRisingBeyond {
                cgroups: a.cgroups()?,
                threshold: a.required("threshold")?,
                duration_ns: a.duration("duration", None)?,
                fast_fall_ratio: a.number("fast_fall_ratio")?.unwrap_or(0.85),
            }
        }
        "swap_free" => {
            let pct = a.required("threshold_pct")?;
            if pct > 100.0 || pct.fract() != 0.0 {
                return Err((
                    "threshold_pct".to_string(),
                    format!("{pct} is not a whole percentage 0 to 100"),
                ));
            }
            Detector::SwapFree {
                threshold_pct: pct as u64,
            }
        }
        _ => Detector::MemoryReclaim {
            cgroups: a.cgroups()?,
            duration_ns: a.duration("duration", None)?,
        },
    };
    a.done()?;
    Ok(d)
}

fn action(p: &PluginConfig) -> Result<Action, Bad> {
    let (mut a, name) = Args::new(p, &ACTIONS)?;
    let rank = match name.as_str() {
        "kill_by_memory_size_or_growth" => {
            let pct = a.number("growing_size_percentile")?.unwrap_or(80.0);
            if pct >= 100.0 || pct.fract() != 0.0 {
                return Err((
                    "growing_size_percentile".to_string(),
                    format!("{pct}: must be a whole number in [0, 100)"),
                ));
            }
            Rank::SizeOrGrowth {
                size_threshold: a.number("size_threshold")?.unwrap_or(50.0) as u64,
                min_growth_ratio: a.number("min_growth_ratio")?.unwrap_or(1.25),
                growing_size_percentile: pct as u64,
            }
        }
        "kill_by_pressure" => {
            a.memory()?;
            Rank::Pressure
        }
        _ => Rank::SwapUsage {
            threshold: match a.get("threshold") {
                None => 1 << 20,
                Some(PluginValue::Int(n)) if *n >= 0 => (*n as u64) << 20,
                Some(PluginValue::Text(s)) => {
                    parse_size(s).map_err(|e| ("threshold".to_string(), e))?
                }
                Some(v) => return Err(("threshold".to_string(), format!("{v:?} is not a size"))),
            },
        },
    };
    if a.flag("recursive")? {
        return Err((
            "recursive".to_string(),
            "recursive kills are not modelled".into(),
        ));
    }
    let act = Action {
        rank,
        cgroups: a.cgroups()?,
        post_action_delay_ns: a.duration("post_action_delay", Some(15_000_000_000))?,
        dry: a.flag("dry")?,
        always_continue: a.flag("always_continue")?,
    };
    a.done()?;
    Ok(act)
}

/// Every `cgroup` the rulesets name, with where (`ruleset[0].actions[1].cgroup`).
pub fn cgroups(conf: &OomdConf) -> impl Iterator<Item = (String, String)> + '_ {
    conf.rulesets.iter().enumerate().flat_map(|(r, rs)| {
        let ds = (rs.groups.iter().enumerate()).flat_map(move |(g, ds)| {
            (ds.iter().enumerate()).flat_map(move |(d, det)| {
                let cs: &[String] = match det {
                    Detector::PressureAbove { cgroups, .. }
                    | Detector::PressureRisingBeyond { cgroups, .. }
                    | Detector::MemoryReclaim { cgroups, .. } => cgroups,
                    Detector::SwapFree { .. } => &[],
                };
                let at = format!("ruleset[{r}].detectors[{g}][{d}].cgroup");
                cs.iter().map(move |c| (at.clone(), c.clone()))
            })
        });
        let acts = (rs.actions.iter().enumerate()).flat_map(move |(a, act)| {
            let at = format!("ruleset[{r}].actions[{a}].cgroup");
            act.cgroups.iter().map(move |c| (at.clone(), c.clone()))
        });
        ds.chain(acts)
    })
}

/// The memcg a `cgroup` entry names: the path itself, or the parent of `PATH/*`'s
/// children ("/" for "/*").
pub fn base(c: &str) -> &str {
    match c.strip_suffix("/*") {
        Some("") => "/",
        Some(p) => p,
        None => c,
    }
}
