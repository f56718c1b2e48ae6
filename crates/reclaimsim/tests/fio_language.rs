//! Whole runs of fio's access language and the anon patterns: the mmap engine faults file
//! pages in, buffered writes dirty the page cache and are written back, job files run
//! (and their unsupported options are located errors), anon stops after `accesses`.

mod common;

use common::vmstat;
use reclaimsim::engine::RunOptions;
use reclaimsim::results::VariantResult;
use reclaimsim::scenario;

/// A 256 MiB machine running `workloads` (TOML `[[workload]]` tables).
fn run(workloads: &str) -> VariantResult {
    let text = format!("name = \"t\"\n[machine]\nmemory = \"256MiB\"\ncpus = 2\n{workloads}");
    common::run_checked(&text)
}

fn fio(options: &str) -> VariantResult {
    run(&format!(
        "[[workload]]\nname = \"f\"\n[workload.fio]\n{options}"
    ))
}

#[test]
fn mmap_engine_faults_file_pages_in_and_psync_does_not() {
    let r = fio("rw = \"randread\"\nioengine = \"mmap\"\nsize = \"8MiB\"");
    assert_eq!(r.workloads["f"].ops, 2048);
    assert_eq!(
        (vmstat(&r, "pgfault"), vmstat(&r, "pgmajfault")),
        (2048, 2048)
    );
    assert_eq!(vmstat(&r, "pgpgin"), 8192, "each page read in once (KiB)");
    let r = fio("rw = \"randread\"\nsize = \"8MiB\"");
    assert_eq!((vmstat(&r, "pgfault"), vmstat(&r, "pgpgin")), (0, 8192));
}

#[test]
fn buffered_and_mapped_writes_dirty_pages_that_writeback_writes() {
    // 64 MiB dirtied is above the background threshold of a 256 MiB machine: the
    // flusher writes while the job runs, and a whole-page write reads nothing in.
    let r = fio("rw = \"write\"\nsize = \"64MiB\"");
    assert_eq!(vmstat(&r, "nr_dirtied"), 16384);
    assert!(
        vmstat(&r, "nr_written") > 0 && vmstat(&r, "pgpgout") > 0,
        "{:?}",
        r.vmstat
    );
    assert_eq!(vmstat(&r, "pgpgin"), 0);
    let r = fio("rw = \"randrw\"\nrwmixread = 50\nioengine = \"mmap\"\nsize = \"8MiB\"");
    assert!(vmstat(&r, "nr_dirtied") > 500, "{:?}", r.vmstat);
    assert!(vmstat(&r, "pgmajfault") > 0);
}

