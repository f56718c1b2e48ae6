//! Chrome OS's low-memory handling (`[[agent]] kind = "chromeos"`), as of 2022: every
//! interval (Chrome's memory pressure monitor, kMemoryPressureIntervalMs, 1 s) it reads
//! /proc/meminfo and computes resourced's available memory (platform2
//! `resourced/src/memory.rs`, calculate_available_memory_kb); below the critical margin
//! Chrome discards one tab: it kills the renderer of the tab its tab manager ranks first
//! (`Workload::discard_order`), and the workload learns its process is gone
//! (`Workload::process_killed`). One discard a check, as Chrome waits for the next
//! pressure reading before the next.

use crate::kernel::folio::lru;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;
use crate::scenario::agent::{ChromeOsConf, CRITICAL_MARGIN_BIPS};
use crate::units::PAGE_SIZE;

/// What /proc/meminfo gives resourced, in pages: MemTotal, MemFree, anon and file LRU
/// pages (Active + Inactive), Dirty, SwapFree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub total: u64,
    pub free: u64,
    pub anon: u64,
    pub file: u64,
    pub dirty: u64,
    pub swap_free: u64,
}

/// Reads the machine's meminfo now, at the agent's CPU cost of reading the file.
pub fn meminfo(k: &mut Kernel) -> MemInfo {
    k.sync();
    k.spend(k.costs.cgroup_stat_read, Cat::Other);
    let mut m = MemInfo {
        total: k.memory_pages(),
        free: k.free_pages(),
        dirty: k.wb.nr_dirty,
        swap_free: k.swap.as_ref().map_or(0, |s| s.nr_free()),
        ..MemInfo::default()
    };
    let nr = k.lru_pages();
    m.anon = nr[lru::INACTIVE_ANON] + nr[lru::ACTIVE_ANON];
    m.file = nr[lru::INACTIVE_FILE] + nr[lru::ACTIVE_FILE];
    m
}

/// resourced's calculate_available_memory_kb, in pages: free memory above the reserve,
/// the file cache less dirty pages and `min_filelist`, and a `ram_swap_weight`-th of
/// what could be swapped (the smaller of anon and free swap).
pub fn available(m: &MemInfo, reserved: u64, min_filelist: u64, ram_swap_weight: u64) -> u64 {
    let free = m.free.saturating_sub(reserved);
    let cache = m.file.saturating_sub(m.dirty).saturating_sub(min_filelist);
    let swap = m.anon.min(m.swap_free) / ram_swap_weight;
    free + cache + swap
}

/// The critical margin in pages: the configured one, or swap.sh's 5.2% of MemTotal
/// (computed in MiB as swap.sh does, from KiB).
pub fn critical_margin(conf: &ChromeOsConf, total_pages: u64) -> u64 {
    match conf.critical_margin {
        Some(bytes) => bytes / PAGE_SIZE,
        None => {
            let total_kib = total_pages * (PAGE_SIZE / 1024);
            let mib = total_kib / 1024 * CRITICAL_MARGIN_BIPS / 10_000;
            mib * (1 << 20) / PAGE_SIZE
        }
    }
}

/// One check: whether memory is below the critical margin (and so a tab should go),
/// with the available pages it saw.
pub fn critical(k: &mut Kernel, conf: &ChromeOsConf) -> (bool, u64) {
    let m = meminfo(k);
    let min_filelist = conf.min_filelist / PAGE_SIZE;
    // resourced's calculate_reserved_free_kb is the kernel's calculate_totalreserve_pages.
    let avail = available(
        &m,
        k.totalreserve_pages(),
        min_filelist,
        conf.ram_swap_weight,
    );
    (avail < critical_margin(conf, m.total), avail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf() -> ChromeOsConf {
        ChromeOsConf {
            workload: "chrome".into(),
            critical_margin: None,
            ram_swap_weight: 4,
            min_filelist: 100_000 * 1024,
            interval_ns: 1_000_000_000,
        }
    }

    #[test]
    fn available_is_resourced_sum_of_three_parts() {
        let m = MemInfo {
            total: 1 << 20,
            free: 10_000,
            anon: 400_000,
            file: 50_000,
            dirty: 1_000,
            swap_free: 1_000_000,
        };
        // 10000 - 2000 free, 50000 - 1000 - 25000 cache, 400000 / 4 swap.
        assert_eq!(available(&m, 2_000, 25_000, 4), 8_000 + 24_000 + 100_000);
        // Free swap smaller than anon: it bounds the swap part; below the reserve and
        // under min_filelist the parts are 0, not negative.
        let tight = MemInfo {
            swap_free: 40_000,
            free: 1_000,
            file: 10_000,
            ..m
        };
        assert_eq!(available(&tight, 2_000, 25_000, 4), 10_000);
    }

    #[test]
    fn default_margin_is_swap_sh_5_2_percent_of_memtotal() {
        // 4 GiB: 4194304 KiB / 1024 * 520 / 10000 = 212 MiB (integer shell arithmetic).
        assert_eq!(critical_margin(&conf(), 1 << 20), 212 * 256);
        let given = ChromeOsConf {
            critical_margin: Some(300 << 20),
            ..conf()
        };
        assert_eq!(critical_margin(&given, 1 << 20), 300 * 256);
    }
}
