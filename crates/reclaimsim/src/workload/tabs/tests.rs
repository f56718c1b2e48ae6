use super::*;
use crate::workload::Workload;

fn opts(tabs: u64) -> TabsOptions {
    TabsOptions {
        tabs,
        tab_size: ByteSize(64 * PAGE_SIZE),
        visible: 25.0,
        run: ByteSize(4 * PAGE_SIZE),
        scroll: 50.0,
        initial: 5,
        recent: 5,
        cold: 10,
        repeats: 10,
        load_time: Duration(160 * MS),
        settle: Duration(10_000_000_000),
        code: ByteSize(0),
        code_load: 34.0,
        code_frame: 3.5,
    }
}

/// Runs every thread of `w` as the engine would, one event at a time: each thread is
/// stepped until it reaches the barrier (or is done), sleeps advancing a shared clock.
/// Returns, per event, the thread that did operations and the touches it made.
fn drive(w: &mut Tabs) -> Vec<(usize, Vec<Touch>)> {
    let n = w.layout().threads();
    let mut now = 0u64;
    let mut log = Vec::new();
    let mut out = Vec::new();
    loop {
        let mut acted: Option<(usize, Vec<Touch>)> = None;
        let mut done = 0;
        for t in 0..n {
            loop {
                out.clear();
                match w.next(t, now, &mut out) {
                    Step::Op { .. } => {
                        assert!(
                            acted.as_ref().map_or(true, |a| a.0 == t),
                            "two tabs act in one step"
                        );
                        acted
                            .get_or_insert((t, Vec::new()))
                            .1
                            .extend(out.iter().copied());
                        now += 1000;
                    }
                    Step::Sleep { until_ns } => {
                        assert!(until_ns > now, "a sleep into the past");
                        now = until_ns;
                    }
                    Step::Barrier => break,
                    Step::Done => {
                        done += 1;
                        break;
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        if done == n {
            return log;
        }
        log.extend(acted);
    }
}

#[test]
fn the_script_opens_switches_and_ends_with_the_heavy_cycles() {
    let o = opts(7);
    let s = script(&o);
    // First five tabs: load and scroll each.
    for t in 0..5u32 {
        assert_eq!(s[2 * t as usize].act, Act::Load);
        assert_eq!(s[2 * t as usize].tab, t);
        assert_eq!(s[2 * t as usize + 1].act, Act::Scroll);
    }
    // Then 11 cycles of 5 switches, the first with 1 s pauses, the rest with 200 ms.
    assert_eq!(s[10].pause_ns, 1000 * MS);
    assert_eq!(s[15].pause_ns, 200 * MS);
    assert!(s[10..65].iter().all(|e| e.act == Act::Switch));
    // Before tab 5 loads: the 5 newest (0..5) switched and scrolled, the first 5 switched.
    assert_eq!(s[65].act, Act::Switch);
    assert_eq!(s[66].act, Act::Scroll);
    assert_eq!(s[80].act, Act::Load);
    assert_eq!(s[80].tab, 5);
    // Before tab 6: the newest are 1..6.
    assert_eq!(s[81].tab, 1);
    assert_eq!(s[96].tab, 6);
    assert_eq!(s[96].act, Act::Load);
    // A wait, the cold tabs (5, 6), a double wait, then 55 switches of the first 5.
    assert_eq!(s[97].act, Act::Wait);
    assert_eq!((s[98].tab, s[99].tab), (5, 6));
    assert_eq!(s[100].pause_ns, 2 * o.settle.0);
    assert_eq!(s.len(), 101 + 55);
}

#[test]
fn one_tab_acts_at_a_time_and_loads_write_every_page_once() {
    let mut w = Tabs::new(&opts(7), 1).unwrap();
    let log = drive(&mut w);
    let acts: Vec<usize> = log.iter().map(|(t, _)| *t).collect();
    assert_eq!(&acts[..2], &[0, 0], "tab 0 loads, then scrolls");
    // Each tab's first act writes each of its 64 pages once, in order.
    for t in 0..7 {
        let first = log.iter().find(|(a, _)| *a == t).unwrap();
        let pages: Vec<u64> = (first.1.iter())
            .map(|x| match x {
                Touch::Mem {
                    page, write: true, ..
                } => *page,
                other => panic!("load touched {other:?}"),
            })
            .collect();
        assert_eq!(pages, (0..64).collect::<Vec<_>>());
    }
    // Every later act reads only the tab's visible runs (25% of 16 runs: 4).
    for (t, touches) in &log {
        let visible = &w.tabs[*t].visible;
        assert_eq!(visible.len(), 4);
        for x in touches {
            if let Touch::Mem {
                page, write: false, ..
            } = x
            {
                assert!(
                    visible.contains(&(page / 4)),
                    "tab {t} read page {page} outside its visible runs"
                );
            }
        }
    }
}

#[test]
fn a_switch_reads_the_visible_set_and_a_scroll_takes_its_fifty_steps() {
    let mut w = Tabs::new(&opts(5), 3).unwrap();
    let mut out = Vec::new();
    // Thread 0 loads (16 runs of 4 pages), then scrolls 50 steps 50 ms apart.
    let mut now = 0;
    for i in 0..16 {
        out.clear();
        assert!(matches!(
            w.next(0, now, &mut out),
            Step::Op { phase: 0, .. }
        ));
        // The load's 16 runs are spread over its 160 ms: one every 10 ms.
        if i < 15 {
            out.clear();
            assert_eq!(
                w.next(0, now, &mut out),
                Step::Sleep {
                    until_ns: now + 10 * MS
                }
            );
            now += 10 * MS;
        }
    }
    let start = now;
    out.clear();
    assert_eq!(w.next(0, now, &mut out), Step::Barrier);
    let mut steps = 0;
    loop {
        out.clear();
        match w.next(0, now, &mut out) {
            Step::Op { phase: 2, .. } => {
                steps += 1;
                // 50% of 4 visible runs: 2 runs of 4 pages.
                assert_eq!(out.len(), 8);
            }
            Step::Sleep { until_ns } => {
                assert_eq!(until_ns, now + SCROLL_DELAY);
                now = until_ns;
            }
            Step::Barrier => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(steps, 50);
    assert_eq!(now, start + 49 * SCROLL_DELAY);
}

#[test]
fn bad_options_are_refused_by_name() {
    let mut o = opts(3);
    o.tab_size = ByteSize(0);
    assert!(Tabs::new(&o, 1).err().unwrap().starts_with("tabs.tab_size"));
    let mut o = opts(3);
    o.run = ByteSize(65 * PAGE_SIZE);
    assert!(Tabs::new(&o, 1).err().unwrap().starts_with("tabs.run"));
    let mut o = opts(3);
    o.visible = 0.0;
    assert!(Tabs::new(&o, 1).err().unwrap().starts_with("tabs.visible"));
    let mut o = opts(0);
    o.tabs = 0;
    assert!(Tabs::new(&o, 1).err().unwrap().starts_with("tabs.tabs"));
    let mut o = opts(3);
    o.code_frame = 40.0;
    assert!(Tabs::new(&o, 1)
        .err()
        .unwrap()
        .starts_with("tabs.code_frame"));
    o.code_load = 120.0;
    assert!(Tabs::new(&o, 1)
        .err()
        .unwrap()
        .starts_with("tabs.code_load"));
}

/// The pages of the shared code (region 1) among `touches`.
fn code_pages(touches: &[Touch]) -> Vec<u64> {
    let mut pages: Vec<u64> = (touches.iter())
        .filter_map(|x| match *x {
            Touch::Mem {
                region: 1,
                page,
                write,
            } => {
                assert!(!write, "the code is only read");
                Some(page)
            }
            _ => None,
        })
        .collect();
    pages.sort_unstable();
    pages
}

/// With `code`, every renderer maps one shared file; each load reads the same 40% of it
/// in 64 KiB runs, and every frame (a switch, each scroll step) the same 10%, a part of
/// the load's.
#[test]
fn renderers_share_the_code_a_load_and_a_frame_run() {
    let mut o = opts(6);
    o.code = ByteSize(160 * 16 * PAGE_SIZE);
    o.code_load = 40.0;
    o.code_frame = 10.0;
    let mut w = Tabs::new(&o, 5).unwrap();
    let layout = w.layout();
    assert_eq!(layout.files.len(), 1);
    assert_eq!(layout.files[0].pages, 160 * 16);
    assert!((layout.processes.iter()).all(|p| p.regions[1] == RegionSpec::File { file: 0 }));
    let script = script(&o);
    let log = drive(&mut w);
    let mut load = None;
    let mut frame = None;
    for ((_, touches), e) in log.iter().zip(script.iter().filter(|e| e.act != Act::Wait)) {
        let pages = code_pages(touches);
        assert!(pages
            .iter()
            .all(|p| p % 16 == 0 || pages.contains(&(p - 1))));
        match e.act {
            Act::Load => assert_eq!(load.get_or_insert(pages.clone()), &pages),
            Act::Switch => assert_eq!(frame.get_or_insert(pages.clone()), &pages),
            // 50 steps, each the whole frame's code
            Act::Scroll => assert_eq!(pages.len(), 50 * 16 * 16),
            Act::Wait => unreachable!(),
        }
    }
    let (load, frame) = (load.unwrap(), frame.unwrap());
    assert_eq!(load.len(), 64 * 16);
    assert_eq!(frame.len(), 16 * 16);
    assert!(frame.iter().all(|p| load.binary_search(p).is_ok()));
    // Without code the renderers map nothing else and read no code.
    let mut w = Tabs::new(&opts(6), 5).unwrap();
    assert!(w.layout().files.is_empty());
    assert!(drive(&mut w).iter().all(|(_, t)| code_pages(t).is_empty()));
}

#[test]
fn chrome_discards_the_least_recently_shown_unpinned_tab_and_the_test_stops_opening() {
    let mut w = Tabs::new(&opts(9), 1).unwrap();
    // The passes opening tabs 5..9 start at 65, 81, 97 and 113; the loop ends at 129.
    assert_eq!(w.passes, vec![65, 81, 97, 113, 129]);
    // The script at tab 6's load (event 96): tab 6 is in front, 7 and 8 not opened yet.
    for c in &mut w.at {
        c.event = 96;
    }
    assert_eq!(
        w.events[96],
        Event {
            tab: 6,
            act: Act::Load,
            pause_ns: 0
        }
    );
    // Tab 5 (unpinned) first; then the pinned first five, least recently shown first
    // (they were switched through in order just before).
    assert_eq!(w.discard_order(), vec![5, 0, 1, 2, 3, 4]);
    w.process_killed(5);
    assert_eq!(w.discard_order(), vec![0, 1, 2, 3, 4]);
    // The pass under way ends; the next (97) is not begun: the test goes on after the loop.
    assert_eq!(w.cut, Some((97, 129)));
    assert_eq!((w.after(95), w.after(96), w.after(129)), (96, 129, 130));
    // Barriers count the events run: after 97 of them the script is at event 129.
    assert_eq!(w.phase_after(96), phase_of(Act::Load) as usize);
    assert_eq!(w.phase_after(97), phase_of(w.events[129].act) as usize);
    // A second discard moves nothing further.
    w.process_killed(0);
    assert_eq!(w.cut, Some((97, 129)));
}

#[test]
fn a_discard_after_the_last_pass_began_cuts_nothing() {
    let mut w = Tabs::new(&opts(9), 1).unwrap();
    for c in &mut w.at {
        c.event = 120;
    }
    w.process_killed(5);
    assert_eq!(w.cut, None);
    assert_eq!(w.after(128), 129);
}
