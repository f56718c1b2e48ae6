//! `reclaimsim trace`: the model's policies beside libCacheSim's on one trace and cache size.

use crate::cli::RunFlags;
use crate::common::{run_variants, Failure, Job, RunSettings};
use clap::Args;
use reclaimsim::kernel::config::PluginConfig;
use reclaimsim::kernel::lru::plugin::examples::NAMES;
use reclaimsim::results::VariantResult;
use reclaimsim::scenario::config::{PolicyKind, Scenario, SwapConfig, SwapDevice};
use reclaimsim::units::{parse_size, ByteSize, PAGE_SIZE};
use reclaimsim::workload::trace::format::Format;
use std::path::PathBuf;

/// The script that runs libCacheSim's policies (tools/libcachesim_compare.py).
const COMPARE_PY: &str = include_str!("../../../../tools/libcachesim_compare.py");

#[derive(Args)]
pub struct TraceArgs {
    /// The trace (oracleGeneral, csv, txt or page format; zstd-compressed too).
    trace: PathBuf,
    /// The cache: what the trace's memcg may hold (its memory.max), e.g. 256MiB.
    #[arg(long, value_name = "SIZE")]
    cache_size: String,
    /// oracleGeneral, csv, txt or page (default: from the file's name).
    #[arg(long, value_name = "FORMAT")]
    format: Option<String>,
    /// Every object is one page (libCacheSim's ignore_obj_size): miss ratios count requests.
    #[arg(long)]
    ignore_obj_size: bool,
    /// csv: the 1-based column of the object id (default: the header's `obj_id`).
    #[arg(long, value_name = "N")]
    obj_id_col: Option<usize>,
    /// csv: the 1-based column of the object size (default: the header's `obj_size`).
    #[arg(long, value_name = "N")]
    obj_size_col: Option<usize>,
    /// csv: the field delimiter (default `,`).
    #[arg(long, value_name = "CHAR")]
    delimiter: Option<char>,
    /// csv: whether the first line is a header (default true).
    #[arg(long, value_name = "BOOL")]
    has_header: Option<bool>,
    /// Leave libCacheSim's policies out even when its Python package is installed.
    #[arg(long)]
    no_libcachesim: bool,
    /// Also run these reclaim plugins (kernel.policy = "plugin"), comma-separated:
    /// fifo, mru, lfu, s3fifo.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    plugins: Vec<String>,
    #[command(flatten)]
    runs: RunFlags,
}

/// The model's rows: a name and the kernel switches that make it.
const POLICIES: [(&str, PolicyKind, bool); 3] = [
    ("classic", PolicyKind::Classic, false),
    ("mglru", PolicyKind::Mglru, false),
    ("mglru page_cache_fix", PolicyKind::Mglru, true),
];

/// A row of the model: its name, policy, page_cache_fix and plugin.
type Row = (String, PolicyKind, bool, Option<PluginConfig>);

/// `POLICIES`, then a row per `--plugins` name.
fn rows(a: &TraceArgs) -> Result<Vec<Row>, Failure> {
    let mut rows: Vec<Row> = POLICIES
        .iter()
        .map(|&(name, policy, fix)| (name.to_string(), policy, fix, None))
        .collect();
    for name in &a.plugins {
        if !NAMES.contains(&name.as_str()) {
            return Err(Failure::Input(format!(
                "--plugins: no plugin \"{name}\" (there are: {})",
                NAMES.join(", ")
            )));
        }
        let plugin = PluginConfig {
            name: name.clone(),
            memcg: None,
            pages: Default::default(),
        };
        rows.push((
            format!("plugin {name}"),
            PolicyKind::Plugin,
            false,
            Some(plugin),
        ));
    }
    Ok(rows)
}

pub fn trace(a: &TraceArgs) -> Result<(), Failure> {
    let cache =
        parse_size(&a.cache_size).map_err(|e| Failure::Input(format!("--cache-size: {e}")))?;
    if cache < 16 * PAGE_SIZE {
        return Err(Failure::Input("--cache-size: at least 64KiB".into()));
    }
    let base = scenario(a, cache)?;
    let options = base.workloads[0].trace.as_ref().expect("a trace workload");
    let summary = options.summary().map_err(Failure::Input)?;
    let rows = rows(a)?;
    let scenarios: Vec<Scenario> = rows
        .iter()
        .map(|(_, policy, fix, plugin)| {
            let mut s = base.clone();
            s.kernel.policy = *policy;
            s.kernel.page_cache_fix = *fix;
            s.kernel.plugin = plugin.clone();
            if summary.anon_pages > 0 {
                let size = ByteSize(summary.anon_pages * PAGE_SIZE);
                s.machine.swap = Some(SwapConfig {
                    device: SwapDevice::Zram,
                    profile: None,
                    size,
                    zswap: None,
                    mem_limit: None,
                    comp_algorithm: None,
                    backing_dev: None,
                });
            }
            s
        })
        .collect();
    let jobs: Vec<Job> = (scenarios.iter().zip(&rows))
        .map(|(s, (name, ..))| Job {
            scenario: s,
            name: name.to_string(),
            file: &a.trace,
        })
        .collect();
    let settings = RunSettings {
        check: false,
        quiet: a.runs.quiet,
        allow_long: a.runs.allow_long,
        set_duration: false,
    };
    let results = run_variants(&jobs, &settings)?;
    let lcs = if a.no_libcachesim {
        Ok(Vec::new())
    } else {
        libcachesim(a, cache)
    };
    print_table(a, cache, &summary, &results, lcs);
    Ok(())
}

