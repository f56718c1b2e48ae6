//! Per-CPU folio batches (mm/swap.c, struct cpu_fbatches): folios are queued per CPU and
//! moved onto the LRU lists in batches under one lock hold. A folio in the lru_add batch is
//! not on any list yet (no PG_lru), so reclaim cannot see it; the move batches hold a
//! reference, and a folio isolated meanwhile is skipped at flush time. How it is skipped
//! depends on the lock protocol (`lru_lock`): 5.11+ test-and-clears PG_lru before taking
//! the lruvec lock (the isolation token; docs/model/batches-locks.md), so the move
//! functions must not test PG_lru again; <= 5.10 tested PageLRU under the node lock and
//! left it set.

use crate::kernel::config::LruLockKind;
use crate::kernel::debug::vm_bug_on;
use crate::kernel::folio::{pg, Pfn};
use crate::kernel::lru::Policy;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::Kernel;
use crate::sim::lock::LockSite;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchKind {
    LruAdd,
    MoveTail,
    Activate,
}

fn batch(k: &mut Kernel, cpu: usize, kind: BatchKind) -> &mut Vec<Pfn> {
    let b = &mut k.batches[cpu];
    match kind {
        BatchKind::LruAdd => &mut b.lru_add,
        BatchKind::MoveTail => &mut b.move_tail,
        BatchKind::Activate => &mut b.activate,
    }
}

/// Queues a folio; flushes when the batch is full (folio_batch_add() returning 0).
fn add(k: &mut Kernel, p: &mut dyn Policy, kind: BatchKind, pfn: Pfn) {
    let cpu = k.cur.cpu as usize;
    k.spend(k.costs.batch_add, Cat::ListOps);
    let cap = k.cfg.pagevec_size as usize;
    let b = batch(k, cpu, kind);
    b.push(pfn);
    if b.len() >= cap {
        flush(k, p, cpu, kind);
    }
}

/// Models folio_add_lru(): a new folio goes to the CPU's lru_add batch. Under MGLRU a
/// folio added in a page fault gets PG_active, so it lands in the youngest generation.
pub fn folio_add_lru(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn, in_fault: bool) {
    let f = &mut k.folios[pfn as usize];
    // VM_BUG_ON_FOLIO(folio_test_active(folio) && folio_test_unevictable(folio), folio)
    // and VM_BUG_ON_FOLIO(folio_test_lru(folio), folio) in folio_add_lru(); nor is it
    // queued already (model-only: IN_LRU_ADD).
    vm_bug_on!(
        f.test(pg::ACTIVE) && f.test(pg::UNEVICTABLE),
        "folio {pfn}: active and unevictable"
    );
    vm_bug_on!(
        f.test(pg::LRU | pg::IN_LRU_ADD),
        "folio {pfn} added to the LRU twice"
    );
    if k.lru_gen_enabled && in_fault && !f.test(pg::UNEVICTABLE) {
        f.set(pg::ACTIVE);
    }
    f.set(pg::IN_LRU_ADD);
    f.clear(pg::HELD);
    add(k, p, BatchKind::LruAdd, pfn);
}

/// Models folio_activate(): queue an inactive folio on the LRU for activation.
pub fn folio_activate(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn) {
    let f = &mut k.folios[pfn as usize];
    if f.test(pg::LRU) && !f.test(pg::ACTIVE) && !f.test(pg::UNEVICTABLE) {
        f.pin();
        add(k, p, BatchKind::Activate, pfn);
    }
}

/// Models __lru_cache_activate_folio(): a folio still in this CPU's lru_add batch is
/// activated in place; one in another CPU's batch is not found.
pub fn lru_cache_activate_folio(k: &mut Kernel, pfn: Pfn) {
    let cpu = k.cur.cpu as usize;
    if k.batches[cpu].lru_add.iter().rev().any(|&x| x == pfn) {
        k.folios[pfn as usize].set(pg::ACTIVE);
    }
}

/// Models folio_rotate_reclaimable(): writeback finished on a folio reclaim wanted, so
/// it moves to the tail of its inactive list to be reclaimed next.
pub fn folio_rotate_reclaimable(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn) {
    let f = &mut k.folios[pfn as usize];
    if !f.test(pg::LRU) || f.test(pg::DIRTY) || f.test(pg::UNEVICTABLE) {
        return;
    }
    f.pin();
    add(k, p, BatchKind::MoveTail, pfn);
}

