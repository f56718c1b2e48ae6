//! Unit tests of `memtier.rs`.

use super::*;
use crate::workload::mcitems::Lru;

fn options(text: &str) -> MemcachedOptions {
    toml::from_str(text).unwrap()
}

fn run(text: &str) -> Run {
    let o: MemtierOptions = toml::from_str(text).unwrap();
    Run::parse(&o, 0, 1).unwrap()
}

/// All steps of all threads, taking turns, until every thread is done.
fn trace(w: &mut Memcached) -> Vec<(usize, Step, Vec<Touch>)> {
    let threads = w.layout().threads();
    let mut parked = vec![None; threads];
    let mut steps = Vec::new();
    while steps.len() < 1_000_000 {
        for (t, parked) in parked.iter_mut().enumerate().filter(|(_, p)| p.is_none()) {
            let mut out = Vec::new();
            let step = w.next(t, 0, &mut out);
            if !matches!(step, Step::Op { .. } | Step::RoundTrip { .. }) {
                *parked = Some(step);
            }
            steps.push((t, step, out));
        }
        if parked.iter().all(|p| *p == Some(Step::Done)) {
            return steps;
        }
        if parked.iter().all(|p| *p == Some(Step::Barrier)) {
            parked.fill(None);
        }
    }
    panic!("workload did not finish");
}

/// Each connection's pipeline of requests is answered in one round trip: a thread's
/// requests come in runs of `pipeline` (a client's last run may be shorter), each
/// followed by a RoundTrip.
#[test]
fn a_round_trip_follows_each_pipeline_batch() {
    let mut w = Memcached::new(
        &options(
            r#"
threads = 2
[[phase]]
key-pattern = "P:P"
ratio = "1:0"
key-maximum = 100
requests = "allkeys"
clients = 3
threads = 1
pipeline = 4
"#,
        ),
        1,
    )
    .unwrap();
    let steps = trace(&mut w);
    for t in 0..2 {
        let mine: Vec<Step> = steps.iter().filter(|s| s.0 == t).map(|s| s.1).collect();
        let runs: Vec<usize> = mine
            .split(|s| matches!(s, Step::RoundTrip { .. }))
            .map(|run| run.iter().filter(|s| matches!(s, Step::Op { .. })).count())
            .collect();
        let (last, full) = runs.split_last().unwrap();
        assert_eq!(*last, 0, "the thread ends right after a round trip");
        assert!(full.iter().all(|&n| (1..=4).contains(&n)), "{runs:?}");
        assert!(
            full.iter().filter(|&&n| n == 4).count() >= full.len() - 2,
            "{runs:?}"
        );
    }
}

#[test]
fn slab_classes_match_memcached() {
    let classes = slab_classes();
    assert_eq!(
        classes[..15],
        [96, 120, 152, 192, 240, 304, 384, 480, 600, 752, 944, 1184, 1480, 1856, 2320]
    );
    let slabs = Slabs::new(0, 1);
    let chunk = |data| classes[slabs.class_of(item_size(8, digits(16_000_000), data))];
    assert_eq!(chunk(2000), 2320);
    assert_eq!(chunk(1024), 1184);
    assert_eq!(chunk(1000), 1184);
}

#[test]
fn parallel_subranges() {
    assert_eq!(parallel_range(1, 65_000_000, 36, 0), Some((1, 1_805_556)));
    assert_eq!(
        parallel_range(1, 65_000_000, 36, 1),
        Some((1_805_557, 3_611_112))
    );
    assert_eq!(
        parallel_range(1, 65_000_000, 36, 35),
        Some((63_194_461, 65_000_000))
    );
    assert_eq!(parallel_range(0, 10, 3, 2), Some((8, 10)));
    assert_eq!(parallel_range(1, 10, 6, 5), None);
    let r = run("key-pattern='P:P'\nrequests='allkeys'\nkey-minimum=1\nkey-maximum=10\nclients=1\nthreads=3");
    assert_eq!(r.requests, 4);
    let mut last = r.new_client(2);
    assert_eq!(
        (0..4).map(|_| last.key(&r, true)).collect::<Vec<_>>(),
        [9, 10, 9, 10]
    );
    let r = run("key-pattern='R:R'\nrequests='allkeys'\nkey-minimum=1\nkey-maximum=10");
    assert_eq!(r.requests, 9);
}

