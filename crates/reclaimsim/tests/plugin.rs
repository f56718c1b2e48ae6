//! The reclaim plugin layer's rules (`kernel/lru/plugin/`): the fallback to the
//! built-in LRU is taken and counted, a candidate not resident in the governed memcg
//! stops the run naming the hook, `folio_removed` follows every folio out of the memcg
//! (evictions included), and a mapped folio's accesses reach the plugin only through
//! the young bits a reference check reads.

mod common;

use common::{memcg_stat, Sys};
use reclaimsim::engine::{EvictCtx, FolioRef, ReclaimPlugin, RunOptions, SimError};
use reclaimsim::kernel::fault;
use reclaimsim::kernel::folio::Pfn;
use reclaimsim::kernel::lru::plugin::{examples::Fifo, Lists, Plugin, PluginFactory};
use reclaimsim::kernel::mm::{Mm, VmaKind};
use reclaimsim::kernel::pagecache::File;
use reclaimsim::kernel::rmap;
use reclaimsim::results::VariantResult;
use reclaimsim::scenario;
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

/// fio reading 16 MiB of files at random through an 8 MiB memcg, under a plugin the
/// test supplies (`name = "python"`: the external plugin of `RunOptions::plugin`).
const FIO: &str = r#"name = "plugin-rules"
seed = 5
[machine]
memory = "64MiB"
cpus = 2
[kernel]
policy = "plugin"
plugin = { name = "python", memcg = "/a" }
[[memcg]]
path = "/a"
max = "8MiB"
[[workload]]
name = "fio"
memcg = "/a"
[workload.fio]
rw = "randread"
numjobs = 2
size = "8MiB"
norandommap = true
time_based = true
runtime = "40ms"
"#;

fn run(make: PluginFactory) -> Result<VariantResult, SimError> {
    let s = scenario::parse_python(FIO, "test.toml", &[], None)
        .unwrap_or_else(|e| panic!("{e}"))
        .base;
    let opts = RunOptions {
        check: true,
        plugin: Some(make),
        ..Default::default()
    };
    reclaimsim::results::run(&s, "base", opts)
}

/// Proposes nothing: every request falls back to the classic LRU.
struct Idle;

impl ReclaimPlugin for Idle {
    fn init(&mut self, _: &str, _: &mut Lists) -> Result<(), String> {
        Ok(())
    }
    fn folio_added(&mut self, _: FolioRef, _: &mut Lists) -> Result<(), String> {
        Ok(())
    }
    fn folio_accessed(&mut self, _: FolioRef, _: &mut Lists) -> Result<(), String> {
        Ok(())
    }
    fn folio_removed(&mut self, _: FolioRef, _: &mut Lists) -> Result<(), String> {
        Ok(())
    }
    fn evict_folios(
        &mut self,
        _: &EvictCtx,
        _: &mut Lists,
        _: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        Ok(())
    }
}

#[test]
fn too_few_candidates_fall_back_to_the_built_in_lru_and_are_counted() {
    let r = run(Box::new(|| Box::new(Idle))).unwrap_or_else(|e| panic!("{e}"));
    let p = r.plugin.as_ref().expect("plugin stats");
    assert!(p.evict_folios > 0, "{p:?}");
    assert_eq!((p.proposed, p.isolated), (0, 0), "{p:?}");
    assert_eq!(
        p.fallbacks, p.evict_folios,
        "every request fell back: {p:?}"
    );
    assert!(p.fallback_pages >= p.fallbacks, "{p:?}");
    // The fallback reclaimed: the working set is twice the memcg.
    assert!(memcg_stat(&r, "/a", "pgsteal") > 0);
}

/// FIFO that, once it has heard of a removal, proposes that folio again.
#[derive(Default)]
struct Stale {
    fifo: Fifo,
    gone: Option<FolioRef>,
}

