//! Unit tests of `fio.rs`.

use super::*;

fn options(toml_text: &str) -> FioOptions {
    toml::from_str(toml_text).unwrap()
}

fn build(toml_text: &str) -> Fio {
    Fio::new(&options(toml_text), 3).unwrap()
}

/// The next `n` touches of `thread` (one per operation).
fn touches(w: &mut Fio, thread: usize, n: usize) -> Vec<Touch> {
    let mut out = Vec::new();
    for _ in 0..n {
        assert!(matches!(w.next(thread, 0, &mut out), Step::Op { .. }));
    }
    out
}

fn reads(w: &mut Fio, thread: usize, n: usize) -> Vec<u64> {
    touches(w, thread, n)
        .into_iter()
        .map(|t| match t {
            Touch::Read { index, .. } => index,
            _ => panic!("unexpected touch {t:?}"),
        })
        .collect()
}

#[test]
fn randread_map_reads_every_block_once_per_pass() {
    let mut w = build("rw='randread'\nsize=4004000\ntime_based=true\nruntime=1");
    let n = w.geometry.blocks as usize;
    assert_eq!(n, 978);
    let mut passes = Vec::new();
    for _ in 0..2 {
        let mut seen = reads(&mut w, 0, n);
        passes.push(seen.clone());
        seen.sort_unstable();
        assert_eq!(seen, (0..n as u64).collect::<Vec<_>>());
    }
    assert_ne!(passes[0], passes[1], "each pass has its own order");
}

#[test]
fn sequential_stops_after_one_pass_unless_time_based() {
    let mut w = build("size='16k'\nnumjobs=2");
    assert_eq!(reads(&mut w, 1, 4), vec![0, 1, 2, 3]);
    assert_eq!(w.next(1, 0, &mut Vec::new()), Step::Done);
    let mut w = build("size='8k'\ntime_based=true\nramp_time=1\nruntime=2");
    assert_eq!(reads(&mut w, 0, 4), vec![0, 1, 0, 1]);
    assert!(!w.measured(0, 999_999_999) && w.measured(0, 1_000_000_000));
    assert_eq!(w.next(0, 3_000_000_000, &mut Vec::new()), Step::Done);
}

#[test]
fn deterministic_per_seed() {
    let o = options("rw='randread'\nsize='1m'\nnumjobs=2\nrandom_distribution='zipf:0.5'");
    let stream = |seed| reads(&mut Fio::new(&o, seed).unwrap(), 1, 200);
    assert_eq!(stream(5), stream(5));
    assert_ne!(stream(5), stream(6));
}

#[test]
fn rwmixread_splits_reads_and_writes() {
    let mut w = build("rw='randrw'\nrwmixread=70\nsize='4m'\nnorandommap=true");
    let t = touches(&mut w, 0, 1000);
    let reads = t.iter().filter(|t| matches!(t, Touch::Read { .. })).count();
    assert!((650..750).contains(&reads), "{reads} reads of 1000");
    assert!(t
        .iter()
        .all(|t| matches!(t, Touch::Read { .. } | Touch::Write { .. })));
    // A sequential mix keeps one position per direction, as fio's last_pos[ddir].
    let mut w = build("rw='rw'\nsize='4m'");
    let t = touches(&mut w, 0, 6);
    let next = |pick: fn(&Touch) -> Option<u64>| t.iter().filter_map(pick).collect::<Vec<_>>();
    let r = next(|t| {
        if let Touch::Read { index, .. } = *t {
            Some(index)
        } else {
            None
        }
    });
    let wr = next(|t| {
        if let Touch::Write { index, .. } = *t {
            Some(index)
        } else {
            None
        }
    });
    assert_eq!(r, (0..r.len() as u64).collect::<Vec<_>>());
    assert_eq!(wr, (0..wr.len() as u64).collect::<Vec<_>>());
    assert_eq!(
        touches(&mut build("rw='write'\nsize='4k'"), 0, 1),
        [Touch::Write { file: 0, index: 0 }]
    );
}

