//! The invariant checker, the model's CONFIG_DEBUG_VM: every frame is in exactly one
//! place, list sizes match their counters, memcg charges match their pages, and page
//! tables, page cache, swap cache and rmap agree. Runs between two tasks' turns (at sync
//! points), where a frame may also be held by a task (isolated, just allocated).

use crate::kernel::folio::{pg, Pfn, NIL};
use crate::kernel::lru::Policy;
use crate::kernel::mm::VmaKind;
use crate::kernel::Kernel;

/// The invariants when no task is inside a step: no frame is held.
pub fn check(k: &Kernel, p: &dyn Policy) -> Result<(), String> {
    check_with(k, p, false)
}

/// The invariants at a sync point, where tasks inside their steps may hold frames.
pub fn check_running(k: &Kernel, p: &dyn Policy) -> Result<(), String> {
    check_with(k, p, true)
}

fn check_with(k: &Kernel, p: &dyn Policy, held_ok: bool) -> Result<(), String> {
    let mut place = Places(vec![0u8; k.folios.len()]);
    place_free(k, &mut place)?;
    place_lru(k, p, &mut place)?;
    let pins = place_batches(k, &mut place)?;
    if let Some(z) = k.swap.as_ref().and_then(|s| s.zswap.as_ref()) {
        // zswap's zpool pages: allocated, held by the pool, charged to no memcg.
        for pfn in z.frames() {
            place.put(pfn, 4)?;
        }
    }
    if let Some(z) = k.swap.as_ref().and_then(|s| s.zram.as_ref()) {
        // zram's zsmalloc pages: allocated, held by the pool, charged to no memcg.
        for &pfn in z.frames() {
            place.put(pfn, 4)?;
        }
        z.check()?;
    }
    let charged = check_frames(k, &place, &pins, held_ok)?;
    check_charges(k, &charged)?;
    check_mappings(k)?;
    check_writeback(k)
}

/// Where each frame was found: 0 = nowhere, 1 = free list, 2 = LRU, 3 = lru_add batch.
struct Places(Vec<u8>);

impl Places {
    fn put(&mut self, pfn: Pfn, what: u8) -> Result<(), String> {
        let slot = &mut self.0[pfn as usize];
        if *slot != 0 {
            return Err(format!("pfn {pfn} is in two places ({} and {what})", *slot));
        }
        *slot = what;
        Ok(())
    }
}

/// The free lists and per-CPU lists hold free frames of their node, as many as
/// NR_FREE_PAGES says.
fn place_free(k: &Kernel, place: &mut Places) -> Result<(), String> {
    for (i, node) in k.nodes.iter().enumerate() {
        let free = node.free_list.to_vec(&k.links);
        if free.len() as u64 != node.zone.free || node.free_list.len as usize != free.len() {
            return Err(format!(
                "node {i}: free list has {} frames, NR_FREE_PAGES {}",
                free.len(),
                node.zone.free
            ));
        }
        for pfn in free {
            place.put(pfn, 1)?;
            if k.folios[pfn as usize].flags != 0 || !(node.start_pfn..node.end_pfn).contains(&pfn) {
                return Err(format!(
                    "free pfn {pfn} has flags {:#x} or is outside its node",
                    k.folios[pfn as usize].flags
                ));
            }
        }
    }
    for (i, pcp) in k.pcp.iter().enumerate() {
        for &pfn in &pcp.list {
            place.put(pfn, 1)?;
            if k.folios[pfn as usize].flags != 0 || k.node_of(pfn) != i % k.nodes.len() {
                return Err(format!(
                    "pfn {pfn} on per-CPU list {i} is not a free page of its node"
                ));
            }
        }
    }
    Ok(())
}

/// Every folio on an lruvec's lists has PG_lru (or is in a flush's hands) and belongs
/// to that lruvec.
fn place_lru(k: &Kernel, p: &dyn Policy, place: &mut Places) -> Result<(), String> {
    for lv in 0..k.lruvecs.len() {
        let mut err = None;
        p.check(k, lv, &mut |pfn, list| {
            if err.is_some() {
                return Ok(());
            }
            let f = &k.folios[pfn as usize];
            // 5.11+: a batch flush test-and-clears PG_lru before it takes the lock, so a
            // folio may sit on its list without it while that flush waits for the lock.
            let in_hand = || k.batches.iter().any(|b| b.in_hand.contains(&pfn));
            if !f.test(pg::LRU) && !in_hand() {
                return Err(format!("pfn {pfn} on {list} without PG_lru"));
            }
            if k.folio_lruvec(pfn) != lv {
                return Err(format!(
                    "pfn {pfn} on lruvec {lv} but belongs to lruvec {}",
                    k.folio_lruvec(pfn)
                ));
            }
            if let Err(e) = place.put(pfn, 2) {
                err = Some(e);
            }
            Ok(())
        })?;
        if let Some(e) = err {
            return Err(e);
        }
    }
    Ok(())
}