impl ReclaimPlugin for Stale {
    fn init(&mut self, m: &str, l: &mut Lists) -> Result<(), String> {
        self.fifo.init(m, l)
    }
    fn folio_added(&mut self, f: FolioRef, l: &mut Lists) -> Result<(), String> {
        self.fifo.folio_added(f, l)
    }
    fn folio_accessed(&mut self, f: FolioRef, l: &mut Lists) -> Result<(), String> {
        self.fifo.folio_accessed(f, l)
    }
    fn folio_removed(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        self.gone.get_or_insert(f);
        Ok(())
    }
    fn evict_folios(
        &mut self,
        c: &EvictCtx,
        l: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        match self.gone {
            Some(f) => out.push(f),
            None => self.fifo.evict_folios(c, l, out)?,
        }
        Ok(())
    }
}

#[test]
fn a_candidate_not_resident_in_the_memcg_stops_the_run_naming_the_hook() {
    let e = run(Box::new(|| Box::new(Stale::default()))).expect_err("a stale candidate");
    let SimError::Policy(why) = &e else {
        panic!("not a policy error: {e}");
    };
    assert!(
        why.contains("evict_folios") && why.contains("not resident in memcg /a"),
        "{why}"
    );
}

/// FIFO that checks the kernel's story: a folio is added once, accessed and removed
/// only while resident; counts removals.
struct Ledger {
    fifo: Fifo,
    resident: HashSet<FolioRef>,
    removed: Rc<RefCell<(u64, u64)>>,
}

impl ReclaimPlugin for Ledger {
    fn init(&mut self, m: &str, l: &mut Lists) -> Result<(), String> {
        self.fifo.init(m, l)
    }
    fn folio_added(&mut self, f: FolioRef, l: &mut Lists) -> Result<(), String> {
        if !self.resident.insert(f) {
            return Err(format!("{f:?} added twice"));
        }
        self.fifo.folio_added(f, l)
    }
    fn folio_accessed(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        match self.resident.contains(&f) {
            true => Ok(()),
            false => Err(format!("{f:?} accessed while not resident")),
        }
    }
    fn folio_removed(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        if !self.resident.remove(&f) {
            return Err(format!("{f:?} removed while not resident"));
        }
        let mut r = self.removed.borrow_mut();
        *r = (r.0 + 1, self.resident.len() as u64);
        Ok(())
    }
    fn evict_folios(
        &mut self,
        c: &EvictCtx,
        l: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        self.fifo.evict_folios(c, l, out)
    }
}

#[test]
fn folio_removed_follows_every_folio_out_of_the_memcg() {
    let removed = Rc::new(RefCell::new((0, 0)));
    let shared = removed.clone();
    let make: PluginFactory = Box::new(move || {
        Box::new(Ledger {
            fifo: Fifo::default(),
            resident: HashSet::new(),
            removed: shared.clone(),
        })
    });
    let r = run(make).unwrap_or_else(|e| panic!("{e}"));
    let (n, _) = *removed.borrow();
    // Nothing but reclaim frees the memcg's page cache here: each eviction was a
    // removal, and the plugin heard of each.
    let steal = memcg_stat(&r, "/a", "pgsteal");
    assert!(steal > 1000, "{steal}");
    assert_eq!(n, steal);
    assert_eq!(r.plugin.as_ref().map(|p| p.folio_removed), Some(steal));
}

