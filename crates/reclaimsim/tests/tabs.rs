//! Chrome OS's tab test (`[workload.tabs]`) through the engine: one renderer per tab,
//! the test's script, and what reclaim does to the tabs not in front.

mod common;

use common::vmstat;

/// 8 tabs of 12 MiB on 64 MiB with zram: the first tabs are swapped out while later
/// ones load, and switching back to them swaps their visible runs in.
fn scenario(tabs: u32) -> String {
    format!(
        "name = \"t\"\n[machine]\nmemory = \"64MiB\"\ncpus = 2\n\
         swap = {{ device = \"zram\", size = \"128MiB\" }}\n\
         [kernel]\npolicy = \"mglru\"\n\
         [[workload]]\nname = \"chrome\"\n\
         [workload.tabs]\ntabs = {tabs}\ntab_size = \"12MiB\"\nload_time = \"50ms\"\n\
         settle = \"100ms\"\n"
    )
}

#[test]
fn the_tabs_load_switch_and_scroll_as_the_script_says() {
    let r = common::run_checked(&scenario(8));
    // 8 loads of 192 runs of 64 KiB.
    assert_eq!(r.workloads["chrome:load"].ops, 8 * 192);
    // Switches: 55 at the start, 10 before each of the 3 later tabs, 3 cold tabs, 55 at
    // the end, each reading 20% of 192 runs (39).
    assert_eq!(
        r.workloads["chrome:switch"].ops,
        (55 + 3 * 10 + 3 + 55) * 39
    );
    // Scrolls: the first 5 tabs once each, and the 5 newest before each later tab.
    assert_eq!(r.workloads["chrome:scroll"].ops, (5 + 3 * 5) * 50);
    // 96 MiB of tabs on 64 MiB: swapped out, and in again on switches.
    assert!(vmstat(&r, "pswpout") > 5000, "{:?}", r.vmstat);
    assert!(vmstat(&r, "pswpin") > 500, "{:?}", r.vmstat);
}

#[test]
fn tabs_that_fit_are_never_swapped() {
    let r = common::run_checked(&scenario(4));
    assert_eq!(vmstat(&r, "pswpout"), 0, "{:?}", r.vmstat);
    assert_eq!(r.workloads["chrome:load"].ops, 4 * 192);
}

/// 16 tabs of 12 MiB on 64 MiB with 64 MiB of zram, with Chrome OS's tab discarding
/// (checked every 10 ms, as the script here runs 100 times faster than the test): as swap
/// fills, resourced's available memory falls below the default critical margin (5.2% of
/// RAM) and Chrome kills the renderer of an unpinned tab (the order: the unit tests of
/// `workload::tabs`); the test stops
/// opening tabs at its loop's next pass, as mempressure.Run does when a tab has gone.
#[test]
fn chrome_discards_a_tab_and_the_test_stops_opening_tabs() {
    let agent = "[[agent]]\nkind = \"chromeos\"\nworkload = \"chrome\"\ninterval = \"10ms\"\n";
    let small_swap = scenario(16).replace("128MiB", "64MiB");
    let without = common::run_checked(&small_swap);
    assert_eq!(without.workloads["chrome:load"].ops, 16 * 192);
    assert!(without.agents.is_empty());
    let with = common::run_checked(&format!("{small_swap}{agent}"));
    let kills = &with.agents[0].kills;
    assert!(!kills.is_empty(), "no discard: {:?}", with.events);
    // An unpinned tab (the first five are pinned), one already opened.
    let victim: usize = kills[0].victims[0]
        .strip_prefix("chrome tab ")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{:?}", kills[0].victims));
    assert!((5..16).contains(&victim), "{victim}");
    assert_eq!(kills[0].action, "discard_tab");
    let loaded = with.workloads["chrome:load"].ops;
    assert!(loaded < 16 * 192, "every tab opened: {loaded} load runs");
    // The tab under way when the discard came finished loading.
    assert_eq!(loaded % 192, 0, "{loaded}");
    // The discarded renderers' memory went with them: what is left in RAM and in zram
    // is the tabs still open (3072 pages each), give or take the swap cache's copies.
    let last = with.timeseries.last().expect("samples");
    let in_ram = last.lru["/"][0] + last.lru["/"][1];
    let swapped = with.zram.as_ref().expect("zram").orig_data_size / 4096;
    let open = (loaded / 192)
        .checked_sub(kills.len() as u64)
        .unwrap_or_else(|| panic!("{} discards of {} tabs", kills.len(), loaded / 192));
    assert!(
        in_ram + swapped <= open * 3072 + 512,
        "{in_ram} + {swapped}, {open} open"
    );
    assert!(vmstat(&with, "pswpout") < vmstat(&without, "pswpout"));
}

#[test]
fn a_chromeos_agent_needs_a_tabs_workload() {
    let bad = format!(
        "{}[[agent]]\nkind = \"chromeos\"\nworkload = \"nope\"\n",
        scenario(4)
    );
    let e = reclaimsim::scenario::parse(&bad, "t.toml", &[], None).unwrap_err();
    assert!(e.to_string().contains("agent[0].workload"), "{e}");
    assert!(
        e.to_string().contains("no [[workload]] named \"nope\""),
        "{e}"
    );
    let senpai = format!(
        "{}[[memcg]]\npath = \"/a\"\n[[agent]]\nkind = \"senpai\"\nmemcg = \"/a\"\nworkload = \"chrome\"\n",
        scenario(4)
    );
    let e = reclaimsim::scenario::parse(&senpai, "t.toml", &[], None).unwrap_err();
    assert!(e.to_string().contains("agent[0].workload"), "{e}");
    assert!(e.to_string().contains("only a chromeos agent"), "{e}");
    let probing = format!(
        "{}[[agent]]\nkind = \"chromeos\"\nworkload = \"chrome\"\nmax_probe = 0.1\n",
        scenario(4)
    );
    let e = reclaimsim::scenario::parse(&probing, "t.toml", &[], None).unwrap_err();
    assert!(e.to_string().contains("agent[0].max_probe"), "{e}");
}
