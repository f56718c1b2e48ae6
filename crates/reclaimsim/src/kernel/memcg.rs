//! The memory cgroup tree: page counters, limits, effective protection, and per-memcg
//! statistics (mm/memcontrol.c, mm/page_counter.c).

use crate::kernel::debug::vm_warn_on;
use crate::kernel::stats::VmStat;
use smallvec::SmallVec;

pub type MemcgId = u16;
pub const ROOT: MemcgId = 0;

/// memory.events counters.
#[derive(Clone, Debug, Default)]
pub struct Events {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
    pub oom_kill: u64,
    /// memory.swap.events `max`: swap charges that met memory.swap.max (counted in the
    /// folio's memcg, as 6.1's __mem_cgroup_try_charge_swap does).
    pub swap_max: u64,
    /// memory.swap.events `fail`: swap-outs that got no slot, for want of a free slot
    /// on the device or at memory.swap.max.
    pub swap_fail: u64,
}

#[derive(Clone, Debug)]
pub struct Memcg {
    pub path: String,
    pub parent: Option<MemcgId>,
    pub children: Vec<MemcgId>,
    /// Pages charged to this memcg and its descendants (page_counter usage).
    pub usage: u64,
    /// Model-only: pages charged by allocations still looking for their frame (the
    /// allocator may wait at sync points between the charge and the frame).
    pub precharged: u64,
    /// Swap slots charged (memory.swap.current), hierarchical.
    pub swap_usage: u64,
    /// memory.swap.max in pages (`u64::MAX` for "max").
    pub swap_max: u64,
    /// memory.zswap.max in pages (`u64::MAX` for "max"), which zswap's stores check
    /// (obj_cgroup_may_zswap).
    pub zswap_max: u64,
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    /// Effective protection computed by `calculate_protection` on the way down.
    pub emin: u64,
    pub elow: u64,
    pub children_min_usage: u64,
    pub children_low_usage: u64,
    /// Events of this memcg alone (memory.stat aggregates descendants when reported).
    pub stat: VmStat,
    pub events: Events,
    /// The cacheline of the memcg's page_counter usage, which every CPU charging at a
    /// limit updates atomically (`fault::charge_counters`).
    pub counter: crate::sim::lock::Lock,
}

impl Memcg {
    pub fn new(path: &str, parent: Option<MemcgId>) -> Self {
        Memcg {
            path: path.to_string(),
            parent,
            children: Vec::new(),
            usage: 0,
            precharged: 0,
            swap_usage: 0,
            swap_max: u64::MAX,
            zswap_max: u64::MAX,
            max: u64::MAX,
            high: u64::MAX,
            low: 0,
            min: 0,
            emin: 0,
            elow: 0,
            children_min_usage: 0,
            children_low_usage: 0,
            stat: VmStat::default(),
            events: Events::default(),
            counter: Default::default(),
        }
    }
}

/// The tree. Ids are indices; 0 is the root. Children are listed in declaration order,
/// so `iter` is the kernel's pre-order `mem_cgroup_iter` order.
#[derive(Clone, Debug)]
pub struct MemcgTree {
    pub cgs: Vec<Memcg>,
    /// The whole tree in pre-order, and each memcg's subtree as the range
    /// `pos[m]..end[m]` of it: reclaim walks subtrees on every pass, so `add` keeps them
    /// ready rather than each walk rebuilding one.
    order: Vec<MemcgId>,
    pos: Vec<u32>,
    end: Vec<u32>,
}

impl Default for MemcgTree {
    fn default() -> Self {
        MemcgTree {
            cgs: vec![Memcg::new("/", None)],
            order: vec![ROOT],
            pos: vec![0],
            end: vec![1],
        }
    }
}

