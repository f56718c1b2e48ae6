//! The paths that bring pages in: allocation with its reclaim triggers
//! (mm/page_alloc.c, mm/memcontrol.c try_charge), page faults (mm/memory.c), buffered
//! reads (mm/filemap.c), munmap, and the OOM killer (mm/oom_kill.c).

use crate::kernel::batch;
use crate::kernel::config::SwapDevice;
use crate::kernel::debug::vm_bug_on;
use crate::kernel::folio::{pg, Folio, Pfn, NIL};
use crate::kernel::lru::Policy;
use crate::kernel::memcg::{MemcgId, ROOT};
use crate::kernel::mm::{Pte, VmaKind};
use crate::kernel::node::{WMARK_LOW, WMARK_MIN};
use crate::kernel::pagecache::Slot;
use crate::kernel::stats::{Cat, StallKind, Vm};
use crate::kernel::swap::SwapSlot;
use crate::kernel::throttle::{self, Reason, Sleep};
use crate::kernel::vmscan::{self, MAX_RECLAIM_RETRIES};
use crate::kernel::{Kernel, OomKillEvent};
use crate::sim::lock::{LockRef, LockSite};

/// The running task was OOM-killed, or no memory could be found for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Killed;

/// Models wakeup_kswapd(): wakes the node's kswapd now, unless it is not waiting on
/// kswapd_wait (already balancing), has given up (kswapd_failures >=
/// MAX_RECLAIM_RETRIES), or the node is already balanced.
pub fn wakeup_kswapd(k: &mut Kernel, node: usize) {
    let n = &mut k.nodes[node];
    if !n.kswapd_waiting || n.kswapd_failures >= MAX_RECLAIM_RETRIES || n.balanced() {
        return;
    }
    n.kswapd_wake = true;
    n.kswapd_waiting = false;
    // kswapd tasks are the first task ids, one per node.
    k.sched.push(node, k.cur.clock);
}

/// Allocates and charges one page for `memcg`: try_charge (with memcg reclaim and memcg
/// OOM), then the page allocator's fast path at the low watermark, the slow path (wake
/// kswapd, retry at min), direct reclaim, and finally the global OOM killer.
pub fn alloc_folio(k: &mut Kernel, p: &mut dyn Policy, memcg: MemcgId) -> Result<Pfn, Killed> {
    try_charge(k, p, memcg)?;
    k.memcgs.cgs[memcg as usize].precharged += 1;
    let page = alloc_page(k, p, memcg);
    k.memcgs.cgs[memcg as usize].precharged -= 1;
    match page {
        Ok(pfn) => {
            // commit_charge(): VM_BUG_ON_FOLIO(folio_memcg(folio), folio): a new frame
            // carries no memcg yet (free_folio resets it).
            vm_bug_on!(
                k.folios[pfn as usize].memcg != ROOT,
                "frame {pfn} charged twice"
            );
            k.folios[pfn as usize].memcg = memcg;
            k.spend(k.costs.charge, Cat::Other);
            handle_over_high(k, p, memcg);
            Ok(pfn)
        }
        Err(e) => {
            k.memcgs.uncharge(memcg, 1);
            Err(e)
        }
    }
}

/// Models try_charge_memcg(): reclaim the memcg over its limit while that makes
/// progress, give up after MAX_RECLAIM_RETRIES fruitless tries and OOM-kill in it.
fn try_charge(k: &mut Kernel, p: &mut dyn Policy, memcg: MemcgId) -> Result<(), Killed> {
    let mut stalled_from = None;
    let charged = try_charge_loop(k, p, memcg, &mut stalled_from);
    if let Some(from) = stalled_from {
        k.record_stall(memcg, StallKind::Max, k.cur.clock - from);
    }
    charged
}

/// try_charge_memcg()'s loop; `stalled_from` is when it first reclaimed, if it did.
fn try_charge_loop(
    k: &mut Kernel,
    p: &mut dyn Policy,
    memcg: MemcgId,
    stalled_from: &mut Option<u64>,
) -> Result<(), Killed> {
    let mut retries = MAX_RECLAIM_RETRIES;
    let mut drained = false;
    // page_counter_try_charge() reads usage that other CPUs change.
    k.sync();
    loop {
        let Some(over) = k.memcgs.over_limit(memcg, 1) else {
            // The charge's atomics at a limit take time, in which other CPUs charge
            // too: when they took the room, the page's own try fails and reclaims.
            if charge_counters(k, memcg) {
                k.sync();
                if k.memcgs.over_limit(memcg, 1).is_some() {
                    continue;
                }
            }
            break;
        };
        stalled_from.get_or_insert(k.cur.clock);
        k.memcgs.cgs[over as usize].events.max += 1;
        // try_charge_memcg() stalls around the limit reclaim.
        let pflags = k.memstall_enter();
        let reclaimed = vmscan::try_to_free_mem_cgroup_pages(k, p, over, 1);
        k.memstall_leave(pflags);
        k.sync();
        // One retry after drain_all_stock() (per-CPU charge stocks are not modelled, the
        // retry and its reclaim are), then retries while reclaim makes progress.
        if reclaimed > 0 || !drained {
            drained = true;
            continue;
        }
        if let Some(until) = crate::kernel::writeback::throttle_on_writeback(k, Some(over)) {
            throttle::sleep(k, Sleep::Reclaim(Reason::Writeback), until);
            continue;
        }
        if retries > 0 {
            retries -= 1;
            continue;
        }
        k.memcgs.cgs[over as usize].events.oom += 1;
        if !out_of_memory(k, p, Some(over), *stalled_from) || current_killed(k) {
            return Err(Killed);
        }
        retries = MAX_RECLAIM_RETRIES;
    }
    k.memcgs.charge(memcg, 1);
    // mem_cgroup_charge_statistics(): the charge's PGPGIN event.
    k.memcg_rstat_updated(memcg, 1);
    Ok(())
}

/// MEMCG_CHARGE_BATCH (6.1; 32 before 6.0): the pages try_charge_memcg() charges at once
/// to refill the CPU's stock.
const MEMCG_CHARGE_BATCH: u64 = 64;