/// lru_add batches hold marked folios; gives the pins the other batches hold per frame.
fn place_batches(k: &Kernel, place: &mut Places) -> Result<Vec<u32>, String> {
    let mut pins = vec![0u32; k.folios.len()];
    for (cpu, b) in k.batches.iter().enumerate() {
        for &pfn in &b.lru_add {
            place.put(pfn, 3)?;
            if !k.folios[pfn as usize].test(pg::IN_LRU_ADD) {
                return Err(format!(
                    "pfn {pfn} in cpu {cpu}'s lru_add batch without the mark"
                ));
            }
        }
        for &pfn in b.activate.iter().chain(&b.move_tail) {
            pins[pfn as usize] += 1;
        }
    }
    Ok(pins)
}

/// Each frame is where its state says (free, on an LRU, in a batch, or held by a
/// reclaimer mid-step when `held_ok`), with as many pins as batches hold. Gives the
/// allocated frames charged to each memcg.
fn check_frames(
    k: &Kernel,
    place: &Places,
    pins: &[u32],
    held_ok: bool,
) -> Result<Vec<u64>, String> {
    let mut charged = vec![0u64; k.memcgs.cgs.len()];
    for (pfn, f) in k.folios.iter().enumerate() {
        let allocated = f.test(pg::ALLOCATED);
        match (allocated, place.0[pfn]) {
            (false, 1) | (true, 2) | (true, 3) if !f.test(pg::HELD) => {}
            (true, 0) if held_ok && f.test(pg::HELD) => {}
            (true, 4) if f.test(pg::HELD) => {}
            (true, 0) => {
                return Err(format!(
                    "allocated pfn {pfn} (flags {:#x}) is on no list and in no batch",
                    f.flags
                ))
            }
            (a, w) => return Err(format!("pfn {pfn} allocated={a} found in place {w}")),
        }
        if f.pins() != pins[pfn] {
            return Err(format!(
                "pfn {pfn} has {} batch pins, batches hold {}",
                f.pins(),
                pins[pfn]
            ));
        }
        if f.test(pg::LRU) && f.test(pg::IN_LRU_ADD) {
            return Err(format!("pfn {pfn} both on the LRU and in an lru_add batch"));
        }
        if allocated && place.0[pfn] != 4 {
            charged[f.memcg as usize] += 1;
        }
    }
    Ok(charged)
}

/// Each memcg's usage is the frames charged in its subtree, plus its precharges, plus
/// the pages its zswap entries' compressed bytes are charged as.
fn check_charges(k: &Kernel, charged: &[u64]) -> Result<(), String> {
    let zswap = k.swap.as_ref().and_then(|s| s.zswap.as_ref());
    let zswapped = |c: usize| zswap.map_or(0, |z| z.memcg_charged[c]);
    for m in (0..k.memcgs.cgs.len()).rev() {
        let usage: u64 = (k.memcgs.iter(m as u16).iter())
            .map(|&c| {
                charged[c as usize] + k.memcgs.cgs[c as usize].precharged + zswapped(c as usize)
            })
            .sum();
        if usage != k.memcgs.cgs[m].usage {
            return Err(format!(
                "memcg {} usage {} but {} pages charged",
                k.memcgs.cgs[m].path, k.memcgs.cgs[m].usage, usage
            ));
        }
    }
    Ok(())
}