impl MemcgTree {
    /// The root and the memcgs below it with their limits (cgroup_mkdir, then writes to
    /// memory.{max,high,low,min}); parents come before their children.
    pub fn with_memcgs(memcgs: &[crate::kernel::config::MemcgSetup]) -> MemcgTree {
        let mut tree = MemcgTree::default();
        for c in memcgs {
            let parent_path = match c.path.rfind('/') {
                Some(0) | None => "/",
                Some(i) => &c.path[..i],
            };
            let parent = tree
                .by_path(parent_path)
                .expect("validated: parent memcg declared first");
            let id = tree.add(&c.path, parent);
            let cg = &mut tree.cgs[id as usize];
            (cg.max, cg.high, cg.low, cg.min) = (c.max, c.high, c.low, c.min);
            (cg.swap_max, cg.zswap_max) = (c.swap_max, c.zswap_max);
        }
        tree
    }

    pub fn add(&mut self, path: &str, parent: MemcgId) -> MemcgId {
        let id = self.cgs.len() as MemcgId;
        self.cgs.push(Memcg::new(path, Some(parent)));
        self.cgs[parent as usize].children.push(id);
        self.index_subtrees();
        id
    }

    /// Rebuilds `order`, `pos` and `end` (the tree only grows at setup).
    fn index_subtrees(&mut self) {
        let n = self.cgs.len();
        let (mut order, mut pos, mut end) = (Vec::with_capacity(n), vec![0; n], vec![0; n]);
        // Depth-first with an explicit stack: (memcg, whether its subtree is done).
        let mut stack = vec![(ROOT, false)];
        while let Some((m, done)) = stack.pop() {
            if done {
                end[m as usize] = order.len() as u32;
                continue;
            }
            pos[m as usize] = order.len() as u32;
            order.push(m);
            stack.push((m, true));
            let children = &self.cgs[m as usize].children;
            stack.extend(children.iter().rev().map(|&c| (c, false)));
        }
        (self.order, self.pos, self.end) = (order, pos, end);
    }

    /// The subtree rooted at `root` in pre-order (mem_cgroup_iter's order), borrowed.
    #[inline]
    pub fn subtree(&self, root: MemcgId) -> &[MemcgId] {
        &self.order[self.pos[root as usize] as usize..self.end[root as usize] as usize]
    }

    pub fn by_path(&self, path: &str) -> Option<MemcgId> {
        self.cgs
            .iter()
            .position(|c| c.path == path)
            .map(|i| i as MemcgId)
    }

    /// Pre-order walk of the subtree rooted at `root` (mem_cgroup_iter). Inline up to
    /// 16 memcgs: reclaim walks the tree on every pass.
    pub fn iter(&self, root: MemcgId) -> SmallVec<[MemcgId; 16]> {
        SmallVec::from_slice(self.subtree(root))
    }

