//! Unit tests of `plan.rs`.

use super::*;
use crate::commands::kernel::locate::Source;
use reclaimsim::scenario::{self, LoadedScenario};

const DEMO: &str = include_str!("../../../../../../scenarios/demo-small.toml");

fn load(text: &str, sets: &[&str]) -> LoadedScenario {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    scenario::parse(text, "t.toml", &sets, None).unwrap()
}

fn variant<'a>(l: &'a LoadedScenario, name: &str) -> &'a Scenario {
    &l.variants.iter().find(|(n, _)| n == name).unwrap().1
}

/// The located error of `text` (its variant `v`, or the base) with `sets`.
fn error(text: &str, sets: &[&str], v: Option<&str>) -> String {
    let loaded = load(text, sets);
    let s = v.map_or(&loaded.base, |v| variant(&loaded, v));
    let e = plan_with(s, &|_| None).expect_err("an error");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let src = Source {
        file: "t.toml",
        text,
        variant: v,
        sets: &sets,
        scenario: s,
    };
    src.error(&e.field, &e.message)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn demo_small_maps_to_the_guest() {
    let l = load(DEMO, &[]);
    let p = plan(variant(&l, "mglru")).unwrap();
    assert_eq!((p.memory, p.cpus), (384 * MIB, 2));
    assert_eq!(p.swap, Some((Swap::Zram, 256 * MIB)));
    assert_eq!(p.lru_gen, "0x0007");
    assert_eq!(p.memcgs, ["/app"]);
    let max = ("/app".into(), "memory.max".into(), (160 * MIB).to_string());
    assert_eq!(p.memcg_files, [max]);
    let files = Files {
        name: "fio".into(),
        memcg: "/app".into(),
        count: 2,
        bytes: 32 * MIB,
        sparse: false,
        blocks: true,
    };
    assert_eq!(p.files, [files]);
    // 64 MiB of files, an eighth for metadata, 16 MiB of journal
    assert_eq!(p.fs_bytes, 88 * MIB);
    assert_eq!(p.guest_mib(), 384 + 88 + GUEST_OVERHEAD_MIB);
    assert_eq!(p.brd(), (1, 88));
    let anon = p.workloads[0].command.join(" ");
    assert!(
        anon.starts_with("/bin/anon -n anon -s 134217728 -t 2 -p random -w 1 -e 1 -S -P -r 2 "),
        "{anon}"
    );
    // two loops over 8192 blocks
    let fio = p.workloads[1].command.join(" ");
    assert!(fio.contains(" -R randread -p random -i 16384 "), "{fio}");
    assert!(p
        .sysctls
        .contains(&("vm.min_free_kbytes".into(), "2508".into())));
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    assert_eq!(plan(variant(&l, "classic")).unwrap().lru_gen, "0");
    let walks = load(DEMO, &["kernel.lru_gen_walks=false"]);
    assert_eq!(plan(&walks.base).unwrap().lru_gen, "0x0005");
}

#[test]
fn the_plan_file_has_what_init_reads() {
    let sampled = load(DEMO, &["sample_interval=\"2500ms\""]);
    let p = plan(&sampled.base).unwrap();
    assert!(render(&p, &[]).contains("RS_SAMPLE=2.5\n"));
    let l = load(DEMO, &["machine.swap.device=\"ramdisk\"", "machine.cpus=8"]);
    let p = plan(&l.base).unwrap();
    assert_eq!(p.cpus, MAX_CPUS);
    assert!(p.notes[0].contains("-smp 2"), "{:?}", p.notes);
    let text = render(&p, &["jbd2".into(), "ext4".into(), "brd".into()]);
    for want in [
        "RS_MODULES='jbd2 ext4'\n",
        "RS_MEMORY=402653184\nRS_NODES=1\nRS_BRD_NR=2\nRS_BRD_MB=256\n",
        "RS_SWAP=brd\n",
        "RS_FS_DEV='ram1'\n",
        "RS_MEMCG_FILES='/app:memory.max:167772160'\n",
        "RS_FILES='fio:/app:2:33554432:0'\n",
        "RS_NWL=2\n",
        "RS_WL_1_NAME='fio'\n",
        "RS_DURATION=0\nRS_SAMPLE=0\n",
    ] {
        assert!(text.contains(want), "{want} not in\n{text}");
    }
    assert_eq!(p.guest_mib(), 384 + 256 + 88 + GUEST_OVERHEAD_MIB);
}

#[test]
fn what_the_guest_cannot_do_is_a_located_error() {
    let with = |extra: &str| format!("{DEMO}\n{extra}\n");
    let costs = with("[costs]\naccess_hit = 100");
    assert_eq!(
            error(&costs, &[], None),
            format!("t.toml:{}: costs.access_hit: a cost of the model; the guest's costs are the host's under QEMU", line_of(&costs, "access_hit"))
        );
    let e = error(DEMO, &["kernel.lru_lock=node"], None);
    assert!(
        e.starts_with("--set kernel.lru_lock=node: kernel.lru_lock: the model's variant"),
        "{e}"
    );
    let v = with("[variants.v11]\nkernel.memcg_reclaim = \"v11\"");
    let e = error(&v, &[], Some("v11"));
    assert!(
        e.starts_with(&format!(
            "t.toml:{}: kernel.memcg_reclaim:",
            line_of(&v, "\"v11\"")
        )),
        "{e}"
    );
}

#[test]
fn workloads_the_guest_cannot_run_are_located_errors() {
    let with = |extra: &str| format!("{DEMO}\n{extra}\n");
    let e = error(DEMO, &["workload.fio.fio.rw=randwrite"], None);
    assert!(
        e.starts_with("--set workload.fio.fio.rw=randwrite: workload[1].fio.rw:"),
        "{e}"
    );
    let zipf = DEMO.replace("pattern = \"random\"", "pattern = \"pareto:0.2\"");
    let e = error(&zipf, &[], None);
    assert!(
        e.starts_with(&format!(
            "t.toml:{}: workload[0].anon.pattern:",
            line_of(&zipf, "pareto")
        )),
        "{e}"
    );
    let ev = with("[[event]]\nat = \"1s\"\nsysctl = \"vm.swappiness\"\nvalue = 10");
    let e = error(&ev, &[], None);
    assert!(
        e.starts_with(&format!("t.toml:{}: event[0]:", line_of(&ev, "[[event]]"))),
        "{e}"
    );
    let e = error(DEMO, &["machine.swap.mem_limit=\"8MiB\""], None);
    assert!(
        e.starts_with("--set machine.swap.mem_limit=\"8MiB\": machine.swap.mem_limit:"),
        "{e}"
    );
    let e = error(DEMO, &["machine.nodes=4", "machine.cpus=4"], None);
    assert!(
        e.starts_with("--set machine.nodes=4: machine.nodes: the guest has at most 2 NUMA nodes"),
        "{e}"
    );
    // two nodes: the memory split evenly, the guest's own on node 0
    let two = plan(&load(DEMO, &["machine.nodes=2"]).base).unwrap();
    assert_eq!(two.nodes, 2);
    let mib = two.node_mib();
    let one = plan(&load(DEMO, &[]).base).unwrap().guest_mib();
    assert_eq!(mib, [one - 192, one - 192]);
    assert_eq!(mib.iter().sum::<u64>(), two.guest_mib());
    assert!(render(&two, &[]).contains("RS_NODES=2\n"));
    let numa = super::super::guest::numa_args(2, &mib).join(" ");
    let want = format!(
        "-object memory-backend-ram,id=ram0,size={}M -numa node,nodeid=0,cpus=0-0,memdev=ram0 \
             -object memory-backend-ram,id=ram1,size={}M -numa node,nodeid=1,cpus=1-1,memdev=ram1",
        mib[0], mib[1]
    );
    assert_eq!(numa, want);
    assert!(super::super::guest::numa_args(2, &[100]).is_empty());
    let pin = DEMO.replace(
        "name = \"anon\"\nmemcg",
        "name = \"anon\"\npin = true\nmemcg",
    );
    let e = error(&pin, &[], None);
    assert!(
        e.starts_with(&format!(
            "t.toml:{}: workload[0].pin:",
            line_of(&pin, "pin = true")
        )),
        "{e}"
    );
}

/// More later phases of page_fault3 than the program runs, a dd phase name the guest
/// cannot carry, dd's readers past the programs' 64, and memcached (whether the host
/// has it or not) are located errors.
#[test]
fn page_fault3_dd_and_memcached_errors_are_located() {
    let with = |extra: &str| format!("{DEMO}\n{extra}\n");
    let pf = with(&format!(
            "[[workload]]\nname = \"pf\"\n[workload.page_fault3]\ntasks = 2\nsize = \"1MiB\"\nruntime = \"1s\"\n{}",
            "[[workload.page_fault3.phase]]\nsleep_until = \"2s\"\n".repeat(16)
        ));
    let e = error(&pf, &[], None);
    assert!(
            e.starts_with(&format!(
                "t.toml:{}: workload[2].page_fault3.phase: the guest's page_fault3 runs at most 15 later phases",
                line_of(&pf, "[[workload.page_fault3.phase]]")
            )),
            "{e}"
        );
    let dd = with("[[workload]]\nname = \"dd\"\n[workload.dd]\nsize = \"1MiB\"\n[[workload.dd.phase]]\nname = \"re read\"");
    let e = error(&dd, &[], None);
    assert!(
        e.starts_with(&format!(
            "t.toml:{}: workload[2].dd.phase[0].name: the guest takes phase names",
            line_of(&dd, "re read")
        )),
        "{e}"
    );
    let dd = with(
        "[[workload]]\nname = \"dd\"\n[workload.dd]\nfiles = 33\nsize = \"1MiB\"\nreaders = 2",
    );
    let e = error(&dd, &[], None);
    assert!(
        e.starts_with(&format!(
            "t.toml:{}: workload[2].dd.readers: the guest's dd runs at most 64 readers",
            line_of(&dd, "readers = 2")
        )),
        "{e}"
    );
    let mc = with("[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n[[workload.memcached.phase]]\nrequests = 10");
    let e = error(&mc, &[], None);
    let want = format!(
            "t.toml:{}: workload[2].memcached: the guest runs memcached only when the host has it: install memcached",
            line_of(&mc, "[workload.memcached]")
        );
    assert!(e.starts_with(&want), "{e}");
    // with the host's memcached: a run the guest's client cannot make
    let host = |_: &str| {
        Some(HostProgram {
            path: "/usr/bin/memcached".into(),
            bytes: 9 * MIB + 1,
        })
    };
    let many = format!("{mc}\nclients = 300");
    let e = plan_with(&load(&many, &[]).base, &host).unwrap_err();
    let mut field = wl(2, "memcached.phase");
    field.extend([Step::Index(0), key("clients")]);
    assert_eq!(e.field, field, "{}", e.message);
    let p = plan_with(&load(&mc, &[]).base, &host).unwrap();
    let cmd = p.workloads[2].command.join(" ");
    // -M: memory and swap (384 + 256 MiB), so memcached never evicts an item
    let want = "/bin/memtier -n mc -m /bin/memcached -s 2 -M 640 -e 1 \
                    -H ,R,R,1,10,32,0,10000000,memtier-,10,0,50,4,1,0,0,1,\
                    1666666.6666666667,5000000.5,1,0,1, -x";
    assert!(cmd.starts_with(want), "{cmd}");
    let copy = HostCopy {
        host: "/usr/bin/memcached".into(),
        guest: "/bin/memcached".into(),
        bytes: 9 * MIB + 1,
    };
    assert_eq!(p.host_copies, [copy]);
    let without = plan_with(&load(DEMO, &[]).base, &host).unwrap();
    assert_eq!(p.guest_mib(), without.guest_mib() + 10);
}

/// The guest's memcached keeps its hash chains and segmented LRU (memcached 1.6's
/// defaults): a scenario or `--set` that turns either of the model's off is refused
/// at that key, before anything boots.
#[test]
fn memcached_without_its_item_links_is_a_located_error() {
    let host = |_: &str| {
        Some(HostProgram {
            path: "/usr/bin/memcached".into(),
            bytes: 9 * MIB,
        })
    };
    let mc = |keys: &str| {
        format!(
            "{DEMO}\n[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n\
                 {keys}[[workload.memcached.phase]]\nrequests = 10\n"
        )
    };
    let located = |text: &str, sets: &[&str]| {
        let l = load(text, sets);
        let e = plan_with(&l.base, &host).expect_err("refused");
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let src = Source {
            file: "t.toml",
            text,
            variant: None,
            sets: &sets,
            scenario: &l.base,
        };
        (e.field.clone(), src.error(&e.field, &e.message))
    };
    let why = "the guest's memcached keeps its hash chains and segmented LRU";
    for (keys, field, needle) in [
        ("lru = \"none\"\n", "lru", "lru = \"none\""),
        ("hash_chains = false\n", "hash_chains", "hash_chains"),
        (
            "lru = \"none\"\nhash_chains = false\n",
            "hash_chains",
            "hash_chains",
        ),
    ] {
        let text = mc(keys);
        let (f, e) = located(&text, &[]);
        assert_eq!(f, wl(2, &format!("memcached.{field}")), "{e}");
        let line = line_of(&text, needle);
        let want = format!("t.toml:{line}: workload[2].memcached.{field}: {why}");
        assert!(e.starts_with(&want), "{e}");
    }
    let set = "workload.mc.memcached.lru=\"none\"";
    let (f, e) = located(&mc(""), &[set]);
    assert_eq!(f, wl(2, "memcached.lru"), "{e}");
    assert!(e.contains(set) && e.contains(why), "{e}");
    // memcached's defaults, given or not, plan
    for keys in ["", "lru = \"segmented\"\nhash_chains = true\n"] {
        assert!(
            plan_with(&load(&mc(keys), &[]).base, &host).is_ok(),
            "{keys}"
        );
    }
}

/// `[[workload.anon.phase]]` goes to the guest's anon as `-H` (waiting for a whole
/// workload, sleeping, its own pattern and counts); what it cannot do is located.
#[test]
fn anon_phases_map_to_the_guest_or_are_located_errors() {
    let phases = |extra: &str| {
        DEMO.replace(
            "passes = 2\n",
            &format!("passes = 2\n\n[[workload.anon.phase]]\nwait_for = \"fio\"\n{extra}\n"),
        )
    };
    let two = phases(
        "accesses = 500\n[[workload.anon.phase]]\nname = \"again\"\n\
             pattern = \"zipf:1.2\"\nwrite = false\npasses = 3\nsleep_until = \"2s\"",
    );
    let anon = plan(&load(&two, &[]).base).unwrap().workloads[0]
        .command
        .join(" ");
    assert!(
        anon.ends_with(
            " -H phase1,seq,1,0,500,0,fio -H again,zipf:1.2,0,3,0,2, \
                 -x /tmp/stop.all -f /tmp/fin.anon -g /tmp/go.anon"
        ),
        "{anon}"
    );
    let cases = [
        ("mix = [{ weight = 1 }]", "mix", "mix = "),
        ("rwmixread = 50", "rwmixread", "rwmixread"),
        ("pattern = \"pareto:0.2\"", "pattern", "pareto"),
        ("name = \"a,b\"", "name", "a,b"),
    ];
    for (extra, field, needle) in cases {
        let text = phases(extra);
        let e = error(&text, &[], None);
        let want = format!(
            "t.toml:{}: workload[0].anon.phase[0].{field}:",
            line_of(&text, needle)
        );
        assert!(e.starts_with(&want), "{e}");
    }
}

/// `after`, `until` and a phase's `wait_for` naming a phase wait for the file the
/// guest's program creates when the phase ends (`/tmp/fin.NAME:PHASE`); the last
/// phase is the workload's end (`/tmp/fin.NAME`), as the model triggers both at once;
/// a phase of a program that signals only its end is a located error.
#[test]
fn waits_for_phases_name_the_files_their_programs_create() {
    let fio = |extra: &str| {
        DEMO.replace(
            "name = \"fio\"\nmemcg",
            &format!("name = \"fio\"\n{extra}\nmemcg"),
        )
    };
    let text = fio("after = \"anon:populate\"\nuntil = \"anon:run\"");
    let p = plan(&load(&text, &[]).base).unwrap();
    assert_eq!(p.workloads[1].after.as_deref(), Some("anon:populate"));
    let cmd = p.workloads[1].command.join(" ");
    assert!(
        cmd.contains(" -x /tmp/stop.all -x /tmp/fin.anon -x /tmp/exit.anon -f "),
        "{cmd}"
    );
    let text = fio("until = \"anon:populate\"");
    let cmd = plan(&load(&text, &[]).base).unwrap().workloads[1]
        .command
        .join(" ");
    assert!(
        cmd.contains(" -x /tmp/fin.anon:populate -x /tmp/exit.anon -f "),
        "{cmd}"
    );
    let waits = |target: &str| {
        let text = DEMO.replace(
            "passes = 2\n",
            &format!("passes = 2\n[[workload.anon.phase]]\nwait_for = \"{target}\"\n"),
        );
        plan(&load(&text, &[]).base).map(|p| p.workloads[0].command.join(" "))
    };
    assert!(waits("fio:run")
        .unwrap()
        .contains(" -H phase1,seq,1,0,0,0,fio "));
    // fio with a later phase: its `run` is not its end, and fileread signals no phase
    let text = DEMO.replace(
        "name = \"anon\"\nmemcg",
        "name = \"anon\"\nafter = \"fio:run\"\nmemcg",
    ) + "[[workload.fio.phase]]\nname = \"again\"\n";
    let e = error(&text, &[], None);
    let want = format!(
        "t.toml:{}: workload[0].after: the guest's fio signals only its end, not its phase `run`",
        line_of(&text, "fio:run")
    );
    assert!(e.starts_with(&want), "{e}");
}

/// A workload's `cpus` or `client_cpus` naming every CPU of the machine is no
/// placement; naming fewer is a located error.
#[test]
fn cpu_lists_of_every_cpu_place_nothing() {
    let anon = |cpus: &str| {
        let text = DEMO.replace(
            "name = \"anon\"\nmemcg",
            &format!("name = \"anon\"\ncpus = {cpus}\nmemcg"),
        );
        (plan_with(&load(&text, &[]).base, &|_| None), text)
    };
    let (every, _) = anon("\"0-1\"");
    let (repeated, _) = anon("[1, 0, 1]");
    assert_eq!(every.unwrap(), plan(&load(DEMO, &[]).base).unwrap());
    assert!(repeated.is_ok());
    let (one, text) = anon("[1]");
    let e = one.unwrap_err();
    assert_eq!(e.field, wl(0, "cpus"), "{}", e.message);
    let e = error(&text, &[], None);
    let want = format!(
        "t.toml:{}: workload[0].cpus: the guest runs",
        line_of(&text, "[1]")
    );
    assert!(e.starts_with(&want), "{e}");
}

/// The memtier-like client signals each named run; one run is the workload's end.
#[test]
fn waits_for_memcached_phases() {
    let host = |_: &str| {
        Some(HostProgram {
            path: "/usr/bin/memcached".into(),
            bytes: 9 * MIB,
        })
    };
    let mc = |after: &str, runs: &[&str]| {
        let runs: String = (runs.iter())
            .map(|r| format!("[[workload.memcached.phase]]\nname = \"{r}\"\nrequests = 10\n"))
            .collect();
        let text = DEMO.replace(
            "name = \"fio\"\nmemcg",
            &format!("name = \"fio\"\nafter = \"{after}\"\nmemcg"),
        );
        let text = format!(
            "{text}\n[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n{runs}"
        );
        plan_with(&load(&text, &[]).base, &host).map(|p| p.workloads[1].after.clone())
    };
    let after = mc("mc:load", &["load", "get"]).unwrap();
    // a memtier run waiting for another's phase: checked as `after` is
    let text = DEMO.replace(
        "passes = 2\n",
        "passes = 2\n[[workload.anon.phase]]\nname = \"again\"\n",
    );
    let waits = |target: &str| {
        let text = format!(
            "{text}\n[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n\
                 [[workload.memcached.phase]]\nrequests = 10\n\
                 [[workload.memcached.phase]]\nrequests = 10\nwait-for = \"{target}\"\n"
        );
        let p = plan_with(&load(&text, &[]).base, &host);
        (p.map(|p| p.workloads[2].command.join(" ")), text)
    };
    let (cmd, _) = waits("anon:run");
    assert!(cmd.unwrap().contains(",1,anon:run -x "));
    let (cmd, _) = waits("fio");
    assert!(cmd.unwrap().contains(",1,fio -x "));
    let (e, text) = waits("fio:run");
    assert!(e.is_ok(), "fio's only phase is its end");
    let fio_phase = text.replace("loops = 2\n", "loops = 2\n[[workload.fio.phase]]\n");
    // (planned in order, fio's own phase would be the first error)
    let l = load(&fio_phase, &[]);
    let e = memtier_waits(&l.base, 2, &l.base.workloads[2]).unwrap_err();
    let mut field = wl(2, "memcached.phase");
    field.extend([Step::Index(1), key("wait-for")]);
    assert_eq!(e.field, field, "{}", e.message);
    assert_eq!(after.as_deref(), Some("mc:load"));
    assert_eq!(
        mc("mc:get", &["load", "get"]).unwrap().as_deref(),
        Some("mc")
    );
    assert_eq!(mc("mc:only", &["only"]).unwrap().as_deref(), Some("mc"));
}

/// A scenario with page_fault3, dd and a page trace of two tenants, the trace at
/// `trace` (its first lines `lines`), in `dir`.
fn three_programs(dir: &std::path::Path, lines: &str) -> String {
    let trace = dir.join("t.pagetrace");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(&trace, format!("time,tenant,target,offset,op\n{lines}")).unwrap();
    format!(
        "name = 'p'\nseed = 1\n[machine]\nmemory = '256MiB'\ncpus = 2\n\
             [[memcg]]\npath = '/a'\n[[memcg]]\npath = '/b'\n\
             [[workload]]\nname = 'pf'\nmemcg = '/a'\n[workload.page_fault3]\ntasks = 2\n\
             size = '8MiB'\nruntime = '2s'\nmode = 'thread'\n\
             [[workload]]\nname = 'dd'\nmemcg = '/a'\n[workload.dd]\nfiles = 2\n\
             size = '4MiB'\nreaders = 2\n\
             [[workload]]\nname = 'tr'\nmemcg = '/a'\n[workload.trace]\npath = '{}'\n\
             tenants = {{ a = '/a', b = '/b' }}\n",
        trace.display()
    )
}

#[test]
fn page_fault3_dd_and_trace_map_to_their_programs() {
    let dir = std::env::temp_dir().join(format!("reclaimsim-plan-{}", std::process::id()));
    let text = three_programs(
        &dir,
        "0,a,anon,0,w\n0,a,data,8192,r\n0,b,anon,4096,r\n0,a,data,0,w\n",
    );
    let p = plan(&load(&text, &[]).base).unwrap();
    let cmd = |i: usize| p.workloads[i].command.join(" ");
    assert!(
        cmd(0).starts_with("/bin/pagefault -n pf -d /mnt -t 2 -s 8388608 -M thread -T 2 -x"),
        "{}",
        cmd(0)
    );
    assert!(
        cmd(1).starts_with("/bin/ddread -n dd -d /mnt -F 2 -r 2 -b 4096 -x"),
        "{}",
        cmd(1)
    );
    assert!(
        cmd(2).starts_with("/bin/trace -n tr -d /mnt -R /trace -t 2 -F 1 -c /a -c /b -x"),
        "{}",
        cmd(2)
    );
    let f = |name: &str, count, bytes, sparse, blocks| Files {
        name: name.into(),
        memcg: "/a".into(),
        count,
        bytes,
        sparse,
        blocks,
    };
    // page_fault3's holes are written through its mappings; dd's are only read;
    // the trace's file has the two pages it touches, numbered as the model numbers them
    let want = [
        f("pf", 2, 8 * MIB, true, true),
        f("dd", 2, 4 * MIB, true, false),
        f("tr+0", 1, 8192, false, true),
    ];
    assert_eq!(p.files, want);
    let data = 16 * MIB + 8192;
    assert_eq!(
        p.fs_bytes,
        (data + data / 8 + 16 * MIB).next_multiple_of(MIB)
    );
    let words = |b: &[u8]| -> Vec<u64> {
        b.chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let (end, store) = (1 << 61, 1 << 60);
    assert_eq!(p.extra[0].0, "/trace/tr.0");
    assert_eq!(
        words(&p.extra[0].1),
        [1, store | end, 1 << 62 | end, 2 << 62 | 1 | end]
    );
    assert_eq!(
        (p.extra[1].0.as_str(), words(&p.extra[1].1)),
        ("/trace/tr.1", vec![1, end])
    );
    assert_eq!(
        p.guest_mib(),
        256 + p.fs_bytes / MIB + 1 + GUEST_OVERHEAD_MIB
    );
    let text = render(&p, &[]);
    assert!(
        text.contains("RS_FILES='pf:/a:2:8388608:1 dd:/a:2:4194304:1 tr+0:/a:1:8192:0'\n"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[[workload.dd.phase]]` and `[[workload.page_fault3.phase]]` go to their programs
/// as `-H NAME,SLEEP,WAIT,RUNTIME`: the model's default names, page_fault3's runtime
/// for a phase that gives none (dd's: none, 0), and `wait_for` as `finish_name` names
/// the file: a whole workload, a phase, or a last phase as the workload's end; an
/// anon phase may wait for a dd phase.
#[test]
fn dd_and_page_fault3_phases_map_to_their_programs() {
    let dir = std::env::temp_dir().join(format!("reclaimsim-plan-ph-{}", std::process::id()));
    let text = three_programs(&dir, "0,a,anon,0,w\n")
        .replace(
            "mode = 'thread'\n",
            "mode = 'thread'\n\
                 [[workload.page_fault3.phase]]\nname = 'again'\nsleep_until = '4s'\n\
                 [[workload.page_fault3.phase]]\nruntime = '500ms'\nwait_for = 'dd:run'\n",
        )
        .replace(
            "readers = 2\n",
            "readers = 2\n\
                 [[workload.dd.phase]]\nwait_for = 'pf'\nruntime = '1s'\n\
                 [[workload.dd.phase]]\nname = 'last'\nwait_for = 'pf:again'\n\
                 [[workload.dd.phase]]\nwait_for = 'pf:phase2'\nsleep_until = '2.5s'\n",
        )
        + "[[workload]]\nname = 'an'\n[workload.anon]\nsize = '1MiB'\n\
               [[workload.anon.phase]]\nwait_for = 'dd:last'\n";
    let p = plan(&load(&text, &[]).base).unwrap();
    let cmd = |i: usize| p.workloads[i].command.join(" ");
    assert!(
        cmd(0).starts_with(
            "/bin/pagefault -n pf -d /mnt -t 2 -s 8388608 -M thread -T 2 \
                 -H again,4,,2 -H phase2,0,dd:run,0.5 -x"
        ),
        "{}",
        cmd(0)
    );
    assert!(
        cmd(1).starts_with(
            "/bin/ddread -n dd -d /mnt -F 2 -r 2 -b 4096 \
                 -H phase1,0,pf,1 -H last,0,pf:again,0 -H phase3,2.5,pf,0 -x"
        ),
        "{}",
        cmd(1)
    );
    assert!(
        cmd(3).contains(" -H phase1,seq,1,0,0,0,dd:last "),
        "{}",
        cmd(3)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_trace_the_guest_cannot_replay_is_a_located_error() {
    let dir = std::env::temp_dir().join(format!("reclaimsim-plan-e-{}", std::process::id()));
    let lines: String = (0..65).map(|k| format!("0,a,f{k},0,r\n")).collect();
    let text = three_programs(&dir, &lines);
    let e = error(&text, &[], None);
    let want = format!(
            "t.toml:{}: workload[2].trace.path: the trace touches 65 files; the guest replays at most 64",
            line_of(&text, "t.pagetrace")
        );
    assert!(e.starts_with(&want), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fio_io_counts_follow_fio() {
    let l = load(DEMO, &["workload.fio.fio.number_ios=100"]);
    let fio = plan(&l.base).unwrap().workloads[1].command.join(" ");
    assert!(fio.contains(" -i 100 "), "{fio}");
    let l = load(
        DEMO,
        &[
            "workload.fio.fio.io_size=\"8MiB\"",
            "workload.fio.fio.loops=3",
        ],
    );
    let fio = plan(&l.base).unwrap().workloads[1].command.join(" ");
    assert!(fio.contains(" -i 6144 "), "{fio}");
    let l = load(
        DEMO,
        &[
            "workload.fio.fio.norandommap=true",
            "workload.fio.fio.time_based=true",
            "workload.fio.fio.runtime=\"2s\"",
        ],
    );
    let fio = plan(&l.base).unwrap().workloads[1].command.join(" ");
    assert!(fio.contains(" -N -B -T 2 "), "{fio}");
}

#[test]
fn numa_nodes_of_their_own_and_mems_are_located_errors() {
    let nodes = DEMO.replace("memory = \"384MiB\"\n", "").replace(
        "\n[kernel]\n",
        "[[machine.node]]\nmemory = \"256MiB\"\ncpus = \"0-1\"\n[[machine.node]]\nmemory = \"128MiB\"\ncpus = \"\"\n\n[kernel]\n",
    );
    assert_ne!(nodes, DEMO);
    let e = error(&nodes, &[], None);
    assert!(
        e.starts_with(&format!(
            "t.toml:{}: machine.node: the guest's NUMA nodes are an even split",
            line_of(&nodes, "[[machine.node]]")
        )),
        "{e}"
    );
    let e = error(DEMO, &["machine.nodes=2", "workload.anon.mems=\"1\""], None);
    assert!(
        e.starts_with("--set workload.anon.mems=\"1\": workload[0].mems: the guest does not place"),
        "{e}"
    );
}
