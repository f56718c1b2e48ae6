//! The LRU policy: the part of reclaim that decides list placement and victims. Three
//! policies implement it: `classic` (active/inactive lists), behind the same trait the
//! multi-generational LRU, and `plugin`, the classic LRU under a `ReclaimPlugin` (the
//! public interface for a policy of one's own, in Rust or, through the Python package,
//! in Python). Everything else (batches, faults, rmap, writeback,
//! kswapd and direct reclaim drivers) is shared kernel code in `vmscan`, `batch`, `fault`.

pub mod classic;
pub mod mglru;
pub mod plugin;

use crate::kernel::folio::Pfn;
use crate::kernel::lru::mglru::debugfs::LruGenState;
use crate::kernel::memcg::MemcgId;
use crate::kernel::vmscan::ScanControl;
use crate::kernel::Kernel;
use mglru::debugfs::LruGenCmd;

/// folio_check_references() verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

pub trait Policy {
    /// lruvec_add_folio() (`tail`: lruvec_add_folio_tail()): puts a folio on its list.
    fn add_folio(&mut self, k: &mut Kernel, pfn: Pfn, tail: bool);
    /// lruvec_del_folio(): takes a folio off its list.
    fn del_folio(&mut self, k: &mut Kernel, pfn: Pfn);
    /// folio_mark_accessed(): an access through a file descriptor (read(2)).
    fn mark_accessed(&mut self, k: &mut Kernel, pfn: Pfn);
    /// Set up per-pass state once per shrink_node (prepare_scan_control()).
    fn prepare_scan_control(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl);
    /// shrink_lruvec(): reclaim from one lruvec.
    fn shrink_lruvec(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl);
    /// The policy's own shrink_node (lru_gen_shrink_node() of the 6.3+ memcg LRU), if it
    /// takes this reclaim: true when it did, and vmscan's shrink_node has nothing to do.
    fn shrink_node(&mut self, _k: &mut Kernel, _node: usize, _sc: &mut ScanControl) -> bool {
        false
    }
    /// kswapd_age_node(): kswapd's aging before each shrink_node.
    fn age_node(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl);
    /// folio_check_references(): the rmap verdict for a folio shrink_folio_list holds.
    fn check_references(&mut self, k: &mut Kernel, pfn: Pfn, sc: &ScanControl) -> Verdict;
    /// workingset_eviction(): the shadow entry a reclaimed folio leaves behind.
    fn eviction(&mut self, k: &mut Kernel, pfn: Pfn, target: MemcgId) -> u64;
    /// workingset_refault(): a folio is being read back in over its shadow; `in_fault`
    /// when this happens in a page fault (lru_gen_in_fault()) rather than read(2).
    fn refault(&mut self, k: &mut Kernel, pfn: Pfn, shadow: u64, in_fault: bool);
    /// End of a reclaim cycle on a node (snapshot_refaults()).
    fn snapshot_refaults(&mut self, k: &mut Kernel, target: MemcgId, node: usize);
    /// A write to /sys/kernel/debug/lru_gen: runs the commands in order, stopping at the
    /// first that fails (with its errno name). Only MGLRU has it.
    fn lru_gen_write(&mut self, _k: &mut Kernel, _cmds: &[LruGenCmd]) -> Result<(), &'static str> {
        Err("ENOENT")
    }
    /// A write to /sys/kernel/mm/lru_gen/min_ttl_ms (store_min_ttl()). Only MGLRU has it.
    fn set_min_ttl_ms(&mut self, _ms: u64) -> Result<(), &'static str> {
        Err("ENOENT")
    }
    /// The engine switches tasks: the running task's own reclaim state (what the kernel
    /// keeps in current->reclaim_state or on the reclaimer's stack) is put aside under
    /// `from` and task `to`'s taken back.
    fn switch_task(&mut self, _from: usize, _to: usize) {}
    /// Host bytes of the policy's own state (lists, per-frame bookkeeping, filters), for
    /// the model's memory figure.
    fn host_bytes(&self) -> u64;
    /// The MGLRU state of an lruvec (generations with their ages at `now`, PID counters,
    /// walk stats), if the policy has one.
    fn lru_gen_state(&self, _k: &Kernel, _lv: usize, _now: u64) -> Option<LruGenState> {
        None
    }
    /// A failure of the policy that ends the run (a plugin's hook failed), taken once;
    /// the engine asks after each step.
    fn failure(&mut self) -> Option<String> {
        None
    }
    /// What the plugin layer did, when the policy is `plugin::Plugin`.
    fn plugin_stats(&self) -> Option<plugin::PluginStats> {
        None
    }
    /// The invariant checker's view: every frame on this lruvec's lists, in list order,
    /// with the list's name, and an error if the policy's own bookkeeping is off.
    fn check(
        &self,
        k: &Kernel,
        lv: usize,
        seen: &mut dyn FnMut(Pfn, &str) -> Result<(), String>,
    ) -> Result<(), String>;
}