    /// `m` and its ancestors up to the root.
    pub fn ancestors(&self, m: MemcgId) -> impl Iterator<Item = MemcgId> + '_ {
        std::iter::successors(Some(m), move |&c| self.cgs[c as usize].parent)
    }

    pub fn is_descendant(&self, m: MemcgId, root: MemcgId) -> bool {
        let p = self.pos[m as usize];
        (self.pos[root as usize]..self.end[root as usize]).contains(&p)
    }

    /// page_counter_try_charge(): the lowest memcg whose max the charge would exceed.
    pub fn over_limit(&self, m: MemcgId, nr: u64) -> Option<MemcgId> {
        self.ancestors(m).find(|&c| {
            let cg = &self.cgs[c as usize];
            c != ROOT && cg.usage + nr > cg.max
        })
    }

    /// page_counter_charge() up the hierarchy.
    pub fn charge(&mut self, m: MemcgId, nr: u64) {
        let mut c = Some(m);
        while let Some(id) = c {
            self.cgs[id as usize].usage += nr;
            c = self.cgs[id as usize].parent;
        }
    }

    /// page_counter_uncharge() up the hierarchy: page_counter_cancel warns when a
    /// counter would go below zero and sets it to zero.
    pub fn uncharge(&mut self, m: MemcgId, nr: u64) {
        let mut c = Some(m);
        while let Some(id) = c {
            let cg = &mut self.cgs[id as usize];
            vm_warn_on!(cg.usage < nr, "page_counter underflow: {} - {nr}", cg.usage);
            cg.usage = cg.usage.saturating_sub(nr);
            c = cg.parent;
        }
    }

    /// Models page_counter_try_charge() on memcg->swap (6.1's
    /// __mem_cgroup_try_charge_swap): charges one slot to `m` and its ancestors unless
    /// one of them below the root would go over its memory.swap.max; the root's counter
    /// is not charged through this path (mem_cgroup_is_root) and has no limit. On
    /// failure, counts memory.swap.events `max` and `fail` in `m` (memcg_memory_event of
    /// the folio's memcg, which the results sum up the tree) and charges nothing.
    pub fn try_charge_swap(&mut self, m: MemcgId) -> bool {
        let at_max = self.ancestors(m).any(|c| {
            let cg = &self.cgs[c as usize];
            c != ROOT && cg.swap_usage >= cg.swap_max
        });
        if at_max {
            let e = &mut self.cgs[m as usize].events;
            e.swap_max += 1;
            e.swap_fail += 1;
            return false;
        }
        self.swap_charge(m, 1);
        true
    }

    /// The swap slots `m` may still take below its and its ancestors' memory.swap.max
    /// (the memcg part of mem_cgroup_get_nr_swap_pages()); `u64::MAX` with no limit.
    pub fn swap_margin(&self, m: MemcgId) -> u64 {
        (self.ancestors(m).take_while(|&c| c != ROOT))
            .map(|c| {
                let cg = &self.cgs[c as usize];
                cg.swap_max.saturating_sub(cg.swap_usage)
            })
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The memcg part of mem_cgroup_swap_full() (6.1): `m` or an ancestor below the root
    /// uses at least half of its memory.swap.max (memory.swap.high is not modelled).
    pub fn swap_half_full(&self, m: MemcgId) -> bool {
        (self.ancestors(m).take_while(|&c| c != ROOT)).any(|c| {
            let cg = &self.cgs[c as usize];
            cg.swap_max != u64::MAX && cg.swap_usage * 2 >= cg.swap_max
        })
    }

    pub fn swap_charge(&mut self, m: MemcgId, delta: i64) {
        let mut c = Some(m);
        while let Some(id) = c {
            let cg = &mut self.cgs[id as usize];
            cg.swap_usage = cg
                .swap_usage
                .checked_add_signed(delta)
                .expect("swap usage underflow");
            c = cg.parent;
        }
    }

    /// Models mem_cgroup_calculate_protection(): sets emin/elow of `m` for reclaim rooted
    /// at `root`. Must run top-down (parents first), as shrink_node_memcgs does.
    pub fn calculate_protection(&mut self, root: MemcgId, m: MemcgId) {
        let (usage, parent) = {
            let cg = &mut self.cgs[m as usize];
            cg.emin = 0;
            cg.elow = 0;
            (cg.usage, cg.parent)
        };
        if m == root || usage == 0 {
            return;
        }
        let Some(p) = parent else { return };
        let (min, low) = (self.cgs[m as usize].min, self.cgs[m as usize].low);
        if p == root {
            self.cgs[m as usize].emin = min;
            self.cgs[m as usize].elow = low;
            return;
        }
        // Children's protected usage of the parent, recomputed as the kernel keeps it
        // up to date on every charge (propagate_protected_usage).
        let (pu, pmin, plow) = {
            let pc = &self.cgs[p as usize];
            (pc.usage, pc.emin, pc.elow)
        };
        let (cmin, clow) = self.children_protected_usage(p);
        self.cgs[p as usize].children_min_usage = cmin;
        self.cgs[p as usize].children_low_usage = clow;
        self.cgs[m as usize].emin = effective_protection(usage, pu, min, pmin, cmin);
        self.cgs[m as usize].elow = effective_protection(usage, pu, low, plow, clow);
    }

    fn children_protected_usage(&self, p: MemcgId) -> (u64, u64) {
        self.cgs[p as usize]
            .children
            .iter()
            .fold((0, 0), |(a, b), &c| {
                let cg = &self.cgs[c as usize];
                (a + cg.usage.min(cg.min), b + cg.usage.min(cg.low))
            })
    }

    /// Models mem_cgroup_below_min(): false for the root and the reclaim target.
    pub fn below_min(&self, target: MemcgId, m: MemcgId) -> bool {
        let cg = &self.cgs[m as usize];
        m != ROOT && m != target && cg.emin >= cg.usage
    }

    /// Models mem_cgroup_below_low().
    pub fn below_low(&self, target: MemcgId, m: MemcgId) -> bool {
        let cg = &self.cgs[m as usize];
        m != ROOT && m != target && cg.elow >= cg.usage
    }

    /// Models mem_cgroup_protection(): (emin, elow), or (0, 0) for the target itself.
    pub fn protection(&self, target: MemcgId, m: MemcgId) -> (u64, u64) {
        if m == target || m == ROOT {
            return (0, 0);
        }
        let cg = &self.cgs[m as usize];
        (cg.emin, cg.elow)
    }
}