/// Models folio_batch_move_lru(): moves every folio of a batch under its lruvec's
/// lock, relocking only when consecutive folios belong to different lock domains.
pub fn flush(k: &mut Kernel, p: &mut dyn Policy, cpu: usize, kind: BatchKind) {
    if batch(k, cpu, kind).is_empty() {
        return;
    }
    let saved_cpu = k.cur.cpu;
    // Draining another CPU's batch (lru_add_drain_all) runs on that CPU's behalf.
    k.cur.cpu = cpu as u32;
    let clear_first = k.lru_clear_before_lock();
    let site = match kind {
        BatchKind::LruAdd => LockSite::LruAdd,
        BatchKind::MoveTail => LockSite::MoveTail,
        BatchKind::Activate => LockSite::Activate,
    };
    let is_move = kind != BatchKind::LruAdd;
    // Folios leave the batch one at a time, so the rest stay in it while this flush
    // waits for a lock (and a drain from another CPU takes only what is left).
    while let Some(pfn) = take_first(k, cpu, kind) {
        if is_move {
            k.folios[pfn as usize].unpin();
            if clear_first {
                // 5.11+: folio_test_clear_lru() outside the lock, an atomic on the folio;
                // losing it means someone isolated the folio.
                k.spend(k.costs.lru_flag_atomic, Cat::ListOps);
                if !k.folios[pfn as usize].test_clear(pg::LRU) {
                    continue;
                }
            }
        } else {
            k.folios[pfn as usize].set(pg::HELD);
        }
        let lv = k.folio_lruvec(pfn);
        if !k.holds_lock_of(lv) {
            k.lock_site = site;
        }
        k.batches[cpu].in_hand.push(pfn);
        k.relock_lruvec(lv);
        k.batches[cpu].in_hand.retain(|&f| f != pfn);
        k.spend(k.costs.list_op, Cat::ListOps);
        // <= 5.10 (pagevec_lru_move_fn under pgdat->lru_lock): the move functions
        // checked PageLRU themselves, under the node lock, with a plain load.
        if is_move && !clear_first && !k.folios[pfn as usize].test(pg::LRU) {
            continue;
        }
        // v16 kept that check after clearing PageLRU itself: it always fails, the move
        // is dropped, and PageLRU is set back below.
        let v16_drops = is_move && k.cfg.lru_lock == LruLockKind::LruvecV16;
        match kind {
            _ if v16_drops => {}
            BatchKind::LruAdd => lru_add(k, p, pfn),
            BatchKind::MoveTail => lru_move_tail(k, p, pfn),
            BatchKind::Activate => lru_activate(k, p, pfn),
        }
        if !is_move || clear_first {
            // folio_set_lru() under the lock: lru_add in both protocols, and the move
            // batches in 5.11+ handing the isolation token back.
            k.spend(k.costs.lru_flag_atomic, Cat::ListOps);
            k.folios[pfn as usize].set(pg::LRU);
        }
    }
    k.unlock_if_held();
    k.cur.cpu = saved_cpu;
}

/// The batch's oldest folio, taken out of it.
fn take_first(k: &mut Kernel, cpu: usize, kind: BatchKind) -> Option<Pfn> {
    let b = batch(k, cpu, kind);
    (!b.is_empty()).then(|| b.remove(0))
}

/// lru_add(): the folio joins its list at the head.
fn lru_add(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn) {
    k.folios[pfn as usize].clear(pg::IN_LRU_ADD);
    p.add_folio(k, pfn, false);
    crate::kernel::lru::plugin::note_added(k, pfn);
}

/// Models lru_move_tail_fn(): deactivate and move to the tail of the inactive list,
/// counting `pgrotated`. The caller has cleared PG_lru (5.11+), so this must not test it
/// (the v16 bug Hugh Dickins found: pgrotated stayed 0).
pub fn lru_move_tail(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn) {
    if k.folios[pfn as usize].test(pg::UNEVICTABLE) {
        return;
    }
    p.del_folio(k, pfn);
    k.folios[pfn as usize].clear(pg::ACTIVE);
    p.add_folio(k, pfn, true);
    let memcg = k.folios[pfn as usize].memcg;
    k.count(Vm::Pgrotated, memcg, 1);
}

/// Models lru_activate(): to the head of the active list (MGLRU: the youngest
/// generation). Like lru_move_tail, it relies on the caller for PG_lru.
pub fn lru_activate(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn) {
    let f = k.folios[pfn as usize];
    if f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) {
        return;
    }
    p.del_folio(k, pfn);
    k.folios[pfn as usize].set(pg::ACTIVE);
    p.add_folio(k, pfn, false);
    k.count(Vm::Pgactivate, f.memcg, 1);
}

/// Models lru_add_drain_cpu(): flush a CPU's batches in the kernel's order.
pub fn drain_cpu(k: &mut Kernel, p: &mut dyn Policy, cpu: usize) {
    flush(k, p, cpu, BatchKind::LruAdd);
    flush(k, p, cpu, BatchKind::MoveTail);
    flush(k, p, cpu, BatchKind::Activate);
}

/// Models lru_add_drain(): the running CPU's batches.
pub fn lru_add_drain(k: &mut Kernel, p: &mut dyn Policy) {
    let cpu = k.cur.cpu as usize;
    drain_cpu(k, p, cpu);
}

/// Models lru_add_drain_all(): every CPU's batches.
pub fn lru_add_drain_all(k: &mut Kernel, p: &mut dyn Policy) {
    for cpu in 0..k.batches.len() {
        drain_cpu(k, p, cpu);
    }
}