/// The page counters' lines that try_charge_memcg() (6.1) updates for one page when a
/// batch would exceed a limit: page_counter_try_charge() adds MEMCG_CHARGE_BATCH to each
/// level from the memcg up, the level whose max it exceeds takes it back at once, the
/// levels below cancel theirs, and the page is then charged alone on every level up to
/// the root. Each is an atomic on a line that every CPU charging there shares
/// (`line_rmw`). Below every limit the per-CPU stock serves the charge and no counter is
/// touched; neither the stock's refill (once a batch) nor the failed tries before each
/// round of limit reclaim are modelled. Whether it touched them (and so waited).
fn charge_counters(k: &mut Kernel, memcg: MemcgId) -> bool {
    let Some(fail) = k.memcgs.over_limit(memcg, MEMCG_CHARGE_BATCH) else {
        return false;
    };
    let rmw = |k: &mut Kernel, c: MemcgId| k.line_rmw(LockRef::PageCounter(c), LockSite::TryCharge);
    let mut level = Some(memcg);
    while let Some(c) = level {
        // The batch's add, and its undo: page_counter_cancel below, atomic_long_sub at
        // the level that failed.
        rmw(k, c);
        rmw(k, c);
        level = if c == fail {
            None
        } else {
            k.memcgs.cgs[c as usize].parent
        };
    }
    let mut level = Some(memcg);
    while let Some(c) = level {
        rmw(k, c);
        level = k.memcgs.cgs[c as usize].parent;
    }
    true
}

/// Models mem_cgroup_handle_over_high() (6.1), on the way back to user space after a
/// charge left the memcg or an ancestor above memory.high: reclaim a charge batch, then
/// while the penalty (calculate_high_delay) is above HZ/100, reclaim again, 32 pages a
/// time, as long as that makes progress or retries remain; then sleep the penalty.
fn handle_over_high(k: &mut Kernel, p: &mut dyn Policy, memcg: MemcgId) {
    let over = |k: &Kernel| {
        k.memcgs
            .ancestors(memcg)
            .any(|m| m != ROOT && k.memcgs.cgs[m as usize].usage > k.memcgs.cgs[m as usize].high)
    };
    if !over(k) {
        return;
    }
    let from = k.cur.clock;
    over_high_reclaim(k, p, memcg);
    k.record_stall(memcg, StallKind::High, k.cur.clock - from);
}

/// mem_cgroup_handle_over_high()'s reclaim and penalty, for a memcg above memory.high.
fn over_high_reclaim(k: &mut Kernel, p: &mut dyn Policy, memcg: MemcgId) {
    let nr_pages = throttle::MEMCG_CHARGE_BATCH;
    let mut retries = MAX_RECLAIM_RETRIES;
    let mut batch = nr_pages;
    loop {
        let reclaimed = reclaim_high(k, p, memcg, batch);
        let penalty = throttle::high_delay(k, memcg, nr_pages);
        if penalty <= throttle::HZ / 100 * throttle::JIFFY_NS {
            return;
        }
        if reclaimed > 0 || retries > 0 {
            if reclaimed == 0 {
                retries -= 1;
            }
            batch = vmscan::SWAP_CLUSTER_MAX;
            continue;
        }
        let until = k.cur.clock + penalty;
        // The penalty sleep is a memory stall (schedule_timeout_killable in one).
        let pflags = k.memstall_enter();
        throttle::sleep(k, Sleep::MemcgHigh, until);
        k.memstall_leave(pflags);
        return;
    }
}

/// Models reclaim_high(): reclaim `nr` pages from the memcg and each ancestor below the
/// root that is above memory.high (a `high` event each).
fn reclaim_high(k: &mut Kernel, p: &mut dyn Policy, memcg: MemcgId, nr: u64) -> u64 {
    let mut reclaimed = 0;
    for m in k.memcgs.ancestors(memcg).collect::<Vec<_>>() {
        let c = &k.memcgs.cgs[m as usize];
        if m == ROOT || c.usage <= c.high {
            continue;
        }
        k.memcgs.cgs[m as usize].events.high += 1;
        let pflags = k.memstall_enter();
        reclaimed += vmscan::try_to_free_mem_cgroup_pages(k, p, m, nr);
        k.memstall_leave(pflags);
    }
    reclaimed
}

/// The running task has been OOM-killed (fatal_signal_pending() after a kill).
pub fn current_killed(k: &Kernel) -> bool {
    k.cur.mm.is_some_and(|m| k.mms[m as usize].dead)
}

/// The node order an allocation tries (for_each_zone_zonelist_nodemask): the running
/// CPU's node, then the others in index order from it (node distances are not
/// modelled), leaving out those the running task's nodemask (`Exec::mems`, MPOL_BIND or
/// cpuset.mems) does not allow.
pub fn zonelist(k: &Kernel) -> impl Iterator<Item = usize> {
    zonelist_nodemask(k, k.cur.mems)
}

/// The zonelist from the running CPU's node within `nodemask` (a bit per node; 0 for
/// every node), as reclaim's shrink_zones() walks it with sc->nodemask.
pub fn zonelist_nodemask(k: &Kernel, nodemask: u64) -> impl Iterator<Item = usize> {
    let local = k.cpu_node[k.cur.cpu as usize] as usize;
    let n = k.nr_nodes();
    (0..n)
        .map(move |i| (local + i) % n)
        .filter(move |&node| nodemask == 0 || nodemask >> node & 1 == 1)
}

/// The first node of the zonelist (ac->preferred_zoneref, first_zones_zonelist): the
/// local node unless the nodemask leaves it out; what zone_statistics() counts a hit on
/// and where the compressed pools take their frames.
pub fn preferred_node(k: &Kernel) -> usize {
    let local = k.cpu_node[k.cur.cpu as usize] as usize;
    zonelist(k).next().unwrap_or(local)
}

/// Models get_page_from_freelist() for order 0: a page from the first node of the
/// zonelist whose free pages are above `mark` (NR_FREE_PAGES: the per-CPU lists do not
/// count).
fn get_page_from_freelist(k: &mut Kernel, mark: usize) -> Option<Pfn> {
    let local = preferred_node(k);
    for n in zonelist(k) {
        let zone = &k.nodes[n].zone;
        if zone.watermark_ok(zone.wmark[mark]) {
            if let Some(pfn) = k.take_free_page(n) {
                zone_statistics(k, local, n);
                return Some(pfn);
            }
        }
    }
    None
}