#[test]
fn random_keys_stay_in_range() {
    let r = run("key-pattern='R:R'\nkey-minimum=5\nkey-maximum=14\nrandomize=true");
    let mut c = r.new_client(0);
    let mut seen = [0u32; 10];
    for _ in 0..10_000 {
        seen[(c.key(&r, false) - 5) as usize] += 1;
    }
    assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
}

#[test]
fn gaussian_central_third_gets_two_thirds() {
    let r = run("key-pattern='G:G'\nkey-minimum=0\nkey-maximum=29999");
    let mut c = r.new_client(0);
    let n = 100_000;
    let central = (0..n)
        .filter(|_| (10_000..20_000).contains(&c.key(&r, false)))
        .count();
    let share = central as f64 / n as f64;
    assert!((0.66..0.70).contains(&share), "central third got {share}");
}

#[test]
fn zipf_keys_favour_small_keys() {
    let r = run("key-pattern='Z:Z'\nkey-minimum=1\nkey-maximum=1000");
    let mut c = r.new_client(0);
    let n = 100_000;
    let keys: Vec<u64> = (0..n).map(|_| c.key(&r, false)).collect();
    assert!(keys.iter().all(|k| (1..=1000).contains(k)));
    // P(1) = 1 / H(1000) ≈ 0.134 for exponent 1.
    let ones = keys.iter().filter(|&&k| k == 1).count() as f64 / n as f64;
    assert!((0.12..0.15).contains(&ones), "P(1) = {ones}");
}

