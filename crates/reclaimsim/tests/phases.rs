//! Later phases of dd and page_fault3: the threads stop at a barrier, wait (for a time or
//! for another workload), and do their work again; results come per phase.

mod common;

use common::vmstat;

/// `r` reads a 48 MiB file, waits while `hog` (started after `r`'s first read) takes
/// most of memory, then reads the file again: what reclaim took comes back as file
/// refaults, and only in the second read.
#[test]
fn a_dd_phase_reads_again_after_another_workload_and_refaults() {
    let text = |phase: &str| {
        format!(
            "name = \"t\"\n[machine]\nmemory = \"128MiB\"\ncpus = 2\n\
             [[workload]]\nname = \"r\"\ncpus = [0]\n\
             [workload.dd]\nsize = \"48MiB\"\nsparse = false\n{phase}\
             [[workload]]\nname = \"hog\"\ncpus = [1]\nafter = \"r:run\"\n\
             anon = {{ size = \"100MiB\" }}\n"
        )
    };
    let r = common::run_checked(&text(
        "[[workload.dd.phase]]\nname = \"again\"\nwait_for = \"hog\"\n",
    ));
    assert_eq!(r.workloads["r:run"].ops, 12288);
    assert_eq!(r.workloads["r:again"].ops, 12288);
    let refaults = vmstat(&r, "workingset_refault_file");
    assert!(refaults > 1000, "{:?}", r.vmstat);
    // Read in twice over, less what stayed cached through the hog (KiB).
    assert!(vmstat(&r, "pgpgin") >= 49152 + 4 * refaults, "{:?}", r.vmstat);
    let once = common::run_checked(&text(""));
    assert_eq!(once.workloads["r"].ops, 12288);
    assert_eq!(vmstat(&once, "workingset_refault_file"), 0);
}

/// page_fault3 stops for 20 ms holding its mapping, then loops on for its runtime.
#[test]
fn a_page_fault3_phase_sleeps_then_loops_for_its_runtime() {
    let r = common::run_checked(
        "name = \"t\"\n[machine]\nmemory = \"256MiB\"\ncpus = 2\n\
         [[workload]]\nname = \"p\"\n\
         [workload.page_fault3]\ntasks = 2\nsize = \"4MiB\"\nruntime = \"2ms\"\n\
         [[workload.page_fault3.phase]]\nsleep_until = \"20ms\"\n",
    );
    let (run, again) = (r.workloads["p:run"].ops, r.workloads["p:phase1"].ops);
    assert!(run > 1000 && again > 1000, "{run} {again}");
    // The same runtime, and no new first touches cost the second phase more time.
    assert!(again * 2 > run && again < run * 2, "{run} {again}");
    assert!(r.virtual_time_s >= 0.022, "{}", r.virtual_time_s);
}