/// Models zone_statistics() (6.1): a page from `node` for an allocation that preferred
/// `preferred` is a numa_hit there when they are the same node, else a numa_miss there
/// and a numa_foreign on the preferred node.
fn zone_statistics(k: &mut Kernel, preferred: usize, node: usize) {
    if node == preferred {
        k.vm.add(Vm::NumaHit, 1);
        k.nodes[node].numa_hit += 1;
    } else {
        k.vm.add(Vm::NumaMiss, 1);
        k.nodes[node].numa_miss += 1;
        k.nodes[preferred].numa_foreign += 1;
    }
}

/// Models __alloc_pages() for order 0: get_page_from_freelist() at the low watermark,
/// then __alloc_pages_slowpath() (wake kswapd, min watermark, direct reclaim, OOM).
fn alloc_page(k: &mut Kernel, p: &mut dyn Policy, memcg: MemcgId) -> Result<Pfn, Killed> {
    let mut no_progress = 0;
    // When this allocation first entered direct reclaim (the OOM timeline's stall).
    let mut stalled_from = None;
    loop {
        // The free counts and watermarks are the other CPUs' too.
        k.sync();
        if let Some(pfn) = get_page_from_freelist(k, WMARK_LOW) {
            return Ok(pfn);
        }
        for n in zonelist(k) {
            wakeup_kswapd(k, n);
        }
        if let Some(pfn) = get_page_from_freelist(k, WMARK_MIN) {
            return Ok(pfn);
        }
        // __perform_reclaim(): the direct reclaim, its throttles included, is a stall.
        stalled_from.get_or_insert(k.cur.clock);
        let pflags = k.memstall_enter();
        let progress = vmscan::try_to_free_pages(k, p, memcg);
        k.memstall_leave(pflags);
        if current_killed(k) {
            return Err(Killed);
        }
        if progress > 0 {
            no_progress = 0;
            // __alloc_pages_direct_reclaim(): what reclaim freed may sit on per-CPU
            // lists; if the allocation still fails, drain them (once a round of direct
            // reclaim: its `drained` is the call's) and retry.
            let min_ok = zonelist(k).any(|n| {
                let zone = &k.nodes[n].zone;
                zone.watermark_ok(zone.wmark[WMARK_MIN])
            });
            if !min_ok {
                k.drain_all_pages();
            }
            continue;
        }
        if let Some(until) = crate::kernel::writeback::throttle_on_writeback(k, None) {
            throttle::sleep(k, Sleep::Reclaim(Reason::Writeback), until);
            continue;
        }
        no_progress += 1;
        if no_progress > MAX_RECLAIM_RETRIES {
            if !out_of_memory(k, p, None, stalled_from) || current_killed(k) {
                return Err(Killed);
            }
            no_progress = 0;
        }
    }
}

/// Models out_of_memory(): kills the process with the largest footprint (resident anon
/// plus swap entries, oom_badness) within the scope, and reaps its memory. `stalled_from`:
/// when the task that calls it began the reclaim that failed (its first limit reclaim of
/// this charge, its first direct reclaim of this allocation, the start of a memory.max
/// write), None for kswapd; the kill's record keeps the stall up to the kill.
pub fn out_of_memory(
    k: &mut Kernel,
    p: &mut dyn Policy,
    scope: Option<MemcgId>,
    stalled_from: Option<u64>,
) -> bool {
    let root = scope.unwrap_or(ROOT);
    // oom_cpuset_eligible() of a global OOM whose allocation had a nodemask
    // (CONSTRAINT_MEMORY_POLICY): mempolicy_in_oom_domain() leaves out processes bound
    // (MPOL_BIND) to nodes all outside it; unbound processes stay eligible.
    let mask = if scope.is_none() { k.cur.mems } else { 0 };
    let in_domain = |mm: &crate::kernel::mm::Mm| mask == 0 || mm.mems == 0 || mm.mems & mask != 0;
    let victim = (0..k.mms.len())
        .filter(|&m| !k.mms[m].dead && k.memcgs.is_descendant(k.mms[m].memcg, root))
        .filter(|&m| in_domain(&k.mms[m]))
        .max_by_key(|&m| (k.mms[m].anon_rss + k.mms[m].swap_ents, std::cmp::Reverse(m)));
    let Some(victim) = victim else { return false };
    k.vm.add(Vm::OomKill, 1);
    // memcg_memory_event_mm(MEMCG_OOM_KILL): an event of the victim's memcg (the results
    // add it to each ancestor's memory.events).
    let memcg = k.mms[victim].memcg;
    k.memcgs.cgs[memcg as usize].events.oom_kill += 1;
    k.oom_kills.push(OomKillEvent {
        time_ns: k.cur.clock,
        scope,
        victim_mm: victim as u32,
        stall_ns: stalled_from.map(|from| k.cur.clock - from),
    });
    exit_mmap(k, p, victim);
    true
}

/// The process `mm` exits and its memory is freed (the OOM reaper's and exit_mmap()'s
/// unmapping: every VMA zapped, after draining the LRU batches).
fn exit_mmap(k: &mut Kernel, p: &mut dyn Policy, mm: usize) {
    k.mms[mm].dead = true;
    batch::lru_add_drain_all(k, p);
    for v in 0..k.mms[mm].vmas.len() {
        zap_vma(k, p, mm as u32, v);
    }
}

/// A SIGKILL from user space to process `mm` (Chrome killing a renderer to discard its
/// tab): it exits and its memory is freed (do_exit's exit_mmap). Not an OOM kill.
pub fn kill_process(k: &mut Kernel, p: &mut dyn Policy, mm: u32) {
    if !k.mms[mm as usize].dead {
        exit_mmap(k, p, mm as usize);
    }
}