/// The directions (true: write) of `thread`'s next `n` I/Os.
fn directions(w: &mut Fio, thread: usize, n: usize) -> Vec<bool> {
    (touches(w, thread, n).iter())
        .map(|t| matches!(t, Touch::Write { .. } | Touch::Mem { write: true, .. }))
        .collect()
}

/// Checks fio's rule on a stream of directions: a run that starts with a switch lasts
/// until its direction has issued the other's count × its share (at least one I/O).
/// Returns how many runs were kept longer than one I/O to catch up.
fn check_runs(dirs: &[bool], read_percent: u64) -> usize {
    let (mut issues, mut forced, mut i) = ([0u64; 2], 0, 0);
    while i < dirs.len() {
        let d = usize::from(dirs[i]);
        let run = dirs[i..].iter().take_while(|&&x| x == dirs[i]).count();
        if i > 0 {
            let share = if d == 1 {
                100 - read_percent
            } else {
                read_percent
            };
            let owed = (issues[1 - d] * share / 100).saturating_sub(issues[d]) as usize;
            let whole = i + run == dirs.len();
            assert!(
                run >= owed.max(1) || whole,
                "run of {run} at {i}, owed {owed}"
            );
            forced += usize::from(owed > 1);
        }
        issues[d] += run as u64;
        i += run;
    }
    forced
}

#[test]
fn rwmix_keeps_a_direction_until_it_has_caught_up_and_holds_the_share() {
    let mut w = build("rw='randrw'\nrwmixread=70\nsize='4m'\nnorandommap=true\nloops=100");
    let dirs = directions(&mut w, 0, 100_000);
    let reads = dirs.iter().filter(|&&w| !w).count();
    assert!(
        (69_000..=71_000).contains(&reads),
        "{reads} reads: 70% ± 1%"
    );
    check_runs(&dirs, 70);
    // A direction falls behind its share early on (after a run of draws the other
    // way); fio then keeps it for the I/Os it owes.
    let mut w = build("rw='rw'\nsize='4m'\nnumjobs=32");
    let forced: usize = (0..32)
        .map(|j| check_runs(&directions(&mut w, j, 200), 50))
        .sum();
    assert!(
        forced >= 10,
        "{forced} runs kept to catch up (13 with this seed)"
    );
}

#[test]
fn mmap_maps_each_file_and_touches_it() {
    let mut w = build("rw='randwrite'\nioengine='mmap'\nsize='64k'\nnrfiles=2\nnumjobs=2");
    let l = w.layout();
    assert_eq!(l.files.len(), 4);
    assert_eq!(
        l.processes[1].regions,
        [RegionSpec::File { file: 2 }, RegionSpec::File { file: 3 }]
    );
    assert_eq!(l.thread_process, [Some(0), Some(1)]);
    for t in touches(&mut w, 1, 16) {
        assert!(
            matches!(
                t,
                Touch::Mem {
                    region: 0 | 1,
                    page: 0..8,
                    write: true
                }
            ),
            "{t:?}"
        );
    }
    assert_eq!(w.next(1, 0, &mut Vec::new()), Step::Done);
}

#[test]
fn files_offset_and_service_types() {
    // Two files of 12 pages, I/O in pages 4..8 of each, one file after the other.
    let text =
        "size='32k'\nnrfiles=2\nfilesize='48k'\noffset='16k'\nfile_service_type='sequential'";
    let mut w = build(text);
    assert_eq!(w.layout().files[1].pages, 12);
    let t = touches(&mut w, 0, 8);
    let want: Vec<Touch> = (0..2)
        .flat_map(|file| (4..8).map(move |index| Touch::Read { file, index }))
        .collect();
    assert_eq!(t, want);
    let mut w = build("size='32k'\nnrfiles=2");
    let files: Vec<u32> = touches(&mut w, 0, 4)
        .iter()
        .map(|t| {
            if let Touch::Read { file, .. } = *t {
                file
            } else {
                9
            }
        })
        .collect();
    assert_eq!(files, [0, 1, 0, 1], "roundrobin");
}