/// Dirty and writeback accounting: NR_FILE_DIRTY and NR_WRITEBACK (global, per memcg,
/// per inode) equal the flagged page-cache folios, every folio under writeback has its
/// completion queued, a dirty inode is on a writeback list, and a dirty shared file PTE
/// has a dirty folio (writeback write-protects PTEs before cleaning).
fn check_writeback(k: &Kernel) -> Result<(), String> {
    let nr_memcgs = k.memcgs.cgs.len();
    let (mut dirty, mut writeback) = (vec![0u64; nr_memcgs], vec![0u64; nr_memcgs]);
    let mut inode_dirty = vec![0u64; k.files.len()];
    for f in k.folios.iter().filter(|f| f.test(pg::ALLOCATED)) {
        // NR_WRITEBACK counts anon folios too (an SSD's swap writes); NR_FILE_DIRTY not.
        if f.test(pg::WRITEBACK) {
            writeback[f.memcg as usize] += 1;
        }
        if f.test(pg::ANON) {
            continue;
        }
        if f.test(pg::DIRTY) {
            dirty[f.memcg as usize] += 1;
            inode_dirty[f.owner as usize] += 1;
        }
    }
    let wb = &k.wb;
    if dirty != wb.memcg_dirty || dirty.iter().sum::<u64>() != wb.nr_dirty {
        return Err(format!(
            "NR_FILE_DIRTY {} (per memcg {:?}) but dirty page-cache folios {:?}",
            wb.nr_dirty, wb.memcg_dirty, dirty
        ));
    }
    if writeback != wb.memcg_writeback
        || writeback.iter().sum::<u64>() != wb.nr_writeback
        || wb.in_flight() as u64 != wb.nr_writeback
    {
        return Err(format!(
            "NR_WRITEBACK {} (per memcg {:?}, {} writes in flight) but folios {:?}",
            wb.nr_writeback,
            wb.memcg_writeback,
            wb.in_flight(),
            writeback
        ));
    }
    if let Some(pfn) = wb
        .in_flight_folios()
        .find(|&pfn| !k.folios[pfn as usize].test(pg::WRITEBACK))
    {
        return Err(format!("write of pfn {pfn} in flight without PG_writeback"));
    }
    for (file, &n) in inode_dirty.iter().enumerate() {
        let counted = wb.inodes.get(file).map_or(0, |i| i.nr_dirty);
        if counted != n {
            return Err(format!(
                "file {file} has {n} dirty pages, its inode counts {counted}"
            ));
        }
        if n > 0 && !wb.is_listed(file as u32) {
            return Err(format!(
                "file {file} has dirty pages but is on no writeback list"
            ));
        }
    }
    for (mi, mm) in k.mms.iter().enumerate() {
        for vma in mm.vmas.iter().filter(|v| v.kind != VmaKind::Anon) {
            for (i, pte) in vma.ptes.iter().enumerate() {
                if pte.dirty()
                    && pte
                        .pfn()
                        .is_some_and(|p| !k.folios[p as usize].test(pg::DIRTY))
                {
                    return Err(format!(
                        "mm {mi} vpn {}: dirty file PTE over a clean folio",
                        vma.start + i as u64
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The PTEs mapping each frame, and the swap PTEs naming each swap slot.
struct Mappings {
    mapcount: Vec<u32>,
    swap_refs: Vec<u8>,
}

/// Every PTE maps an allocated folio whose rmap names it (or a used swap slot); counts
/// the PTEs mapping each frame and naming each slot.
fn count_mappings(k: &Kernel) -> Result<Mappings, String> {
    let mut mapcount = vec![0u32; k.folios.len()];
    let mut swap_refs = vec![0u8; k.swap.as_ref().map_or(0, |s| s.slots.len())];
    for (mi, mm) in k.mms.iter().enumerate() {
        for vma in &mm.vmas {
            for (i, pte) in vma.ptes.iter().enumerate() {
                if let Some(slot) = pte.swap_slot() {
                    let sw = k.swap.as_ref().ok_or("swap entry without a swap device")?;
                    if sw.slots[slot as usize].is_free() {
                        return Err(format!("mm {mi} maps free swap slot {slot}"));
                    }
                    let refs = &mut swap_refs[slot as usize];
                    *refs = refs.saturating_add(1);
                    continue;
                }
                let Some(pfn) = pte.pfn() else { continue };
                let f = &k.folios[pfn as usize];
                let ok = match vma.kind {
                    VmaKind::Anon => {
                        f.test(pg::ANON)
                            && f.owner == mi as u32
                            && f.index as u64 == vma.start + i as u64
                    }
                    VmaKind::File { file } => {
                        !f.test(pg::ANON) && f.owner == file && f.index as usize == i
                    }
                };
                if !ok || !f.test(pg::ALLOCATED) {
                    return Err(format!(
                        "mm {mi} vpn {} maps pfn {pfn} whose rmap says owner {} index {}",
                        vma.start + i as u64,
                        f.owner,
                        f.index
                    ));
                }
                mapcount[pfn as usize] += 1;
            }
        }
    }
    Ok(Mappings {
        mapcount,
        swap_refs,
    })
}

/// Mapcounts equal the PTEs that map each frame; page-cache and swap-cache folios sit in
/// their slots, and a folio out of the swap cache holds no slot (a page swapped in
/// around the swap cache, or one whose slot was freed); each file counts the pages it
/// caches.
fn check_mappings(k: &Kernel) -> Result<(), String> {
    let Mappings {
        mapcount,
        swap_refs,
    } = count_mappings(k)?;
    check_swap(k, &swap_refs)?;
    for (pfn, f) in k.folios.iter().enumerate() {
        if f.mapcount as u32 != mapcount[pfn] {
            return Err(format!(
                "pfn {pfn} mapcount {} but {} PTEs map it",
                f.mapcount, mapcount[pfn]
            ));
        }
        // A held frame may be half made or half torn down (its mapping not set yet, or
        // removed before the free).
        if f.test(pg::HELD) {
            continue;
        }
        if f.test(pg::ALLOCATED) && !f.test(pg::ANON) {
            let file = &k.files[f.owner as usize];
            if file.slots[f.index as usize].as_page() != Some(pfn as Pfn) {
                return Err(format!("file pfn {pfn} is not in its page-cache slot"));
            }
        }
        if f.test(pg::ALLOCATED) && !f.test(pg::SWAPCACHE) && k.folio_swap[pfn] != NIL {
            return Err(format!(
                "pfn {pfn} is out of the swap cache but holds slot {}",
                k.folio_swap[pfn]
            ));
        }
        if f.test(pg::SWAPCACHE) {
            let slot = k.folio_swap[pfn];
            let sw = k.swap.as_ref().ok_or("swap cache without a swap device")?;
            if sw.slots[slot as usize].as_cached() != Some(pfn as Pfn) {
                return Err(format!(
                    "swap-cache pfn {pfn} (flags {:#x}) is not in slot {slot} ({:?})",
                    f.flags, sw.slots[slot as usize]
                ));
            }
        }
    }
    for (fi, file) in k.files.iter().enumerate() {
        let cached = file.slots.iter().filter(|s| s.as_page().is_some()).count() as u64;
        if cached != file.nr_cached {
            return Err(format!(
                "file {fi} caches {cached} pages but counts {}",
                file.nr_cached
            ));
        }
    }
    Ok(())
}

/// Each swap slot is free, holds data (with a shadow entry or none), or is owned by
/// exactly one swap-cache folio, which names it back (the reverse is in
/// `check_mappings`); and at most one PTE names a slot: the model has no fork or shared
/// anon, so every swap count is 0 or 1 (what lets do_swap_page skip the swap cache).
fn check_swap(k: &Kernel, swap_refs: &[u8]) -> Result<(), String> {
    let Some(sw) = k.swap.as_ref() else {
        return Ok(());
    };
    for (slot, s) in sw.slots.iter().enumerate() {
        if swap_refs[slot] > 1 {
            return Err(format!(
                "swap slot {slot} is named by {} PTEs",
                swap_refs[slot]
            ));
        }
        let Some(pfn) = s.as_cached() else { continue };
        let f = &k.folios[pfn as usize];
        let owned = f.test(pg::ALLOCATED) && f.test(pg::ANON) && f.test(pg::SWAPCACHE);
        if !owned || k.folio_swap[pfn as usize] != slot as u32 {
            return Err(format!(
                "swap slot {slot} is cached by pfn {pfn} (flags {:#x}), which holds slot {}",
                f.flags, k.folio_swap[pfn as usize]
            ));
        }
        if f.mapped() && swap_refs[slot] > 0 {
            return Err(format!(
                "swap slot {slot}: its folio {pfn} is mapped and a PTE still names the slot"
            ));
        }
    }
    check_zram_slots(k)
}

/// zram holds data only for slots in use, or freed into a CPU's return cache and not yet
/// given back to the swap map (zram_slot_free_notify runs then).
fn check_zram_slots(k: &Kernel) -> Result<(), String> {
    let Some(sw) = k.swap.as_ref() else {
        return Ok(());
    };
    let Some(z) = sw.zram.as_ref() else {
        return Ok(());
    };
    let returning: std::collections::BTreeSet<u32> = (k.swap_slots.iter())
        .flat_map(|c| c.slots_ret.iter().copied())
        .collect();
    for (slot, s) in sw.slots.iter().enumerate() {
        let slot = slot as u32;
        if s.is_free() && z.allocated(slot) && !returning.contains(&slot) {
            return Err(format!("zram holds data for free swap slot {slot}"));
        }
    }
    Ok(())
}