/// A SIGKILL from user space to every process of memcg `m` and its descendants (as
/// oomd's kill of a cgroup, or a write to cgroup.kill): each exits and its memory is
/// freed. Not an OOM kill: no oom_kill event, no entry in `oom_kills`. The processes
/// killed, by mm id.
pub fn kill_memcg(k: &mut Kernel, p: &mut dyn Policy, m: MemcgId) -> Vec<u32> {
    let victims: Vec<usize> = (0..k.mms.len())
        .filter(|&x| !k.mms[x].dead && k.memcgs.is_descendant(k.mms[x].memcg, m))
        .collect();
    for &x in &victims {
        exit_mmap(k, p, x);
    }
    victims.into_iter().map(|x| x as u32).collect()
}

/// Models one load or store of a program to page `page` of VMA `region` of `mm`: a
/// present PTE gets its accessed (and, on a store, dirty) bit from the MMU, a clean
/// shared file PTE takes a write-protect fault (do_wp_page), anything else a page
/// fault (handle_mm_fault). The PTE is shared state (reclaim clears the accessed bit and
/// unmaps), so the access first meets the other tasks at its virtual time: a reclaimer
/// earlier in virtual time never sees a reference made after it.
#[inline]
pub fn access_page(
    k: &mut Kernel,
    p: &mut dyn Policy,
    mm: u32,
    region: usize,
    page: u64,
    write: bool,
) -> Result<(), Killed> {
    k.sync();
    let vma = &mut k.mms[mm as usize].vmas[region];
    let pte = &mut vma.ptes[page as usize];
    // The hit that only marks the PTE young (and dirty), the common case, inline; the
    // rest (a fault, a write to a clean file PTE, the zero page) out of line.
    if pte.pfn().is_some() && (!write || pte.dirty() || !matches!(vma.kind, VmaKind::File { .. })) {
        pte.mkyoung();
        if write {
            pte.mkdirty();
        }
        k.spend(k.costs.access_hit, Cat::Other);
        return Ok(());
    }
    access_page_slow(k, p, mm, region, page, write)
}

/// `access_page` past its PTE hit: a clean shared file PTE written (do_wp_page), a read
/// of the zero page, or a fault.
#[inline(never)]
fn access_page_slow(
    k: &mut Kernel,
    p: &mut dyn Policy,
    mm: u32,
    region: usize,
    page: u64,
    write: bool,
) -> Result<(), Killed> {
    let vma = &k.mms[mm as usize].vmas[region];
    let vpn = vma.start + page;
    let pte = vma.ptes[page as usize];
    if pte.pfn().is_some() {
        // A clean shared file PTE is write-protected (folio_mkclean).
        do_wp_page(k, mm, vpn);
    } else if pte.is_zero() && !write {
        k.spend(k.costs.access_hit, Cat::Other);
    } else {
        handle_mm_fault(k, p, mm, vpn, write)?;
    }
    Ok(())
}

/// Models do_anonymous_page / do_swap_page / filemap_fault for a touch of `vpn` whose
/// PTE is not present (or is the zero page and this is a write).
pub fn handle_mm_fault(
    k: &mut Kernel,
    p: &mut dyn Policy,
    mm: u32,
    vpn: u64,
    write: bool,
) -> Result<(), Killed> {
    let m = &k.mms[mm as usize];
    let memcg = m.memcg;
    let v = m.find_vma(vpn).expect("workload touches only its regions");
    let idx = (vpn - m.vmas[v].start) as usize;
    let pte = m.vmas[v].ptes[idx];
    let kind = m.vmas[v].kind;
    k.count(Vm::Pgfault, memcg, 1);
    k.spend(k.costs.fault, Cat::Other);
    if pte.swap_slot().is_some() {
        return do_swap_page(k, p, mm, v, idx, pte, write);
    }
    match kind {
        VmaKind::Anon => {
            if !write {
                k.mms[mm as usize].vmas[v].ptes[idx] = Pte::ZERO;
                return Ok(());
            }
            let pfn = alloc_folio(k, p, memcg)?;
            k.spend(k.costs.page_zero, Cat::Io);
            if pte_changed(k, mm, v, idx, pte) {
                k.free_folio(pfn);
                return Ok(());
            }
            let f = &mut k.folios[pfn as usize];
            f.set(pg::ANON | pg::SWAPBACKED);
            f.owner = mm;
            f.index = vpn as u32;
            k.page_add_rmap(pfn);
            let m = &mut k.mms[mm as usize];
            m.vmas[v].ptes[idx] = Pte::present(pfn, true, true);
            m.anon_rss += 1;
            batch::folio_add_lru(k, p, pfn, true);
        }
        VmaKind::File { file } => {
            // filemap_fault; a write is do_shared_fault: page_mkwrite, then the PTE is
            // installed writable and dirty and the folio dirtied
            // (fault_dirty_shared_page). A read installs it write-protected.
            let pfn = find_or_read_page(k, p, memcg, file, idx as u64, Via::Fault)?;
            if pte_changed(k, mm, v, idx, pte) {
                return Ok(());
            }
            k.page_add_rmap(pfn);
            k.mms[mm as usize].vmas[v].ptes[idx] = Pte::present(pfn, true, write);
            if write {
                dirty_shared_page(k, pfn);
            }
        }
    }
    Ok(())
}

/// Whether the PTE changed while the fault waited (allocation and the lru lock are sync
/// points where other threads of the process run): the kernel's pte_same() check under
/// the PTE lock, after which the fault backs out. The access then goes through the PTE
/// the other thread installed, if it is present.
fn pte_changed(k: &mut Kernel, mm: u32, v: usize, idx: usize, orig: Pte) -> bool {
    let vma = &mut k.mms[mm as usize].vmas[v];
    let pte = &mut vma.ptes[idx];
    if *pte == orig {
        return false;
    }
    if pte.pfn().is_some() {
        pte.mkyoung();
    }
    true
}

/// Models fault_dirty_shared_page() (and the end of generic_perform_write): dirty the
/// folio (folio_mark_dirty) and let balance_dirty_pages_ratelimited() kick background
/// writeback.
fn dirty_shared_page(k: &mut Kernel, pfn: Pfn) {
    if crate::kernel::writeback::folio_mark_dirty(k, pfn) {
        crate::kernel::writeback::balance_dirty_pages_ratelimited(k);
    }
}

