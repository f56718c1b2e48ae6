//! Shared helpers for the integration tests: a kernel with the classic policy built from
//! an inline scenario, for tests that drive kernel functions directly, and a runner for
//! whole scenarios through the engine.

#![allow(dead_code)]

use reclaimsim::engine::check;
use reclaimsim::engine::RunOptions;
use reclaimsim::kernel::batch;
use reclaimsim::kernel::fault;
use reclaimsim::kernel::folio::{pg, Pfn};
use reclaimsim::kernel::lru::classic::Classic;
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::memcg::MemcgId;
use reclaimsim::kernel::mm::{Mm, VmaKind};
use reclaimsim::kernel::pagecache::File;
use reclaimsim::kernel::stats::Vm;
use reclaimsim::kernel::{Exec, Kernel};
use reclaimsim::results::VariantResult;
use reclaimsim::scenario;

/// A workload nobody runs: a scenario needs one, the mechanism tests do not.
const IDLE_WORKLOAD: &str = r#"
[[workload]]
name = "idle"
[workload.anon]
size = "4KiB"
"#;

/// A kernel and its classic LRU policy, with the running task on some CPU.
pub struct Sys {
    pub k: Kernel,
    pub p: Classic,
}

impl Sys {
    /// Builds the machine of `text` (a scenario without workloads: `[machine]`,
    /// `[kernel]`, `[[memcg]]`...). The running task is on CPU 0 at time 0.
    pub fn new(text: &str) -> Sys {
        let full = format!("name = \"test\"\n{text}\n{IDLE_WORKLOAD}");
        let loaded = scenario::parse(&full, "test.toml", &[], None)
            .unwrap_or_else(|e| panic!("bad test scenario: {e}\n{full}"));
        let mut k = Kernel::new(&loaded.base.kernel_setup());
        let p = Classic::new(&k);
        k.cur = Exec::new(0, 0, false, None);
        Sys { k, p }
    }

    /// Continue on `cpu` (same virtual clock), as a task that is not kswapd.
    pub fn on(&mut self, cpu: u32) {
        self.k.cur = Exec::new(self.k.cur.clock, cpu, false, None);
    }

    pub fn memcg(&self, path: &str) -> MemcgId {
        self.k
            .memcgs
            .by_path(path)
            .unwrap_or_else(|| panic!("no memcg {path}"))
    }

    /// The lruvec of a memcg on node 0.
    pub fn lv(&self, memcg: MemcgId) -> usize {
        self.k.lruvec(memcg, 0)
    }

    /// A new (non-sparse) file of `pages` pages; returns its id.
    pub fn file(&mut self, pages: u64) -> u32 {
        self.k.files.push(File::new(pages, false));
        (self.k.files.len() - 1) as u32
    }

    /// A new process charged to `memcg` with one VMA: anonymous memory of `anon_pages`
    /// pages when `file` is None, else a shared mapping of the whole file. Returns (mm,
    /// the VMA's first virtual page).
    pub fn process(&mut self, memcg: MemcgId, file: Option<u32>, anon_pages: u64) -> (u32, u64) {
        let id = self.k.mms.len() as u32;
        let mut mm = Mm {
            memcg,
            ..Default::default()
        };
        let v = match file {
            None => mm.add_vma(anon_pages, VmaKind::Anon),
            Some(f) => {
                let pages = self.k.files[f as usize].pages;
                let v = mm.add_vma(pages, VmaKind::File { file: f });
                self.k.files[f as usize].mappings.push((id, v as u32));
                v
            }
        };
        let start = mm.vmas[v].start;
        self.k.mms.push(mm);
        (id, start)
    }

    /// read(2) of one page (filemap_read) by a task of `memcg` on the current CPU.
    pub fn read(&mut self, memcg: MemcgId, file: u32, index: u64) {
        fault::filemap_read(&mut self.k, &mut self.p, memcg, file, index, false)
            .expect("read was OOM-killed");
    }

    /// A page fault (load or store) at `vpn` of `mm`.
    pub fn fault(&mut self, mm: u32, vpn: u64, write: bool) {
        self.k.cur.mm = Some(mm);
        fault::handle_mm_fault(&mut self.k, &mut self.p, mm, vpn, write)
            .expect("fault was OOM-killed");
        self.k.cur.mm = None;
    }

    /// The frame caching page `index` of `file`, if resident.
    pub fn pfn(&self, file: u32, index: u64) -> Option<Pfn> {
        self.k.files[file as usize].slots[index as usize].as_page()
    }

    /// Like `pfn`, but the page must be resident.
    pub fn page(&self, file: u32, index: u64) -> Pfn {
        self.pfn(file, index)
            .unwrap_or_else(|| panic!("file {file} page {index} is not resident"))
    }