#[test]
fn consecutive_sets_fill_adjacent_chunks() {
    let o = options(
            "threads=1\nlru='none'\n[[phase]]\nkey-pattern='P:P'\nratio='1:0'\nrequests='allkeys'\ndata-size=2000\n\
             key-minimum=10000001\nkey-maximum=10000004\nclients=1\nthreads=1",
        );
    let mut w = Memcached::new(&o, 0).unwrap();
    let slab_pages = |steps: Vec<(usize, Step, Vec<Touch>)>| -> Vec<Vec<u64>> {
        steps
            .into_iter()
            .filter(|s| matches!(s.1, Step::Op { .. }))
            .map(|s| {
                s.2.iter()
                    .filter_map(|t| match *t {
                        Touch::Mem {
                            region: 0,
                            page,
                            write: true,
                        } => Some(page),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    };
    // 2075-byte items in 2320-byte chunks: [0, 2075), [2320, 4395), [4640, 6715), [6960, 9035).
    assert_eq!(
        slab_pages(trace(&mut w)),
        [vec![0], vec![0, 1], vec![1], vec![1, 2]]
    );
    assert_eq!(
        w.layout().processes[0].regions[0],
        RegionSpec::Anon { pages: 256 }
    );
}

#[test]
fn gets_touch_bucket_and_item() {
    let o = options(
        "threads=1\n[[phase]]\nkey-pattern='S:S'\nratio='1:1'\nrequests=4\ndata-size=32\n\
             key-minimum=1\nkey-maximum=3\nclients=1\nthreads=1",
    );
    let mut w = Memcached::new(&o, 0).unwrap();
    let mut steps = trace(&mut w);
    steps.retain(|s| !matches!(s.1, Step::RoundTrip { .. }));
    let get = &steps[1].2;
    assert_eq!(get.len(), 2);
    assert!(matches!(
        get[0],
        Touch::Mem {
            region: 1,
            write: false,
            ..
        }
    ));
    assert_eq!(
        get[1],
        Touch::Mem {
            region: 0,
            page: 0,
            write: true
        }
    );
    assert_eq!(
        steps[1].1,
        Step::Op {
            phase: 0,
            bytes: 32
        }
    );
}

/// Keys `a < b` of 1..=n in the same bucket of a 2^16-bucket table.
fn same_bucket(n: u64) -> (u64, u64) {
    let bucket = |k: u64| splitmix64(k) & 0xffff;
    (1..=n)
        .flat_map(|b| (1..b).map(move |a| (a, b)))
        .find(|&(a, b)| bucket(a) == bucket(b))
        .unwrap()
}

/// SETs of keys 1..=n in order, then one GET of `get`; the GET's touches.
fn get_after_sets(extra: &str, n: u64, get: u64) -> (Memcached, Vec<Touch>) {
    let o = options(&format!(
        "threads=1\n{extra}\n[[phase]]\nkey-pattern='S:S'\nratio='1:0'\nrequests={n}\n\
             key-minimum=1\nkey-maximum={n}\nclients=1\nthreads=1\ndata-size=2000\n\
             [[phase]]\nkey-pattern='S:S'\nratio='0:1'\nrequests=1\nkey-minimum={get}\n\
             key-maximum={get}\nclients=1\nthreads=1\ndata-size=2000"
    ));
    let mut w = Memcached::new(&o, 0).unwrap();
    let steps = trace(&mut w);
    let get = steps
        .into_iter()
        .rfind(|s| matches!(s.1, Step::Op { phase: 1, .. }))
        .unwrap();
    (w, get.2)
}

/// The bucket's page, then the item's (2075 bytes, 1 or 2 pages, the first written).
fn bucket_and_item(w: &Memcached, key: u64) -> Vec<Touch> {
    let mut out = vec![Touch::Mem {
        region: 1,
        page: (splitmix64(key) & w.bucket_mask) * 8 / PAGE_SIZE,
        write: false,
    }];
    let (offset, _) = w.slabs.get(key).unwrap();
    item_pages(offset, 2075, false, &mut out);
    out
}

#[test]
fn a_get_reads_the_items_ahead_in_its_chain() {
    let (a, b) = same_bucket(2000);
    let (w, touches) = get_after_sets("", b, a);
    let bucket = splitmix64(a) & w.bucket_mask;
    let chain = w.chains.as_ref().unwrap().chain(bucket);
    let ahead = &chain[..chain.iter().position(|&k| u64::from(k) + 1 == a).unwrap()];
    assert!(
        ahead.contains(&((b - 1) as u32)),
        "b was set later: ahead of a"
    );
    let mut want = bucket_and_item(&w, a);
    let reads = ahead.iter().map(|&k| Touch::Mem {
        region: 0,
        page: w.slabs.first_page(k),
        write: false,
    });
    want.splice(1..1, reads);
    // The first GET of a COLD item sets ITEM_FETCHED only: no LRU move.
    assert_eq!(touches, want);
    // b is at its chain's head: nothing ahead.
    let (w, touches) = get_after_sets("", b, b);
    assert_eq!(touches, bucket_and_item(&w, b));
}

#[test]
fn without_chains_and_lru_a_get_touches_its_bucket_and_item_only() {
    let (a, b) = same_bucket(2000);
    let (w, touches) = get_after_sets("lru='none'\nhash_chains=false", b, a);
    assert!(w.chains.is_none() && w.lru.is_none());
    assert_eq!(touches, bucket_and_item(&w, a));
}

#[test]
fn sets_link_into_hot_and_the_maintainer_keeps_it_to_a_fifth() {
    let (w, _) = get_after_sets("", 1000, 1);
    let lru = w.lru.as_ref().unwrap();
    let class = w.slabs.class_of(2075);
    assert_eq!(lru.count(class, Lru::Hot), 200);
    assert_eq!(lru.count(class, Lru::Cold), 800);
}

#[test]
fn item_links_take_host_memory_for_the_keys_stored_not_the_key_range() {
    let o = options(
        "threads=1\n[[phase]]\nkey-pattern='S:S'\nratio='1:0'\nrequests=1000\n\
             key-minimum=1\nkey-maximum=1000000\nclients=1\nthreads=1\ndata-size=2000",
    );
    let mut w = Memcached::new(&o, 0).unwrap();
    let heads = (w.bucket_mask + 1) * 4;
    let chains = |w: &Memcached| w.chains.as_ref().unwrap().host_bytes() - heads;
    assert_eq!(chains(&w) + w.lru.as_ref().unwrap().host_bytes(), 0);
    trace(&mut w);
    // 1,000 keys stored of 1,000,000: the arrays (17 B a key) hold their first chunk
    // of 4,096 keys (and the chunks' tables, 16 B a chunk).
    let bytes = chains(&w) + w.lru.as_ref().unwrap().host_bytes();
    assert!((17 * 4096..=17 * 4096 + 5 * 64).contains(&bytes), "{bytes}");
}

#[test]
fn a_set_links_into_hot_and_the_maintainer_moves_it_to_cold() {
    let o = options(
        "threads=1\nhash_chains=false\n[[phase]]\nkey-pattern='S:S'\nratio='1:0'\n\
             requests=2\nkey-minimum=1\nkey-maximum=2\nclients=1\nthreads=1\ndata-size=2000",
    );
    let mut w = Memcached::new(&o, 0).unwrap();
    let ops: Vec<Vec<Touch>> = trace(&mut w)
        .into_iter()
        .filter(|s| matches!(s.1, Step::Op { .. }))
        .map(|s| s.2)
        .collect();
    let write0 = Touch::Mem {
        region: 0,
        page: 0,
        write: true,
    };
    // Key 1 (page 0) went to COLD after its SET (HOT may hold 20% of 1 item: none).
    // Key 2 (pages 0-1): its bucket and item, then the juggle moves it from HOT to
    // COLD: its own header (page 0), then COLD's old head's prev, key 1's (page 0).
    assert_eq!(ops[1].len(), 1 + 2 + 2);
    assert_eq!(ops[1][3..], [write0, write0]);
    let lru = w.lru.as_ref().unwrap();
    assert_eq!(lru.list(w.slabs.class_of(2075), Lru::Cold), [1, 0]);
}

/// The progress line's share: requests served over all runs' requests, when every
/// run is a count.
#[test]
fn the_share_done_counts_requests_of_counted_runs() {
    let text = "threads=2\n[[phase]]\nname='load'\nkey-pattern='P:P'\nratio='1:0'\n\
                    requests='allkeys'\nkey-minimum=1\nkey-maximum=100\nclients=1\nthreads=4\n\
                    [[phase]]\nname='run'\nkey-pattern='R:R'\nratio='0:1'\nrequests=50\n\
                    key-minimum=1\nkey-maximum=100\nclients=1\nthreads=4";
    let mut w = Memcached::new(&options(text), 0).unwrap();
    assert_eq!(w.done_fraction(), Some(0.0));
    let mut out = Vec::new();
    while !matches!(w.next(0, 0, &mut out), Step::Op { .. }) {}
    assert_eq!(
        w.done_fraction(),
        Some(1.0 / 300.0),
        "100 SETs and 200 GETs"
    );
    trace(&mut w);
    assert_eq!(w.done_fraction(), Some(1.0));
    let timed = text.replace("requests=50", "test-time='1s'");
    let w = Memcached::new(&options(&timed), 0).unwrap();
    assert_eq!(w.done_fraction(), None, "a run of test-time has no count");
}

#[test]
fn phases_run_in_order_with_barriers() {
    let o = options(
        "threads=2\n[[phase]]\nname='load'\nkey-pattern='P:P'\nratio='1:0'\nrequests='allkeys'\n\
             key-minimum=1\nkey-maximum=100\nclients=1\nthreads=4\npipeline=8\nmeasure=false\n\
             [[phase]]\nname='run'\nkey-pattern='G:G'\nratio='0:1'\nrequests=50\nkey-minimum=1\n\
             key-maximum=100\nclients=1\nthreads=4\nrandomize=true\ndistinct-client-seed=true",
    );
    let mut w = Memcached::new(&o, 0).unwrap();
    assert_eq!(w.phases(), ["load", "run"]);
    assert!(!w.measured(0, 0) && w.measured(1, 0));
    let steps = trace(&mut w);
    let ops = |phase| {
        steps
            .iter()
            .filter(|s| matches!(s.1, Step::Op { phase: p, .. } if p == phase))
            .count()
    };
    assert_eq!((ops(0), ops(1)), (100, 200));
    assert_eq!(steps.iter().filter(|s| s.1 == Step::Barrier).count(), 2);
    // Every GET of the run phase hits an item set by the load phase.
    assert!(steps.iter().all(|s| s.1 != Step::Op { phase: 1, bytes: 0 }));
}

#[test]
fn a_delayed_run_sleeps_from_its_start_then_serves() {
    let o = options(
        "threads=2\n[[phase]]\nkey-pattern='P:P'\nratio='1:0'\nrequests='allkeys'\n\
             key-minimum=1\nkey-maximum=10\nclients=1\nthreads=2\n\
             [[phase]]\nkey-pattern='R:R'\nratio='0:1'\nrequests=3\nkey-minimum=1\n\
             key-maximum=10\nclients=1\nthreads=2\ndelay='200ms'",
    );
    let mut w = Memcached::new(&o, 0).unwrap();
    let mut out = Vec::new();
    for t in 0..2 {
        while matches!(
            w.next(t, 0, &mut out),
            Step::Op { .. } | Step::RoundTrip { .. }
        ) {
            out.clear();
        }
    }
    // The barrier is released at 5 ms: both threads sleep until 205 ms.
    for t in 0..2 {
        assert_eq!(
            w.next(t, 5_000_000, &mut out),
            Step::Sleep {
                until_ns: 205_000_000
            }
        );
        assert!(out.is_empty());
    }
    assert_eq!(
        w.next(1, 100_000_000, &mut out),
        Step::Sleep {
            until_ns: 205_000_000
        }
    );
    assert!(matches!(
        w.next(0, 205_000_000, &mut out),
        Step::Op { phase: 1, .. }
    ));
}

#[test]
fn deterministic_per_seed() {
    let text = "threads=3\n[[phase]]\nkey-pattern='R:R'\nratio='1:3'\nrequests=300\n\
                    key-minimum=1\nkey-maximum=5000\nclients=2\nthreads=2\nrandomize=true\n\
                    distinct-client-seed=true";
    let stream = |seed| trace(&mut Memcached::new(&options(text), seed).unwrap());
    assert_eq!(stream(9), stream(9));
    assert_ne!(stream(9), stream(10));
}

#[test]
fn rejects_bad_options() {
    let err = |phase: &str| {
        Memcached::new(&options(&format!("[[phase]]\n{phase}")), 0)
            .err()
            .unwrap()
    };
    assert!(err("key-minimum=10\nkey-maximum=5").contains("key-maximum"));
    assert!(err("key-pattern='P:R'").contains("key-pattern"));
    assert!(err("key-pattern='X:R'").contains("key-pattern"));
    assert!(err("ratio='0:0'").contains("ratio"));
    assert!(err("requests='some'").contains("requests"));
    assert!(err("requests=5\ntest-time=3").contains("exclusive"));
    assert!(err("clients=0").contains("clients"));
    assert!(err("data-size='1m'").contains("data-size"));
    assert!(err("key-pattern='Z:Z'\nkey-zipf-exp=6").contains("key-zipf-exp"));
    assert!(err("key-pattern='G:G'\nkey-median=-3").contains("key-median"));
    assert!(err("key-pattern='G:G'\nkey-stddev=1e300").contains("key-stddev"));
    assert!(Memcached::new(&options("phase=[]"), 0).is_err());
}

/// With the clients as tasks (`gate`), a connection answered is not served again until
/// its client sends the next batch, a thread serves its other connections meanwhile and
/// waits in epoll (`Idle`) while every connection with requests left is with its client;
/// the run ends only when all are back.
#[test]
fn gated_connections_wait_for_their_clients() {
    let mut w = Memcached::new(
        &options(
            r#"
threads = 1
[[phase]]
key-pattern = "R:R"
ratio = "0:1"
key-maximum = 100
requests = 4
clients = 2
threads = 2
pipeline = 2
"#,
        ),
        1,
    )
    .unwrap();
    let c = w.connections().unwrap();
    assert_eq!((c.client_threads(), c.owner(3), c.server(3)), (2, 1, 0));
    c.gate();
    let mut out = Vec::new();
    let mut step = |w: &mut Memcached| {
        out.clear();
        w.next(0, 0, &mut out)
    };
    // Four connections, all sent at the start: one batch of two from each in turn.
    for conn in 0..4 {
        assert!(matches!(step(&mut w), Step::Op { .. }));
        assert!(matches!(step(&mut w), Step::Op { .. }));
        assert!(w.has_work(0) == (conn < 3));
        assert_eq!(step(&mut w), Step::RoundTrip { conn });
    }
    assert_eq!(step(&mut w), Step::Idle);
    w.batch_sent(2);
    assert!(w.has_work(0));
    assert!(matches!(step(&mut w), Step::Op { .. }));
    assert!(matches!(step(&mut w), Step::Op { .. }));
    assert_eq!(step(&mut w), Step::RoundTrip { conn: 2 });
    assert_eq!(step(&mut w), Step::Idle);
    // Each connection's last batch back: the thread passes the run's end only then.
    for conn in [0, 1, 3] {
        w.batch_sent(conn);
        for _ in 0..2 {
            assert!(matches!(step(&mut w), Step::Op { .. }));
        }
        assert_eq!(step(&mut w), Step::RoundTrip { conn });
    }
    assert_eq!(step(&mut w), Step::Idle);
    w.batch_sent(2);
    assert!(!w.has_work(0), "no requests left");
    assert_eq!(step(&mut w), Step::Idle);
    for conn in [0, 1, 3] {
        w.batch_sent(conn);
    }
    assert_eq!(step(&mut w), Step::Done);
}