/// Models do_wp_page() on a shared file mapping (wp_page_shared): a write to a present
/// PTE that writeback write-protected (folio_mkclean). page_mkwrite, then the PTE is made
/// writable and dirty and the folio dirtied again.
pub fn do_wp_page(k: &mut Kernel, mm: u32, vpn: u64) {
    let m = &mut k.mms[mm as usize];
    let pte = m
        .pte_mut(vpn)
        .expect("a write-protect fault on a mapped page");
    let pfn = pte.pfn().expect("present PTE");
    pte.mkyoung();
    pte.mkdirty();
    let memcg = m.memcg;
    k.count(Vm::Pgfault, memcg, 1);
    k.spend(k.costs.wp_fault, Cat::Other);
    dirty_shared_page(k, pfn);
}

/// Models do_swap_page() (Linux 6.1): a swap-cache hit maps the folio (minor fault;
/// lookup_swap_cache counts a readahead hit). On a miss, a SWP_SYNCHRONOUS_IO device
/// (zram, brd) with an entry of one reference skips the swap cache
/// (`swapin_skip_swapcache`); any other miss reads the page into a new swap-cache folio
/// through swapin_readahead (major fault; an SSD reads the window's neighbours too).
/// folio_lock_or_retry() then waits for a read still in flight. After mapping a
/// swap-cache folio, swap_free() drops the PTE's reference and should_try_to_free_swap()
/// decides whether the folio gives its slot back.
fn do_swap_page(
    k: &mut Kernel,
    p: &mut dyn Policy,
    mm: u32,
    v: usize,
    idx: usize,
    orig: Pte,
    write: bool,
) -> Result<(), Killed> {
    let memcg = k.mms[mm as usize].memcg;
    let slot = orig.swap_slot().expect("a swap PTE");
    let cached = |k: &Kernel| {
        k.swap.as_ref().expect("swap entry without swap").slots[slot as usize].as_cached()
    };
    let pfn = match cached(k) {
        Some(pfn) => {
            crate::kernel::swap_io::lookup_hit(k, pfn, mm, v, idx);
            pfn
        }
        // __swap_count(entry) == 1: the model has no fork and no shared anon, so every
        // swap entry is held by exactly one PTE and its count is always 1.
        None if k.swap.as_ref().unwrap().synchronous_io => {
            return swapin_skip_swapcache(k, p, mm, v, idx, orig, write);
        }
        None => {
            let read = crate::kernel::swap_io::swapin_readahead(k, p, mm, v, idx)?;
            k.count(Vm::Pgmajfault, memcg, 1);
            k.spend(k.costs.swap_in_rest, Cat::Other);
            // The entry went (another thread swapped it in) while the reads were set up.
            let Some(pfn) = read else {
                return Ok(());
            };
            pfn
        }
    };
    // folio_lock_or_retry(): the read may still be in flight; after it, the folio must
    // still be the entry's (folio_test_swapcache and page_swap_entry checks).
    if crate::kernel::swap_io::wait_on_read(k, pfn) && cached(k) != Some(pfn) {
        return Ok(());
    }
    // Another thread mapped the swap-cache folio while this one waited on the lru lock.
    if pte_changed(k, mm, v, idx, orig) {
        return Ok(());
    }
    let m = &mut k.mms[mm as usize];
    m.vmas[v].ptes[idx] = Pte::present(pfn, true, write);
    m.anon_rss += 1;
    m.swap_ents -= 1;
    k.page_add_rmap(pfn);
    // swap_free() of the PTE's reference leaves the slot to the swap cache's (its
    // SWAP_HAS_CACHE), so nothing is freed until folio_free_swap().
    if should_try_to_free_swap(k, pfn, write) {
        folio_free_swap(k, pfn);
    }
    Ok(())
}

/// Models should_try_to_free_swap() (Linux 6.1) for a swap-cache folio just mapped by
/// do_swap_page(): free its slot when mem_cgroup_swap_full() (free swap below half, or
/// the folio's memcg or an ancestor at half its memory.swap.max), or on a write fault when the fault holds the only reference besides the swap
/// cache's (folio_ref_count() == 2: not isolated by reclaim, in no per-CPU batch). No
/// mlock or VM_LOCKED in the model.
fn should_try_to_free_swap(k: &Kernel, pfn: Pfn, write: bool) -> bool {
    let f = k.folios[pfn as usize];
    // folio_free_swap() refuses a folio under writeback (an SSD's write in flight).
    if !f.test(pg::SWAPCACHE) || f.test(pg::WRITEBACK) {
        return false;
    }
    if k.swap_full(f.memcg) {
        return true;
    }
    write && !f.test(pg::HELD | pg::IN_LRU_ADD) && f.pins() == 0
}