/// A scenario in a fresh directory whose workload reads `job.fio` (written there).
fn with_jobfile(test: &str, jobfile: &str) -> (std::path::PathBuf, String) {
    let d = std::env::temp_dir().join(format!("reclaimsim-fio-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("job.fio"), jobfile).unwrap();
    let text = "name = \"j\"\n[machine]\nmemory = \"256MiB\"\n\n[[workload]]\nname = \"j\"\n\
                [workload.fio]\njobfile = \"job.fio\"\n";
    std::fs::write(d.join("s.toml"), text).unwrap();
    (d, text.to_string())
}

#[test]
fn a_job_file_runs_one_workload_per_job() {
    let (d, _) = with_jobfile(
        "runs",
        "[global]\nsize=16m\n\n[writer]\nrw=write\n\n[reader]\nstonewall\nrw=randread\n\
         random_distribution=zoned:90/10:10/90\nnumber_ios=1000\n",
    );
    let loaded = scenario::load(&d.join("s.toml"), &[], None).unwrap();
    let w = &loaded.base.workloads;
    assert_eq!(w.len(), 2);
    assert_eq!(
        (w[0].name.as_str(), w[1].name.as_str()),
        ("j.writer", "j.reader")
    );
    assert_eq!(w[1].after.as_deref(), Some("j.writer"));
    let r = reclaimsim::results::run(&loaded.base, "base", RunOptions::default()).unwrap();
    assert_eq!(r.workloads["j.writer"].ops, 4096);
    assert_eq!(r.workloads["j.reader"].ops, 1000);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn job_file_errors_name_the_job_file_line_and_option() {
    let (d, _) = with_jobfile("bad", "[global]\nsize=16m\n[j]\nfsync=32\n");
    let e = scenario::load(&d.join("s.toml"), &[], None).unwrap_err();
    let job = d.join("job.fio").display().to_string();
    assert_eq!(
        (e.file.as_str(), e.line, e.field.as_str()),
        (job.as_str(), Some(4), "fsync")
    );
    assert!(
        e.to_string().starts_with(&format!("{job}:4: fsync: ")),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
    // The scenario's own mistakes stay in the scenario.
    let (d, text) = with_jobfile("mixed", "[j]\nsize=1m\n");
    let text = text.replace(
        "jobfile = \"job.fio\"\n",
        "jobfile = \"job.fio\"\nnumjobs = 2\n",
    );
    let e = scenario::parse(&text, &d.join("s.toml").display().to_string(), &[], None).unwrap_err();
    assert_eq!(
        (e.line, e.field.as_str()),
        (Some(9), "workload[0].fio.numjobs"),
        "{e}"
    );
    let e = scenario::parse(
        &text.replace("numjobs = 2\n", ""),
        "elsewhere/s.toml",
        &[],
        None,
    )
    .unwrap_err();
    assert_eq!(
        (e.line, e.field.as_str()),
        (Some(8), "workload[0].fio.jobfile"),
        "{e}"
    );
    assert!(
        e.message
            .starts_with("cannot read fio job file elsewhere/job.fio"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn anon_stops_after_accesses_and_reports_populate_apart() {
    let r = run("[[workload]]\nname = \"a\"\n[workload.anon]\nsize = \"4MiB\"\npopulate = true\n\
                 accesses = 3000\nrwmixread = 100\n\
                 mix = [{ weight = 9, to = 10 }, { weight = 1, from = 10, pattern = \"zipf:0.9\" }]");
    assert_eq!(r.workloads["a:populate"].ops, 1024);
    assert_eq!(r.workloads["a:run"].ops, 3000);
    // Populate's stores fault every page in; the loads after it hit.
    assert_eq!(vmstat(&r, "pgfault"), 1024);
}

/// The idle-job measurement: `a` writes its region, sleeps holding it while `b` (started
/// after `a`'s first phase) pushes it out to swap, and once `b` has finished touches it
/// again: the second touch refaults what reclaim took, reported as its own phase.
#[test]
fn an_anon_phase_waits_for_another_workload_and_refaults() {
    let r = common::run_checked(
        "name = \"t\"\n[machine]\nmemory = \"128MiB\"\ncpus = 2\n\
         swap = { device = \"zram\", size = \"256MiB\" }\n\
         [[workload]]\nname = \"a\"\n[workload.anon]\nsize = \"48MiB\"\n\
         [[workload.anon.phase]]\nname = \"again\"\nwait_for = \"b\"\nwrite = false\n\
         [[workload]]\nname = \"b\"\nafter = \"a:run\"\nanon = { size = \"96MiB\" }\n",
    );
    assert_eq!(r.workloads["a:run"].ops, 12288);
    assert_eq!(r.workloads["a:again"].ops, 12288);
    assert!(vmstat(&r, "pswpin") > 0, "{:?}", r.vmstat);
    assert!(vmstat(&r, "workingset_refault_anon") > 0);
}

/// fio's idle-job measurement: `f` reads its 48 MiB file into memcg /f, sleeps holding
/// it while `hog` (started after `f`'s first phase) fills the machine with anon memory,
/// and once `hog` has finished reads the file again: what reclaim took from the idle job
/// is read in again and counted as /f's file refaults. A hog that fits takes nothing.
fn fio_then_hog(hog: &str) -> VariantResult {
    common::run_checked(&format!(
        "name = \"t\"\n[machine]\nmemory = \"128MiB\"\ncpus = 2\n\
         [[memcg]]\npath = \"/f\"\n[[memcg]]\npath = \"/h\"\n\
         [[workload]]\nname = \"f\"\nmemcg = \"/f\"\n[workload.fio]\nsize = \"48MiB\"\n\
         [[workload.fio.phase]]\nname = \"again\"\nwait_for = \"hog\"\n\
         [[workload]]\nname = \"hog\"\nmemcg = \"/h\"\nafter = \"f:run\"\n\
         anon = {{ size = \"{hog}\" }}\n"
    ))
}

#[test]
fn a_fio_phase_waits_for_another_workload_and_refaults() {
    let r = fio_then_hog("96MiB");
    assert_eq!(r.workloads["f:run"].ops, 12288);
    assert_eq!(r.workloads["f:again"].ops, 12288);
    // The hog (96 MiB of 128) leaves no room for the idle file: every page was
    // evicted, and the second read brings each in again as a refault of /f.
    let refaults = |r: &VariantResult| common::memcg_stat(r, "/f", "workingset_refault_file");
    assert_eq!(refaults(&r), 12288);
    assert_eq!(
        vmstat(&r, "pgpgin"),
        2 * 48 * 1024,
        "the file read in twice (KiB)"
    );
    let quiet = fio_then_hog("8MiB");
    assert_eq!(quiet.workloads["f:again"].ops, 12288);
    assert_eq!(refaults(&quiet), 0);
    assert_eq!(
        vmstat(&quiet, "pgpgin"),
        48 * 1024,
        "the second read hits the cache"
    );
}