#[test]
fn io_size_loops_and_number_ios_bound_the_job() {
    let count = |text: &str| {
        let mut w = build(text);
        let mut n = 0;
        while let Step::Op { .. } = w.next(0, 0, &mut Vec::new()) {
            n += 1;
        }
        n
    };
    assert_eq!(count("size='64k'"), 16);
    assert_eq!(count("size='64k'\nio_size='32k'"), 8);
    assert_eq!(count("size='64k'\nio_limit='32k'\nloops=3"), 24);
    assert_eq!(count("size='64k'\nloops=2\nnumber_ios=20"), 20);
    assert_eq!(
        count("size='64k'\ntime_based=true\nruntime=1\nnumber_ios=100"),
        100
    );
}

#[test]
fn thinktime_sleeps_between_ios() {
    let mut w = build("size='64k'\nthinktime='50us'");
    let mut out = Vec::new();
    assert!(matches!(w.next(0, 0, &mut out), Step::Op { .. }));
    assert_eq!(w.next(0, 1000, &mut out), Step::Sleep { until_ns: 51_000 });
    assert!(matches!(w.next(0, 51_000, &mut out), Step::Op { .. }));
}

#[test]
fn distributions_and_lfsr() {
    let mut w = build("rw='randread'\nsize='400k'\nrandom_distribution='zoned:100/10'");
    assert!(reads(&mut w, 0, 100).iter().all(|&b| b < 10));
    // lfsr covers every block once per pass even with norandommap.
    let mut w = build("rw='randread'\nsize='40k'\nnorandommap=true\nrandom_generator='lfsr'");
    let mut seen = reads(&mut w, 0, 10);
    seen.sort_unstable();
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
}

/// Every step of `thread` at `now_ns` until one that is not an operation, with the
/// touches of the operations.
fn steps(w: &mut Fio, thread: usize, now_ns: u64) -> (Vec<Step>, Vec<Touch>) {
    let (mut steps, mut out) = (Vec::new(), Vec::new());
    loop {
        let step = w.next(thread, now_ns, &mut out);
        steps.push(step);
        if !matches!(step, Step::Op { .. }) {
            return (steps, out);
        }
    }
}

#[test]
fn phases_override_the_pattern_and_meet_at_barriers() {
    let text = "size='16k'\nnumjobs=2\n[[phase]]\nname='again'\nsleep_until='1s'\n\
                    wait_for='hog'\nrw='randwrite'\nnumber_ios=3\n[[phase]]";
    let mut w = build(text);
    assert_eq!(w.phases(), ["run", "again", "phase2"]);
    assert_eq!(w.waits_for(1), Some("hog"));
    assert_eq!((w.waits_for(0), w.waits_for(2)), (None, None));
    let op = |phase| Step::Op { phase, bytes: 4096 };
    let (s, t) = steps(&mut w, 1, 0);
    assert_eq!(s, [op(0), op(0), op(0), op(0), Step::Barrier]);
    let files: Vec<u32> = (t.iter())
        .map(|t| match *t {
            Touch::Read { file, .. } => file,
            _ => panic!("{t:?}"),
        })
        .collect();
    assert_eq!(files, [1; 4], "clone 1 reads its own file");
    // The phase sleeps until 1 s, then writes 3 random blocks of the same file.
    let (s, _) = steps(&mut w, 1, 0);
    assert_eq!(s, [Step::Sleep { until_ns: SECOND }]);
    let (s, t) = steps(&mut w, 1, SECOND);
    assert_eq!(s, [op(1), op(1), op(1), Step::Barrier]);
    assert!(t.iter().all(|t| matches!(
        t,
        Touch::Write {
            file: 1,
            index: 0..4
        }
    )));
    // The last phase is the job's own pattern again: one sequential pass.
    let (s, t) = steps(&mut w, 1, SECOND);
    assert_eq!(s, [op(2), op(2), op(2), op(2), Step::Done]);
    assert_eq!(t[3], Touch::Read { file: 1, index: 3 });
}