/// Models do_swap_page()'s skip-swapcache path (Linux 6.1, taken for a SWP_SYNCHRONOUS_IO
/// device when __swap_count(entry) == 1): a new folio is allocated and charged
/// (vma_alloc_folio, mem_cgroup_swapin_charge_folio), the shadow left in the swap
/// cache's slot (get_shadow_from_swap_cache) goes to workingset_refault, the page is read
/// synchronously (swap_readpage), and once the PTE is installed swap_free() frees the
/// slot, with its shadow: the folio holds no slot and is never in the swap cache, so
/// reclaiming it again takes add_to_swap and a new write. No swap-cache insertion or
/// deletion is charged. Departs: the model installs the PTE before folio_add_lru (the
/// kernel adds the folio to the LRU before the read), so a second thread faulting on
/// the same entry backs out either after its allocation or after the refault check,
/// before its folio reaches the LRU.
fn swapin_skip_swapcache(
    k: &mut Kernel,
    p: &mut dyn Policy,
    mm: u32,
    v: usize,
    idx: usize,
    orig: Pte,
    write: bool,
) -> Result<(), Killed> {
    let memcg = k.mms[mm as usize].memcg;
    let slot = orig.swap_slot().expect("a swap PTE");
    let new = alloc_folio(k, p, memcg)?;
    // The swap-in charge, the swap charge's release, the shadow's lookup and the swap
    // map's update, beyond what the model charges apart.
    k.spend(k.costs.swap_in_rest, Cat::Other);
    // Another thread swapped the page in (and freed the slot) while this one allocated.
    if pte_changed(k, mm, v, idx, orig) {
        k.free_folio(new);
        return Ok(());
    }
    let sw = k.swap.as_ref().unwrap();
    debug_assert!(
        sw.slots[slot as usize].as_cached().is_none(),
        "an entry of a synchronous device is never read into the swap cache"
    );
    let shadow = sw.slots[slot as usize].shadow();
    let vpn = k.mms[mm as usize].vmas[v].start + idx as u64;
    let f = &mut k.folios[new as usize];
    f.set(pg::ANON | pg::SWAPBACKED);
    f.owner = mm;
    f.index = vpn as u32;
    if let Some(shadow) = shadow {
        p.refault(k, new, shadow, true);
    }
    let start = k.cur.clock;
    let ready = swap_readpage(k, memcg, slot, new);
    // The synchronous swap_readpage() waits for a bio (zram's read of a written-back
    // page from its backing device).
    k.sleep_through(ready);
    k.count(Vm::Pgmajfault, memcg, 1);
    k.workingset_read_stall(new, start, k.cur.clock);
    // The refault check may have waited for an lru lock: the pte_same() check.
    if pte_changed(k, mm, v, idx, orig) {
        k.free_folio(new);
        return Ok(());
    }
    let m = &mut k.mms[mm as usize];
    m.vmas[v].ptes[idx] = Pte::present(new, true, write);
    m.anon_rss += 1;
    m.swap_ents -= 1;
    k.page_add_rmap(new);
    swap_free(k, slot);
    batch::folio_add_lru(k, p, new, true);
    Ok(())
}

/// Models swap_readpage() (6.1) of one page into folio `pfn` from zswap (frontswap_load)
/// or else the device: zram and brd complete in the caller's context (zram's
/// decompression, brd's copy) through the device's ->rw_page (bdev_read_page), which
/// skips submit_bio(): pswpin (global only), no pgpgin; an SSD takes an asynchronous bio
/// (`swap_io::read_folio`). Returns when the page's data is in the folio. The caller
/// counts the major fault ("had to read the page from swap area").
fn swap_readpage(k: &mut Kernel, memcg: MemcgId, slot: u32, pfn: Pfn) -> u64 {
    // frontswap_load() first: a page zswap holds is not read from the device (no pswpin).
    if crate::kernel::zswap::load(k, slot, memcg) {
        return k.cur.clock;
    }
    // Per memcg too: the model's attribution, shown outside memory.stat.
    k.count(Vm::Pswpin, memcg, 1);
    match k.swap.as_ref().unwrap().device {
        SwapDevice::Zram => return crate::kernel::zram::read_page(k, slot),
        SwapDevice::Ramdisk => k.spend(k.costs.page_copy, Cat::Io),
        SwapDevice::Ssd => return crate::kernel::swap_io::read_folio(k, pfn, slot),
    }
    k.cur.clock
}

/// Models __read_swap_cache_async()'s insertion of new folio `pfn` into the swap cache
/// for `slot`, the entry of page `vpn` of process `mm` (add_to_swap_cache, the refault
/// check of its shadow, folio_add_lru), and swap_readpage() into it. A synchronous read
/// that the refault check found a workingset folio counts as a memory stall; an SSD's
/// read is waited for by the fault that needs it (`swap_io::wait_on_read`).
pub fn swap_read_folio(k: &mut Kernel, p: &mut dyn Policy, mm: u32, vpn: u64, slot: u32, pfn: Pfn) {
    let memcg = k.mms[mm as usize].memcg;
    let start = k.cur.clock;
    let ready = swap_readpage(k, memcg, slot, pfn);
    let read_end = k.cur.clock;
    let f = &mut k.folios[pfn as usize];
    f.set(pg::ANON | pg::SWAPBACKED | pg::SWAPCACHE);
    f.owner = mm;
    f.index = vpn as u32;
    k.folio_swap[pfn as usize] = slot;
    let sw = k.swap.as_mut().unwrap();
    let shadow = sw.slots[slot as usize].shadow();
    sw.slots[slot as usize] = SwapSlot::cached(pfn);
    k.spend(k.costs.swap_slot, Cat::Other);
    if let Some(shadow) = shadow {
        p.refault(k, pfn, shadow, true);
    }
    if ready <= read_end {
        k.workingset_read_stall(pfn, start, read_end);
    }
    batch::folio_add_lru(k, p, pfn, true);
    // A read not on an SSD's queue that completes later (zram's read of a written-back
    // page): the faulting task waits for it here, as do_swap_page()'s
    // folio_lock_or_retry() would (`swap_io::wait_on_read` knows only the SSD's reads).
    if ready > read_end && !crate::kernel::swap_io::has_ssd(k) {
        k.sleep_through(ready);
        k.workingset_read_stall(pfn, start, k.cur.clock);
    }
}

/// Models folio_free_swap(): drops the swap-cache copy; the folio is now the only copy.
/// The callers have checked what the kernel checks here: not under writeback (a swap
/// write completes at once in the model) and not folio_swapped() (no PTE still holds
/// the entry: the folio is mapped, or its process has exited).
pub fn folio_free_swap(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(k.folios[pfn as usize].test(pg::SWAPCACHE));
    debug_assert!(!k.folios[pfn as usize].test(pg::WRITEBACK));
    let slot = k.folio_swap[pfn as usize];
    k.folio_swap[pfn as usize] = NIL;
    let f = &mut k.folios[pfn as usize];
    f.clear(pg::SWAPCACHE);
    f.set(pg::DIRTY);
    // __delete_from_swap_cache(): NR_SWAPCACHE.
    k.folio_stat_updated(pfn);
    // The folio is out of the swap cache before the slot's return may wait for si->lock.
    swap_free(k, slot);
    k.spend(k.costs.swap_slot, Cat::Other);
}

