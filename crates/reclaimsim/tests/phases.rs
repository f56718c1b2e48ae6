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
    assert!(
        vmstat(&r, "pgpgin") >= 49152 + 4 * refaults,
        "{:?}",
        r.vmstat
    );
    let once = common::run_checked(&text(""));
    assert_eq!(once.workloads["r"].ops, 12288);
    assert_eq!(vmstat(&once, "workingset_refault_file"), 0);
}

/// page_fault3 stops for 20 ms holding its mapping, then loops on for its runtime. Its
/// threads start together: a 2 ms run is shorter than a tick's start spread.
#[test]
fn a_page_fault3_phase_sleeps_then_loops_for_its_runtime() {
    let r = common::run_checked(
        "name = \"t\"\n[machine]\nmemory = \"256MiB\"\ncpus = 2\nstart_jitter = \"0\"\n\
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

/// A memcached populate of `runs` memtier runs, then a GET run; `c` reads a file until
/// the populate phase has finished (an fio job reading every 10 us), and `hog` (if given) runs between the two phases.
fn memcached(runs: u64, hog: bool) -> reclaimsim::results::VariantResult {
    let populate = "[[workload.memcached.phase]]\nname = \"populate\"\nkey-pattern = \"P:P\"\n\
                    ratio = \"1:0\"\ndata-size = 2000\nkey-minimum = 1\nkey-maximum = 12000\nrequests = \"allkeys\"\n\
                    clients = 1\nthreads = 1\n";
    let wait = if hog { "wait-for = \"hog\"\n" } else { "" };
    let hog = if hog {
        "[[workload]]\nname = \"hog\"\ncpus = [1]\nafter = \"m:populate\"\n\
         anon = { size = \"100MiB\" }\n"
    } else {
        ""
    };
    common::run_checked(&format!(
        "name = \"t\"\n[machine]\nmemory = \"128MiB\"\ncpus = 2\n\
         swap = {{ device = \"zram\", size = \"256MiB\" }}\n\
         [[workload]]\nname = \"m\"\ncpus = [0]\n[workload.memcached]\nthreads = 1\n\
         {populate}run-count = {runs}\n\
         [[workload.memcached.phase]]\nname = \"get\"\nratio = \"0:1\"\nkey-pattern = \"R:R\"\n\
         key-maximum = 12000\nrequests = 3000\nclients = 1\nthreads = 1\n{wait}\
         [[workload]]\nname = \"c\"\ncpus = [1]\nuntil = \"m:populate\"\n\
         fio = {{ size = \"8MiB\", rw = \"randread\", time_based = true, runtime = \"100s\", thinktime = \"10us\" }}\n{hog}"
    ))
}

/// A phase that `run-count` repeats finishes after its last run, not its first.
#[test]
fn a_repeated_memcached_phase_finishes_after_its_last_run() {
    let (once, twice) = (memcached(1, false), memcached(2, false));
    assert_eq!(twice.workloads["m:populate"].ops, 24000);
    let (c1, c2) = (once.workloads["c"].ops, twice.workloads["c"].ops);
    assert!(
        c2 * 2 > c1 * 3,
        "c touched {c1} times beside one run, {c2} beside two"
    );
}

/// memcached's GET run waits for a hog that pushed its items out to swap.
#[test]
fn a_memcached_run_waits_for_another_workload_and_swaps_in() {
    let r = memcached(1, true);
    assert_eq!(r.workloads["m:get"].ops, 3000);
    assert!(vmstat(&r, "pswpin") > 0, "{:?}", r.vmstat);
    assert_eq!(vmstat(&memcached(1, false), "pswpin"), 0);
}
