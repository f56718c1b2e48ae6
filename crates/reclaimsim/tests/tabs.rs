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