/// Models swap_free() of an entry's last reference when no swap-cache folio holds it
/// (__swap_entry_free, then free_swap_slot): the slot's data and its shadow go, the
/// slot waits in this CPU's return cache for si->lock (`Kernel::put_swap_slot`), and the
/// memcg's swap charge drops. The swap-map update itself takes the cluster lock on
/// these non-rotational devices (lock_cluster_or_swap_info), which the model does not
/// have.
fn swap_free(k: &mut Kernel, slot: u32) {
    let memcg = k.put_swap_slot(slot);
    k.memcgs.swap_charge(memcg, -1);
    // mem_cgroup_uncharge_swap(): MEMCG_SWAP.
    k.memcg_rstat_updated(memcg, 1);
}

/// What a page-cache lookup is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    /// read(2): filemap_get_pages.
    Read,
    /// A page fault on a file mapping: filemap_fault.
    Fault,
    /// A whole-page write(2): write_begin, which reads nothing in.
    Write,
}

/// Page-cache lookup, reading the page in on a miss (filemap_get_pages /
/// filemap_fault; for a whole-page write, grab_cache_page_write_begin, which does not
/// read): allocate, read from the device (or zero-fill a hole), insert, check the shadow
/// for a refault, and queue for the LRU.
fn find_or_read_page(
    k: &mut Kernel,
    p: &mut dyn Policy,
    memcg: MemcgId,
    file: u32,
    index: u64,
    via: Via,
) -> Result<Pfn, Killed> {
    k.spend(k.costs.xarray, Cat::Other);
    // The lookup reads the mapping's xarray, which reclaim and other readers change.
    k.sync();
    let slot = k.files[file as usize].slots[index as usize];
    if let Some(pfn) = slot.as_page() {
        return Ok(pfn);
    }
    let pfn = alloc_folio(k, p, memcg)?;
    // filemap_add_folio(), under the mapping's i_pages lock: another task may have read
    // the page in while this one allocated (-EEXIST), and the lookup finds its folio.
    let lock = crate::sim::lock::LockRef::IPages(file);
    k.spin_lock(lock, crate::sim::lock::LockSite::FilemapAdd);
    let slot = k.files[file as usize].slots[index as usize];
    if let Some(cached) = slot.as_page() {
        k.spin_unlock(lock);
        k.free_folio(pfn);
        return Ok(cached);
    }
    let f = &mut k.folios[pfn as usize];
    f.owner = file;
    f.index = index as u32;
    let fl = &mut k.files[file as usize];
    fl.slots[index as usize] = Slot::page(pfn);
    fl.nr_cached += 1;
    // __filemap_add_folio(): NR_FILE_PAGES (the folio is charged to `memcg` already).
    k.folio_stat_updated(pfn);
    k.spend(k.costs.xarray, Cat::Other);
    k.spin_unlock(lock);
    // The read into the new folio (a hole of a sparse file, never written back, is
    // zero-filled); a whole-page write overwrites it instead.
    let read_start = k.cur.clock;
    match via {
        Via::Write => {}
        _ if k.files[file as usize].is_hole(index) => k.spend(k.costs.page_zero, Cat::Io),
        // ext4_mpage_readpages' one-page bio to brd, then brd's copy. The model has no
        // readahead: every miss is a one-page read, as under POSIX_FADV_RANDOM or
        // read_ahead_kb = 0, where the kernel would batch a sequential reader's pages.
        _ => {
            k.spend(k.costs.file_read_miss, Cat::Io);
            k.spend(k.costs.page_copy, Cat::Io);
            k.vm.add(Vm::Pgpgin, 4);
        }
    }
    let in_fault = via == Via::Fault;
    if in_fault {
        k.count(Vm::Pgmajfault, memcg, 1);
    }
    let read_end = k.cur.clock;
    if let Some(shadow) = slot.as_shadow() {
        p.refault(k, pfn, shadow, in_fault);
        // filemap_read_folio() of a workingset folio (a hole's zero-fill too: the
        // model's reads of sparse files stand for a device read).
        if via != Via::Write {
            k.workingset_read_stall(pfn, read_start, read_end);
        }
    }
    batch::folio_add_lru(k, p, pfn, in_fault);
    Ok(pfn)
}

/// What a random lookup pays in a page cache of GiBs (`lookup_cold`):
/// filemap_get_read_batch()'s xas_load through cold xarray nodes and folio_try_get on a
/// cold struct page, and copy_page_to_iter() from cold data (6.1; measured on 6.18).
/// `cold`: the read or write does not follow its task's last one in the file; a
/// sequential stream finds those lines warm. Nothing at 0, so that `lookup_cold = 0`
/// runs the model without it.
fn lookup_cold(k: &mut Kernel, cold: bool) {
    if cold && k.costs.lookup_cold > 0 {
        k.spend(k.costs.lookup_cold, Cat::Other);
    }
}

/// Models filemap_read() of one 4 KiB page: find or read it, mark it accessed, copy.
/// `cold`: see `lookup_cold`.
pub fn filemap_read(
    k: &mut Kernel,
    p: &mut dyn Policy,
    memcg: MemcgId,
    file: u32,
    index: u64,
    cold: bool,
) -> Result<(), Killed> {
    k.spend(k.costs.read_syscall, Cat::Other);
    lookup_cold(k, cold);
    let pfn = find_or_read_page(k, p, memcg, file, index, Via::Read)?;
    p.mark_accessed(k, pfn);
    k.spend(k.costs.page_copy, Cat::Io);
    Ok(())
}

/// Models generic_perform_write() of one whole 4 KiB page (a buffered write(2) on ext4):
/// write_begin finds or creates the page-cache folio, the data is copied in, write_end
/// dirties it (folio_mark_dirty) and balance_dirty_pages_ratelimited() may kick
/// background writeback. As in the kernel, a buffered write does not mark the folio
/// accessed. write_begin's folio_wait_stable() does not wait for a folio under
/// writeback here: it waits only on devices that need stable pages, which brd does not.
/// `cold` as for filemap_read.
pub fn generic_perform_write(
    k: &mut Kernel,
    p: &mut dyn Policy,
    memcg: MemcgId,
    file: u32,
    index: u64,
    cold: bool,
) -> Result<(), Killed> {
    // The syscall entry costs what a read's does.
    k.spend(k.costs.read_syscall, Cat::Other);
    lookup_cold(k, cold);
    let pfn = find_or_read_page(k, p, memcg, file, index, Via::Write)?;
    k.spend(k.costs.page_copy, Cat::Io);
    // write_end dirties the folio at this time: its flags and the dirty counts are
    // shared with reclaim and the flusher.
    k.sync();
    dirty_shared_page(k, pfn);
    Ok(())
}