const SECOND: u64 = 1_000_000_000;

#[test]
fn a_phase_runtime_counts_from_its_start_and_ramp_time_is_the_first_phases() {
    let text = "size='8k'\ntime_based=true\nramp_time=1\nruntime=1\n\
                    [[phase]]\nruntime=3\nthinktime='1s'";
    let mut w = build(text);
    assert!(!w.measured(0, 0) && w.measured(1, 0));
    assert!(matches!(
        w.next(0, 0, &mut Vec::new()),
        Step::Op { phase: 0, .. }
    ));
    assert_eq!(w.next(0, 2 * SECOND, &mut Vec::new()), Step::Barrier);
    // The phase starts at 5 s and ends 3 s later; thinktime is the phase's.
    let mut out = Vec::new();
    assert!(matches!(
        w.next(0, 5 * SECOND, &mut out),
        Step::Op { phase: 1, .. }
    ));
    let think = w.next(0, 5 * SECOND, &mut out);
    assert_eq!(
        think,
        Step::Sleep {
            until_ns: 6 * SECOND
        }
    );
    assert!(matches!(
        w.next(0, 7 * SECOND, &mut out),
        Step::Op { phase: 1, .. }
    ));
    assert_eq!(w.next(0, 8 * SECOND, &mut out), Step::Done);
}

#[test]
fn each_phase_has_its_own_deterministic_random_stream() {
    let text = "rw='randread'\nsize='1m'\nnumjobs=2\n[[phase]]\n[[phase]]";
    let per_phase = |seed| {
        let mut w = Fio::new(&options(text), seed).unwrap();
        (0..3).map(|_| steps(&mut w, 1, 0).1).collect::<Vec<_>>()
    };
    let a = per_phase(5);
    assert_eq!(a, per_phase(5));
    assert_ne!(a, per_phase(6));
    assert!(
        a[0] != a[1] && a[1] != a[2],
        "each phase draws its own order"
    );
    // The first phase is the job's stream as it was without phases.
    let without = steps(
        &mut Fio::new(&options("rw='randread'\nsize='1m'\nnumjobs=2"), 5).unwrap(),
        1,
        0,
    );
    assert_eq!(a[0], without.1);
}

#[test]
fn rejects_bad_phases_naming_the_phase() {
    let err = |t: &str| {
        Fio::new(&options(&format!("size='1m'\n{t}")), 0)
            .err()
            .unwrap()
    };
    let phase = "[[phase]]\n";
    let starts = |t: &str, want: &str| {
        let e = err(&format!("{phase}{t}"));
        assert!(e.starts_with(want), "{t}: {e}");
    };
    starts("name='run'", "fio.phase[0].name:");
    starts("name='a:b'", "fio.phase[0].name:");
    starts("rw='randtrim'", "fio.phase[0].rw:");
    starts("rwmixread=101", "fio.phase[0].rwmixread:");
    starts(
        "random_distribution='zipf:1'",
        "fio.phase[0].random_distribution:",
    );
    starts("random_generator='mt'", "fio.phase[0].random_generator:");
    starts("loops=0", "fio.phase[0].loops");
    starts("io_size='1k'", "fio.phase[0].io_size:");
    starts("time_based=true", "fio.phase[0].runtime:");
    starts("runtime=0", "fio.phase[0].runtime:");
    let e = err(&format!("{phase}{phase}name='phase1'"));
    assert!(e.starts_with("fio.phase[1].name:"), "{e}");
    // The files and the engine are the job's: a phase cannot change them.
    for field in [
        "size='2m'",
        "numjobs=2",
        "ioengine='mmap'",
        "offset='4k'",
        "ramp_time=1",
    ] {
        let e = toml::from_str::<FioOptions>(&format!("size='1m'\n{phase}{field}"));
        let e = e.unwrap_err().to_string();
        assert!(e.contains("unknown field"), "{field}: {e}");
    }
}