/// Records the hooks it is called with.
struct Log(Rc<RefCell<Vec<(&'static str, Pfn)>>>);

impl ReclaimPlugin for Log {
    fn init(&mut self, _: &str, _: &mut Lists) -> Result<(), String> {
        Ok(())
    }
    fn folio_added(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        self.0.borrow_mut().push(("added", f.pfn));
        Ok(())
    }
    fn folio_accessed(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        self.0.borrow_mut().push(("accessed", f.pfn));
        Ok(())
    }
    fn folio_removed(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        self.0.borrow_mut().push(("removed", f.pfn));
        Ok(())
    }
    fn evict_folios(
        &mut self,
        _: &EvictCtx,
        _: &mut Lists,
        _: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        Ok(())
    }
}

#[test]
fn a_mapped_access_reaches_the_plugin_only_through_the_young_bits() {
    let s = Sys::new("[machine]\nmemory = \"64MiB\"\ncpus = 2\n[[memcg]]\npath = \"/a\"\n");
    let m = s.memcg("/a");
    let mut k = s.k;
    let log = Rc::new(RefCell::new(Vec::new()));
    let shared = log.clone();
    let mut p = Plugin::new(
        &mut k,
        "log",
        Some(m),
        Default::default(),
        Box::new(move || Box::new(Log(shared.clone()))),
    );
    k.files.push(File::new(4, false));
    let mut mm = Mm {
        memcg: m,
        ..Default::default()
    };
    let v = mm.add_vma(4, VmaKind::File { file: 0 });
    let start = mm.vmas[v].start;
    k.files[0].mappings.push((0, v as u32));
    k.mms.push(mm);
    // A fault maps page 0 (its PTE young): the folio is added, not accessed.
    k.cur.mm = Some(0);
    fault::handle_mm_fault(&mut k, &mut p, 0, start, false).expect("fault");
    reclaimsim::kernel::batch::lru_add_drain(&mut k, &mut p);
    p.deliver(&mut k);
    let pfn = k.files[0].slots[0].as_page().expect("resident");
    assert_eq!(*log.borrow(), vec![("added", pfn)]);
    // Loads through the PTE set its young bit; the kernel sees nothing, nor does the
    // plugin, until a reference check reads the bit.
    k.mms[0].vmas[v].ptes[0].mkyoung();
    p.deliver(&mut k);
    assert_eq!(log.borrow().len(), 1);
    assert!(rmap::folio_referenced(&mut k, pfn, None, None) > 0);
    p.deliver(&mut k);
    assert_eq!(*log.borrow(), vec![("added", pfn), ("accessed", pfn)]);
    // A read(2) of the same page is seen at once (folio_mark_accessed).
    fault::filemap_read(&mut k, &mut p, m, 0, 0, false).expect("read");
    assert_eq!(log.borrow().last(), Some(&("accessed", pfn)));
    assert_eq!(log.borrow().len(), 3);
}

/// 24 MiB of anon touched at random in a 16 MiB memcg with zram swap, beside a little
/// file I/O, under the FIFO example governing `pages`.
fn anon_run(pages: &str) -> VariantResult {
    let text = format!(
        r#"name = "plugin-anon"
seed = 3
[machine]
memory = "64MiB"
cpus = 2
swap = {{ device = "zram", size = "64MiB" }}
[kernel]
policy = "plugin"
plugin = {{ name = "fifo", memcg = "/a", pages = "{pages}" }}
[[memcg]]
path = "/a"
max = "16MiB"
[[workload]]
name = "anon"
memcg = "/a"
[workload.anon]
size = "24MiB"
pattern = "random"
passes = 2
[[workload]]
name = "fio"
memcg = "/a"
[workload.fio]
rw = "randread"
size = "4MiB"
loops = 2
"#
    );
    let s = scenario::parse(&text, "anon.toml", &[], None)
        .unwrap_or_else(|e| panic!("{e}"))
        .base;
    let opts = RunOptions {
        check: true,
        ..Default::default()
    };
    reclaimsim::results::run(&s, "base", opts).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn with_pages_all_the_plugin_governs_anon_and_its_proposals_are_swapped() {
    let file = anon_run("file");
    let all = anon_run("all");
    let (pf, pa) = (file.plugin.clone().unwrap(), all.plugin.clone().unwrap());
    // Under "file" the plugin hears of the page cache only: about 1,024 pages read
    // twice; under "all" also of every anon page faulted in and swapped back.
    assert!(pa.folio_added > pf.folio_added + 4_000, "{pf:?} {pa:?}");
    // Its FIFO proposals are anon now, isolated and swapped out by shrink_folio_list:
    // most of what it is asked for, where "file" mode falls back for the anon.
    assert!(pa.isolated > 4 * pf.isolated.max(1), "{pf:?} {pa:?}");
    assert!(pa.fallback_pages < pa.isolated, "{pa:?}");
    assert!(memcg_stat(&all, "/a", "pswpout") > 0);
    assert!(all.vmstat["pswpout"] > 0);
}