/// Models munmap of a whole VMA (zap_pte_range): young file PTEs mark their folio
/// accessed, dirty PTEs dirty their folio, anon folios and swap entries are freed.
pub fn zap_vma(k: &mut Kernel, p: &mut dyn Policy, mm: u32, v: usize) {
    let n = k.mms[mm as usize].vmas[v].ptes.len();
    let anon = k.mms[mm as usize].vmas[v].kind == VmaKind::Anon;
    for idx in 0..n {
        let pte = std::mem::take(&mut k.mms[mm as usize].vmas[v].ptes[idx]);
        if pte.is_none() || pte.is_zero() {
            continue;
        }
        k.spend(k.costs.unmap, Cat::Other);
        if let Some(slot) = pte.swap_slot() {
            k.mms[mm as usize].swap_ents -= 1;
            free_swap_entry(k, p, slot);
            continue;
        }
        let pfn = pte.pfn().expect("present PTE");
        k.page_remove_rmap(pfn);
        if pte.dirty() {
            crate::kernel::writeback::folio_mark_dirty(k, pfn);
        }
        if anon {
            k.mms[mm as usize].anon_rss -= 1;
            if k.folios[pfn as usize].test(pg::SWAPCACHE) {
                let slot = k.folio_swap[pfn as usize];
                free_swap_entry(k, p, slot);
            } else {
                release_folio(k, p, pfn);
            }
        } else if pte.young() {
            p.mark_accessed(k, pfn);
        }
    }
}

/// swap_free() of a PTE's swap entry: frees the slot and its swap-cache folio, if any.
fn free_swap_entry(k: &mut Kernel, p: &mut dyn Policy, slot: u32) {
    let cached = k.swap.as_ref().unwrap().slots[slot as usize].as_cached();
    // A folio under an SSD's read or write (locked, or PG_writeback) stays in the swap
    // cache with its slot (free_swap_and_cache's __try_to_reclaim_swap fails); reclaim
    // frees both once the I/O is done (`vmscan::unreferenced_swapcache`).
    if cached.is_some_and(|pfn| swapcache_busy(k, pfn)) {
        return;
    }
    // Out of the swap cache before the slot's return may wait for si->lock.
    if let Some(pfn) = cached {
        k.folio_swap[pfn as usize] = NIL;
        k.folios[pfn as usize].clear(pg::SWAPCACHE);
        // __delete_from_swap_cache(): NR_SWAPCACHE.
        k.folio_stat_updated(pfn);
    }
    swap_free(k, slot);
    if let Some(pfn) = cached.filter(|&pfn| !k.folios[pfn as usize].mapped()) {
        release_folio(k, p, pfn);
    }
}

/// A swap-cache folio whose SSD read or write is in flight.
pub fn swapcache_busy(k: &Kernel, pfn: Pfn) -> bool {
    k.folios[pfn as usize].test(pg::WRITEBACK)
        || crate::kernel::swap_io::read_pending(k, pfn).is_some()
}

/// The mapping's reference to an anon folio is gone (folios_put): off its list and back
/// to the allocator, unless another task holds it (reclaim isolated it, or a batch waits
/// to move it). Then that holder has the last reference and frees it
/// (`vmscan::orphaned`).
fn release_folio(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn) {
    if !k.folios[pfn as usize].test(pg::LRU) {
        return;
    }
    let lv = k.folio_lruvec(pfn);
    k.lock_site = crate::sim::lock::LockSite::Free;
    k.lock_lruvec(lv);
    // It may have been isolated while this task waited for the lock.
    let f: Folio = k.folios[pfn as usize];
    let ours = f.test(pg::LRU) && f.pins() == 0;
    if ours {
        p.del_folio(k, pfn);
        k.folios[pfn as usize].clear(pg::LRU);
    }
    k.unlock();
    if ours {
        k.free_folio(pfn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// try_charge_memcg()'s atomics at a limit: a memcg with room for a batch charges
    /// from the stock and touches no counter; one within a batch of its max adds and
    /// takes back the batch on its own counter, then charges the page there and on the
    /// root's; the CPU that charges next finds the root's line on the other core.
    #[test]
    fn charges_at_a_limit_update_every_level_and_bounce_the_root() {
        let mut k = Kernel::new(&crate::kernel::config::Setup::small(1 << 16, 2));
        let a = k.memcgs.add("/a", ROOT);
        let b = k.memcgs.add("/b", ROOT);
        k.memcgs.cgs[a as usize].max = 1000;
        k.memcgs.cgs[b as usize].max = 1000;
        let rmws = |k: &Kernel, m: MemcgId| k.memcgs.cgs[m as usize].counter.acquisitions;
        assert!(!charge_counters(&mut k, a));
        assert_eq!((rmws(&k, a), rmws(&k, ROOT)), (0, 0), "room for a batch");
        k.memcgs.cgs[a as usize].usage = 1000 - MEMCG_CHARGE_BATCH + 1;
        k.memcgs.cgs[b as usize].usage = 1000 - MEMCG_CHARGE_BATCH + 1;
        assert!(charge_counters(&mut k, a));
        assert_eq!((rmws(&k, a), rmws(&k, ROOT)), (3, 1));
        let t = k.cur.clock;
        k.cur.cpu = 1;
        assert!(charge_counters(&mut k, b));
        assert_eq!((rmws(&k, b), rmws(&k, ROOT)), (3, 2));
        let root = &k.memcgs.cgs[ROOT as usize].counter;
        let site = root.sites[LockSite::TryCharge as usize];
        let bounce = k.costs.lock_bounce.min(k.costs.lock_bounce_remote);
        assert!(
            site.hold_ns >= 2 * k.costs.lru_flag_atomic + bounce,
            "the second charge moved the root's line: {site:?}"
        );
        assert!(k.cur.clock > t);
    }
}