/// Models effective_protection() in mm/page_counter.c without memory_recursiveprot: a
/// child's protection is its own setting, capped by its usage, and scaled down
/// proportionally when the siblings together claim more than the parent's protection.
pub fn effective_protection(
    usage: u64,
    _parent_usage: u64,
    setting: u64,
    parent_effective: u64,
    siblings_protected: u64,
) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64;
    }
    protected
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> MemcgTree {
        // / -> a -> {b, c}
        let mut t = MemcgTree::default();
        let a = t.add("/a", ROOT);
        t.add("/a/b", a);
        t.add("/a/c", a);
        t
    }

    #[test]
    fn preorder_iteration() {
        let t = tree();
        let paths: Vec<_> = t
            .iter(ROOT)
            .iter()
            .map(|&m| t.cgs[m as usize].path.clone())
            .collect();
        assert_eq!(paths, ["/", "/a", "/a/b", "/a/c"]);
    }

    #[test]
    fn charge_is_hierarchical_and_limit_finds_lowest_offender() {
        let mut t = tree();
        t.cgs[1].max = 100;
        t.cgs[2].max = 10;
        t.charge(2, 10);
        assert_eq!(t.cgs[1].usage, 10);
        assert_eq!(t.cgs[0].usage, 10);
        assert_eq!(t.over_limit(2, 1), Some(2));
        assert_eq!(t.over_limit(3, 1), None);
        t.charge(3, 90);
        assert_eq!(t.over_limit(3, 1), Some(1));
    }

    #[test]
    fn effective_protection_shares_parent_protection_proportionally() {
        // A textbook shape: parent protects 100, children claim 150 in total.
        assert_eq!(effective_protection(200, 400, 100, 100, 150), 66);
        // Claims within the parent's protection are kept, capped by usage.
        assert_eq!(effective_protection(30, 400, 100, 200, 150), 30);
        let mut t = tree();
        t.cgs[1].min = 60;
        t.cgs[2].min = 60;
        t.cgs[3].min = 60;
        t.charge(2, 100);
        t.charge(3, 100);
        for m in t.iter(ROOT) {
            t.calculate_protection(ROOT, m);
        }
        assert_eq!(t.cgs[1].emin, 60);
        // Each child claims 60, the parent has 60 to give: 30 each.
        assert_eq!(t.cgs[2].emin, 30);
        assert_eq!(t.cgs[3].emin, 30);
        assert!(!t.below_min(ROOT, 2));
        t.cgs[2].min = 1000;
        t.cgs[3].min = 0;
        for m in t.iter(ROOT) {
            t.calculate_protection(ROOT, m);
        }
        assert_eq!(t.cgs[2].emin, 60);
        assert!(!t.below_min(ROOT, 2));
        assert!(!t.below_min(2, 2), "the target itself is never protected");
    }
}
