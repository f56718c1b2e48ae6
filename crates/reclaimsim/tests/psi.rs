//! Pressure stall information end to end (docs/model/psi.md, "Pressure stall
//! information"): where tasks stall, whose pressure it is, and that it only observes.

mod common;

use common::{run_checked, vmstat};
use reclaimsim::results::VariantResult;

/// Two memcgs on two CPUs: `/hog` writes 12 MiB of anon memory twice in random order
/// under an 8 MiB memory.max (limit reclaim, swap-outs and refaults); `/quiet` writes
/// 1 MiB over and over far from any limit, with the machine's memory plentiful.
const LIMIT: &str = r#"
name = "psi-limit"
seed = 3
[machine]
memory = "64MiB"
cpus = 2
swap = { device = "zram", size = "32MiB" }
[[memcg]]
path = "/hog"
max = "8MiB"
[[memcg]]
path = "/quiet"
[[workload]]
name = "hog"
memcg = "/hog"
cpus = [0]
[workload.anon]
size = "12MiB"
pattern = "random"
passes = 2
[[workload]]
name = "quiet"
memcg = "/quiet"
cpus = [1]
[workload.anon]
size = "1MiB"
passes = 40
"#;

fn some_full(r: &VariantResult, memcg: &str) -> (u64, u64) {
    let p = &r.memcgs[memcg].pressure;
    (p.some.total, p.full.total)
}

/// The memcg driven over memory.max stalls (limit reclaim in try_charge_memcg, the
/// refaults of its workingset pages), full no more than some; the other memcg never
/// stalls; the root (system-wide) sees the hog's stall over both CPUs; the
/// sampled totals rise and never fall.
#[test]
fn a_memcg_over_its_limit_shows_pressure_and_its_neighbour_none() {
    let r = run_checked(LIMIT);
    let (some, full) = some_full(&r, "/hog");
    assert!(
        some > 0,
        "no pressure in /hog: {:?}",
        r.memcgs["/hog"].pressure
    );
    assert!(full <= some, "full {full} > some {some}");
    assert!(
        some < (r.virtual_time_s * 1e6) as u64,
        "some {some} us past the run"
    );
    assert_eq!(some_full(&r, "/quiet"), (0, 0));
    // The root weights each CPU by its non-idle time: /quiet's busy CPU dilutes it.
    let root = r.pressure.some.total;
    assert!(root > 0, "root {root}, /hog {some}");
    assert_eq!(
        r.memcgs["/"].pressure, r.pressure,
        "the root is system-wide"
    );
    let series: Vec<u64> = (r.timeseries.iter())
        .map(|s| s.pressure["/hog"][0])
        .collect();
    assert!(series.windows(2).all(|w| w[0] <= w[1]), "{series:?}");
    assert!(*series.last().unwrap() > 0, "{series:?}");
    assert!(r.timeseries.iter().all(|s| s.pressure["/quiet"] == [0, 0]));
}

/// Same scenario twice: the same pressure (and everything else) to the bit.
#[test]
fn pressure_is_deterministic() {
    let a = run_checked(LIMIT);
    let b = run_checked(LIMIT);
    assert_eq!(a.without_wall_time(), b.without_wall_time());
}

/// Global pressure that kswapd alone relieves: one memcg with no limit reads a file
/// once through, twice the machine's memory, with kswapd on the other CPU and its
/// watermarks far apart (watermark_scale_factor 10%). No direct reclaim and no
/// refault, so the only stall is kswapd's balance_pgdat: system-wide, in no memcg.
#[test]
fn kswapds_stall_is_system_wide_only() {
    let text = r#"
name = "psi-kswapd"
seed = 1
[machine]
memory = "64MiB"
cpus = 2
[kernel]
kswapd_cpu = [1]
watermark_scale_factor = 1000
[[memcg]]
path = "/w"
[[workload]]
name = "w"
memcg = "/w"
cpus = [0]
[workload.fio]
rw = "read"
size = "128MiB"
"#;
    let r = run_checked(text);
    let (kswapd, direct) = (
        vmstat(&r, "pgsteal_kswapd"),
        vmstat(&r, "allocstall_normal"),
    );
    assert!(
        kswapd > 0 && direct == 0,
        "pgsteal_kswapd {kswapd}, allocstall {direct}"
    );
    assert!(r.pressure.some.total > 0, "{:?}", r.pressure);
    assert_eq!(some_full(&r, "/w"), (0, 0));
}