#[test]
fn zoned_lists_per_direction_send_reads_and_writes_apart() {
    // Reads to the first 10% of the region, writes to the last 10% (fio's
    // `zoned:R,W,T`; the trims' list is checked and dropped).
    let text = "rw='randrw'\nsize='400k'\nloops=20\n\
                    random_distribution='zoned:100/10,0/90:100/10,50/50:50/50'";
    let t = touches(&mut build(text), 0, 2000);
    let reads: Vec<u64> = (t.iter())
        .filter_map(|t| match *t {
            Touch::Read { index, .. } => Some(index),
            _ => None,
        })
        .collect();
    let writes: Vec<u64> = (t.iter())
        .filter_map(|t| match *t {
            Touch::Write { index, .. } => Some(index),
            _ => None,
        })
        .collect();
    assert!(reads.len() > 900 && writes.len() > 900);
    assert!(reads.iter().all(|&b| b < 10), "{reads:?}");
    assert!(writes.iter().all(|&b| b >= 90), "{writes:?}");
    // An empty list is uniform for its direction; a bad one is the option's error.
    let text = "rw='randwrite'\nsize='400k'\nloops=5\nrandom_distribution='zoned:100/10,'";
    let t = touches(&mut build(text), 0, 500);
    assert!(t
        .iter()
        .any(|t| matches!(t, Touch::Write { index: 10.., .. })));
    let e = Fio::new(
        &options("size='1m'\nrandom_distribution='zoned:100/10,90/10'"),
        0,
    );
    assert!(e
        .err()
        .unwrap()
        .starts_with("fio.random_distribution: write zones"));
}

#[test]
fn rejects_bad_options() {
    let err = |t: &str| Fio::new(&options(t), 0).err().unwrap();
    assert!(err("size='1m'\nbs='8k'").starts_with("fio.bs:"));
    assert!(err("size=0").starts_with("fio.size:"));
    assert!(err("rw='read'").starts_with("fio.size:"));
    assert!(err("size='1m'\nnumjobs=0").starts_with("fio.numjobs:"));
    assert!(err("size='1m'\nrw='randtrim'").starts_with("fio.rw:"));
    assert!(err("size='1m'\nrwmixread=70\nrwmixwrite=20").starts_with("fio.rwmixread:"));
    assert!(err("size='1m'\nrwmixwrite=120").starts_with("fio.rwmixwrite:"));
    assert!(err("size='1m'\nrandom_distribution='zipf:1'").contains("theta"));
    assert!(err("size='1m'\nrandom_distribution='zipf:0.5:2'").contains("center"));
    assert!(err("size='1m'\nrandom_distribution='zoned_abs:100/2m'").starts_with("fio.random_"));
    assert!(err("size='1m'\nrandom_generator='mt'").starts_with("fio.random_generator:"));
    assert!(err("size='1m'\nfile_service_type='gauss'").starts_with("fio.file_service"));
    assert!(err("size='1m'\noffset='1k'").starts_with("fio.offset:"));
    assert!(err("size='1m'\nfilesize='8k'\noffset='8k'").starts_with("fio.size:"));
    assert!(err("size='1m'\nloops=0").starts_with("fio.loops"));
    assert!(err("size='1m'\ntime_based=true").starts_with("fio.runtime:"));
    assert!(err("size='1m'\niodepth=4").starts_with("fio.iodepth: Psync"));
    assert!(err("size='1m'\nioengine='mmap'\niodepth=4").starts_with("fio.iodepth: Mmap"));
    let uring = "size='1m'\nioengine='io_uring'\niodepth=128\n";
    assert!(Fio::new(&options(&format!("{uring}iodepth_batch_submit=32")), 0).is_ok());
    assert!(Fio::new(&options("size='1m'\nioengine='libaio'\niodepth=32"), 0).is_ok());
    assert!(err(&format!("{uring}iodepth_batch_complete=129")).contains("between 1 and"));
    assert!(err("size='1m'\nioengine='io_uring'\niodepth=0").starts_with("fio.iodepth:"));
    assert!(toml::from_str::<FioOptions>("size='1m'\nioengine='posixaio'").is_err());
}