/// Prints the miss-ratio table: the model's policies, then libCacheSim's rows or why
/// there are none.
fn print_table(
    a: &TraceArgs,
    cache: u64,
    summary: &reclaimsim::workload::trace::Summary,
    results: &[VariantResult],
    lcs: Result<Vec<(String, f64)>, String>,
) {
    let unit = if a.ignore_obj_size {
        "requests"
    } else {
        "pages"
    };
    println!(
        "{}: {} requests, {} distinct pages; cache {} ({} pages)",
        a.trace.display(),
        summary.requests,
        summary.file_pages + summary.anon_pages,
        a.cache_size,
        cache / PAGE_SIZE
    );
    println!(
        "{:<34} {:>10} {:>12} {:>12}",
        "policy", "miss ratio", "misses", unit
    );
    for ((name, ..), r) in POLICIES.iter().zip(results) {
        let (misses, touched) = misses(r, summary.anon_pages);
        let ratio = misses as f64 / touched.max(1) as f64;
        println!(
            "{:<34} {ratio:>10.4} {misses:>12} {touched:>12}",
            format!("model {name}")
        );
    }
    match lcs {
        Ok(rows) => {
            for (name, ratio) in rows {
                println!("{:<34} {ratio:>10.4}", format!("libCacheSim {name}"));
            }
        }
        Err(why) => println!("libCacheSim: {why}"),
    }
}

/// A run's misses, and the pages it touched: pages read from the device (pgpgin counts
/// KiB) or from swap (pswpin: 6.1's zram and brd swap-ins skip submit_bio, so pgpgin
/// leaves them out) plus first touches of anonymous pages.
fn misses(r: &VariantResult, anon_pages: u64) -> (u64, u64) {
    let get = |k: &str| r.vmstat.get(k).copied().unwrap_or(0);
    (
        get("pgpgin") / 4 + get("pswpin") + anon_pages,
        r.page_accesses,
    )
}

/// The scenario that replays the trace in a memcg of `cache` bytes on a machine with
/// room to spare, so that only the memcg's limit reclaims.
fn scenario(a: &TraceArgs, cache: u64) -> Result<Scenario, Failure> {
    let path = std::path::absolute(&a.trace)
        .map_err(|e| Failure::Input(format!("{}: {e}", a.trace.display())))?;
    let quote = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let mut trace = format!("path = {}\n", quote(&path.to_string_lossy()));
    let mut option = |key: &str, value: Option<String>| {
        if let Some(v) = value {
            trace += &format!("{key} = {v}\n");
        }
    };
    option("format", a.format.as_deref().map(quote));
    option("ignore_obj_size", a.ignore_obj_size.then(|| "true".into()));
    option("obj_id_col", a.obj_id_col.map(|c| c.to_string()));
    option("obj_size_col", a.obj_size_col.map(|c| c.to_string()));
    option("delimiter", a.delimiter.map(|d| quote(&d.to_string())));
    option("has_header", a.has_header.map(|h| h.to_string()));
    let memory = 2 * cache + (64 << 20);
    let text = format!(
        "name = \"trace\"\n[machine]\nmemory = {memory}\ncpus = 2\n\
         [[memcg]]\npath = \"/trace\"\nmax = {cache}\n\
         [[workload]]\nname = \"trace\"\nmemcg = \"/trace\"\ncpus = [0]\n[workload.trace]\n{trace}"
    );
    let loaded = reclaimsim::scenario::parse(&text, "trace", &[], None)
        .map_err(|e| Failure::Input(e.message))?;
    Ok(loaded.base)
}

/// libCacheSim's policies on the same trace and cache size (tools/libcachesim_compare.py),
/// or why they are not there.
fn libcachesim(a: &TraceArgs, cache: u64) -> Result<Vec<(String, f64)>, String> {
    let python = std::env::var("RECLAIMSIM_PYTHON").unwrap_or_else(|_| "python3".into());
    let installed = std::process::Command::new(&python)
        .args(["-c", "import libcachesim"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        return Err(format!(
            "not installed for {python}; `{python} -m pip install libcachesim==0.3.5` adds its \
             LRU, ARC, S3-FIFO, SIEVE and others to this table"
        ));
    }
    let format = match &a.format {
        Some(f) => Format::parse(f)?,
        None => Format::from_name(&a.trace).ok_or("cannot tell the trace's format")?,
    };
    if format == Format::Page {
        return Err("reads no page-format trace".into());
    }
    let request = serde_json::json!({
        "path": a.trace,
        "format": format.name(),
        "cache_bytes": cache,
        "ignore_obj_size": a.ignore_obj_size,
        "obj_id_col": a.obj_id_col,
        "obj_size_col": a.obj_size_col,
        "delimiter": a.delimiter,
        "has_header": a.has_header,
    });
    let out = std::process::Command::new(&python)
        .args(["-c", COMPARE_PY, &request.to_string()])
        .output()
        .map_err(|e| format!("cannot start {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse_rows(&String::from_utf8_lossy(&out.stdout))
}

/// The script's `NAME<TAB>MISS_RATIO` lines.
fn parse_rows(text: &str) -> Result<Vec<(String, f64)>, String> {
    text.lines()
        .map(|l| {
            let (name, ratio) = l
                .split_once('\t')
                .ok_or(format!("unexpected output: {l}"))?;
            let ratio = ratio
                .parse()
                .map_err(|_| format!("unexpected output: {l}"))?;
            Ok((name.to_string(), ratio))
        })
        .collect()
}