    /// Page `index` of `file` was evicted and left a shadow entry.
    pub fn has_shadow(&self, file: u32, index: u64) -> bool {
        self.k.files[file as usize].slots[index as usize]
            .as_shadow()
            .is_some()
    }

    pub fn test(&self, pfn: Pfn, flag: u32) -> bool {
        self.k.folios[pfn as usize].test(flag)
    }

    /// lru_add_drain() on the current CPU.
    pub fn drain(&mut self) {
        batch::lru_add_drain(&mut self.k, &mut self.p);
    }

    /// lru_add_drain_all().
    pub fn drain_all(&mut self) {
        batch::lru_add_drain_all(&mut self.k, &mut self.p);
    }

    /// A global vmstat counter.
    pub fn vm(&self, c: Vm) -> u64 {
        self.k.vm.get(c)
    }

    /// A memcg's own event counter.
    pub fn memcg_vm(&self, memcg: MemcgId, c: Vm) -> u64 {
        self.k.memcgs.cgs[memcg as usize].stat.get(c)
    }

    /// The lists of an lruvec, head (newest) first, by the checker's list names.
    pub fn lists(&self, lv: usize) -> Vec<(String, Vec<Pfn>)> {
        let mut out: Vec<(String, Vec<Pfn>)> = Vec::new();
        self.p
            .check(&self.k, lv, &mut |pfn, name| {
                match out.last_mut() {
                    Some((n, v)) if n == name => v.push(pfn),
                    _ => out.push((name.to_string(), vec![pfn])),
                }
                Ok(())
            })
            .expect("policy bookkeeping");
        out
    }

    /// The frames on one list of an lruvec, head (newest) first.
    pub fn list(&self, lv: usize, name: &str) -> Vec<Pfn> {
        self.lists(lv)
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .unwrap_or_default()
    }

    /// The name of the list `pfn` is linked on, if any (searching every lruvec).
    pub fn list_of(&self, pfn: Pfn) -> Option<String> {
        (0..self.k.lruvecs.len())
            .flat_map(|lv| self.lists(lv))
            .find(|(_, v)| v.contains(&pfn))
            .map(|(n, _)| n)
    }

    /// Total lru_lock acquisitions over every lock instance.
    pub fn lock_acquisitions(&self) -> u64 {
        self.k.locks.iter().map(|l| l.acquisitions).sum()
    }

    /// The invariant checker must pass.
    #[track_caller]
    pub fn check(&self) {
        if let Err(e) = check::check(&self.k, &self.p) {
            panic!("invariant violated: {e}");
        }
    }

    /// The invariant checker's verdict.
    pub fn check_result(&self) -> Result<(), String> {
        check::check(&self.k, &self.p)
    }
}

/// Flags of a frame, for messages.
pub fn flags(s: &Sys, pfn: Pfn) -> String {
    let f = &s.k.folios[pfn as usize];
    let names = [
        (pg::LRU, "lru"),
        (pg::ACTIVE, "active"),
        (pg::REFERENCED, "referenced"),
        (pg::WORKINGSET, "workingset"),
        (pg::SWAPBACKED, "swapbacked"),
        (pg::IN_LRU_ADD, "in_lru_add"),
    ];
    let mut v: Vec<&str> = names
        .iter()
        .filter(|(b, _)| f.test(*b))
        .map(|(_, n)| *n)
        .collect();
    let pins = f.pins();
    let p = format!("pins={pins}");
    v.push(&p);
    v.join("|")
}

/// Loads a whole scenario (with workloads) from text, optionally with another seed.
pub fn scenario(text: &str, seed: Option<u64>) -> reclaimsim::scenario::config::Scenario {
    scenario::parse(text, "test.toml", &[], seed)
        .unwrap_or_else(|e| panic!("bad test scenario: {e}\n{text}"))
        .base
}

/// Runs a scenario through the engine with the invariant checker on.
pub fn run_checked(text: &str) -> VariantResult {
    let s = scenario(text, None);
    reclaimsim::results::run(
        &s,
        "base",
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("run failed: {e}"))
}

/// A memcg's hierarchical memory.stat entry, else its model counter of that name (`usage`
/// is memory.current, `swap` memory.swap.current).
pub fn memcg_stat(r: &VariantResult, memcg: &str, key: &str) -> u64 {
    r.memcgs
        .get(memcg)
        .unwrap_or_else(|| panic!("no memcg {memcg} in results"))
        .get(key)
        .unwrap_or_else(|| panic!("no memory.stat or model counter {key}"))
}

/// A memcg's memory.events entry.
pub fn memcg_event(r: &VariantResult, memcg: &str, key: &str) -> u64 {
    *r.memcgs
        .get(memcg)
        .unwrap_or_else(|| panic!("no memcg {memcg} in results"))
        .events
        .get(key)
        .unwrap_or_else(|| panic!("no memory.events {key}"))
}

/// A global /proc/vmstat entry.
pub fn vmstat(r: &VariantResult, key: &str) -> u64 {
    r.counter(key)
        .unwrap_or_else(|| panic!("no vmstat or model counter {key}"))
}

/// A process populating anon memory twice the machine's and reading it back twice, on
/// swap `device` (the passes after the first swap pages in and evict them again), in
/// `memcg` when given.
pub fn swap_reread(policy: &str, device: &str, memcg: Option<&str>) -> String {
    let (cg, member) = match memcg {
        Some(path) => (
            format!("[[memcg]]\npath = \"{path}\"\n"),
            format!("memcg = \"{path}\"\n"),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        r#"
name = "reread"
[machine]
memory = "16MiB"
cpus = 2
swap = {{ device = "{device}", size = "128MiB" }}
[kernel]
policy = "{policy}"
{cg}[[workload]]
name = "reader"
{member}[workload.anon]
size = "32MiB"
populate = true
write = false
pattern = "seq"
passes = 3
"#
    )
}

/// A page_content table's inside ("items2000 = 3, zero = 1"; any other key is `random`).
pub fn page_content(text: &str) -> reclaimsim::kernel::config::PageContent {
    let mut c = reclaimsim::kernel::config::PageContent {
        items2000: 0,
        items32: 0,
        zero: 0,
        random: 0,
    };
    for part in text.split(',') {
        let (k, v) = part.split_once('=').unwrap();
        let v: u32 = v.trim().parse().unwrap();
        match k.trim() {
            "items2000" => c.items2000 = v,
            "items32" => c.items32 = v,
            "zero" => c.zero = v,
            _ => c.random = v,
        }
    }
    c
}

impl Sys {
    /// The swap slot the PTE at `vpn` of process `mm` holds.
    pub fn slot_of(&self, mm: u32, vpn: u64) -> u32 {
        let m = &self.k.mms[mm as usize];
        let v = m.find_vma(vpn).unwrap();
        m.vmas[v].ptes[(vpn - m.vmas[v].start) as usize]
            .swap_slot()
            .expect("swapped out")
    }

    /// 64 MiB, 2 CPUs, a 64 MiB zram swap device whose table is `swap` (its inside, after
    /// the device and size), and one process in the root memcg of `pages` anon pages
    /// holding `content` (`page_content`'s text), faulted in and added to the LRU.
    pub fn zram_process(swap: &str, content: &str, pages: u64) -> (Sys, u32, u64) {
        let mut s = Sys::new(&format!(
            "[machine]\nmemory = \"64MiB\"\ncpus = 2\n\
                 swap = {{ device = \"zram\", size = \"64MiB\"{swap} }}\n"
        ));
        let (mm, start) = s.process(reclaimsim::kernel::memcg::ROOT, None, pages);
        s.k.mms[mm as usize].content = page_content(content);
        for i in 0..pages {
            s.fault(mm, start + i, true);
        }
        s.drain();
        (s, mm, start)
    }

    /// Reclaims pages `start..start + pages` of process `mm` through shrink_folio_list
    /// (PTEs made old, isolated from the LRU), putting the survivors back; returns the
    /// pages freed.
    pub fn reclaim_range(&mut self, mm: u32, start: u64, pages: u64) -> u64 {
        use reclaimsim::kernel::vmscan::{self, ReclaimStat, ScanControl};
        let lv = self.lv(self.k.mms[mm as usize].memcg);
        let mut list: Vec<Pfn> = Vec::new();
        for vpn in start..start + pages {
            let m = &self.k.mms[mm as usize];
            let v = m.find_vma(vpn).unwrap();
            let Some(pfn) = m.vmas[v].ptes[(vpn - m.vmas[v].start) as usize].pfn() else {
                continue;
            };
            self.k.mms[mm as usize].pte_mut(vpn).unwrap().mkold();
            self.k.lock_lruvec(lv);
            self.p.del_folio(&mut self.k, pfn);
            assert!(self.k.isolate_lru_flag(pfn));
            self.k.unlock();
            list.push(pfn);
        }
        let mut sc = ScanControl::new(32, None, false);
        let mut stat = ReclaimStat::default();
        let freed =
            vmscan::shrink_folio_list(&mut self.k, &mut self.p, &mut list, &mut sc, &mut stat);
        self.k.lock_lruvec(lv);
        for pfn in list {
            self.k.folios[pfn as usize].set(pg::LRU);
            self.p.add_folio(&mut self.k, pfn, false);
        }
        self.k.unlock();
        freed
    }
}
