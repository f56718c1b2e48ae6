//! Writes to control files while a run goes on (a scenario's `[[event]]`s): the lru_gen
//! debugfs file, a memcg's cgroup v2 memory files, the sysctls the model reads and
//! zram's sysfs files, each with what Linux 6.1 does on the write (mm/memcontrol.c,
//! mm/vmscan.c, mm/page_alloc.c, drivers/block/zram/zram_drv.c). The values come in
//! pages and plain numbers: the scenario layer parses what the user wrote.

use crate::kernel::batch;
use crate::kernel::fault;
use crate::kernel::lru::mglru::debugfs::LruGenCmd;
use crate::kernel::lru::Policy;
use crate::kernel::memcg::MemcgId;
use crate::kernel::stats::StallKind;
use crate::kernel::vmscan::{self, MAX_RECLAIM_RETRIES};
use crate::kernel::Kernel;

/// One write: to /sys/kernel/debug/lru_gen, to a memcg's file, or to a sysctl.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    LruGen(Vec<LruGenCmd>),
    Memcg(MemcgId, MemcgFile),
    Sysctl(Sysctl),
}

/// A memcg's memory file and the value written, in pages (`u64::MAX` for "max").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MemcgFile {
    High(u64),
    Max(u64),
    Low(u64),
    Min(u64),
    /// memory.swap.max.
    SwapMax(u64),
    /// memory.zswap.max.
    ZswapMax(u64),
    /// memory.reclaim: the amount, and the `swappiness=` argument of 6.13+ kernels (not
    /// in 6.1): the swappiness of this reclaim only.
    Reclaim {
        pages: u64,
        swappiness: Option<u32>,
    },
}

/// A sysctl (or sysfs knob) and its new value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sysctl {
    /// vm.swappiness, 0..=200.
    Swappiness(u32),
    /// vm.watermark_scale_factor, 1..=3000.
    WatermarkScaleFactor(u64),
    /// /sys/kernel/mm/lru_gen/min_ttl_ms (MGLRU).
    MinTtlMs(u64),
    /// /sys/block/zram0/idle: "all" (zram only).
    ZramIdle,
    /// /sys/block/zram0/writeback: "idle", "huge" or "huge_idle" (zram only).
    ZramWriteback(crate::kernel::zram::WritebackMode),
    /// /sys/block/zram0/writeback_limit_enable: 0 or 1.
    ZramWritebackLimitEnable(bool),
    /// /sys/block/zram0/writeback_limit, in 4 KiB pages.
    ZramWritebackLimit(u64),
}

/// How a write ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The write failed with this errno name.
    Err(&'static str),
    /// memory.max: reclaim could not bring the memcg under the new limit and the memcg
    /// OOM killer ran: `kills` victims, and `no_victim` when it found none left to kill
    /// (the write still succeeds, the memcg stays above its limit).
    Oom {
        kills: u32,
        no_victim: bool,
    },
}

/// Runs one write in the running task (the event's), its reclaim on its CPU.
pub fn write(k: &mut Kernel, p: &mut dyn Policy, w: &Write) -> Outcome {
    let r = match w {
        Write::LruGen(cmds) => p.lru_gen_write(k, cmds),
        Write::Memcg(m, file) => return memcg_write(k, p, *m, *file),
        Write::Sysctl(s) => sysctl_write(k, p, *s),
    };
    r.map_or_else(Outcome::Err, |()| Outcome::Ok)
}

fn memcg_write(k: &mut Kernel, p: &mut dyn Policy, m: MemcgId, file: MemcgFile) -> Outcome {
    let cg = &mut k.memcgs.cgs[m as usize];
    match file {
        // memory_low_write() / memory_min_write(): page_counter_set_low/min, no more.
        MemcgFile::Low(v) => cg.low = v,
        MemcgFile::Min(v) => cg.min = v,
        // swap_max_write(): page_counter's max set (xchg), nothing reclaimed or freed.
        MemcgFile::SwapMax(v) => cg.swap_max = v,
        // zswap_max_write(): the same (xchg of memcg->zswap_max); stored entries stay.
        MemcgFile::ZswapMax(v) => cg.zswap_max = v,
        MemcgFile::High(v) => memory_high_write(k, p, m, v),
        MemcgFile::Max(v) => return memory_max_write(k, p, m, v),
        MemcgFile::Reclaim { pages, swappiness } => {
            let from = k.cur.clock;
            let r = memory_reclaim(k, p, m, pages, swappiness);
            k.record_stall(m, StallKind::Proactive, k.cur.clock - from);
            return r;
        }
    }
    Outcome::Ok
}

/// The memcg's page counter, as the writer reads it after catching up with the other
/// tasks (page_counter_read()).
fn usage(k: &mut Kernel, m: MemcgId) -> u64 {
    k.sync();
    k.memcgs.cgs[m as usize].usage
}

/// Models memory_high_write() (6.1): set memory.high, then, in the writing task, while
/// usage is above it: drain the charge stocks once (the model keeps none: a re-read),
/// reclaim the excess (try_to_free_mem_cgroup_pages, may swap), and give up after
/// MAX_RECLAIM_RETRIES more rounds that reclaimed nothing. No OOM, and (since 5.9) not a
/// memory stall.
fn memory_high_write(k: &mut Kernel, p: &mut dyn Policy, m: MemcgId, high: u64) {
    k.memcgs.cgs[m as usize].high = high;
    let (mut drained, mut retries) = (false, MAX_RECLAIM_RETRIES);
    loop {
        let nr_pages = usage(k, m);
        if nr_pages <= high {
            return;
        }
        if !drained {
            drained = true;
            continue;
        }
        let reclaimed = vmscan::try_to_free_mem_cgroup_pages(k, p, m, nr_pages - high);
        if reclaimed == 0 {
            if retries == 0 {
                return;
            }
            retries -= 1;
        }
    }
}

/// Models memory_max_write() (6.1): set memory.max, then while usage is above it: drain
/// once, reclaim the excess while MAX_RECLAIM_RETRIES fruitless rounds remain (a round
/// that reclaims something costs none), then a memcg OOM event and
/// mem_cgroup_out_of_memory() (`fault::out_of_memory` in the memcg), again after each
/// kill, until usage fits or no victim is left. Not a memory stall.
fn memory_max_write(k: &mut Kernel, p: &mut dyn Policy, m: MemcgId, max: u64) -> Outcome {
    k.memcgs.cgs[m as usize].max = max;
    let from = k.cur.clock;
    let (mut drained, mut nr_reclaims, mut kills) = (false, MAX_RECLAIM_RETRIES, 0);
    loop {
        let nr_pages = usage(k, m);
        if nr_pages <= max {
            break;
        }
        if !drained {
            drained = true;
            continue;
        }
        if nr_reclaims > 0 {
            if vmscan::try_to_free_mem_cgroup_pages(k, p, m, nr_pages - max) == 0 {
                nr_reclaims -= 1;
            }
            continue;
        }
        k.memcgs.cgs[m as usize].events.oom += 1;
        if !fault::out_of_memory(k, p, Some(m), Some(from)) {
            return Outcome::Oom {
                kills,
                no_victim: true,
            };
        }
        kills += 1;
    }
    if kills > 0 {
        Outcome::Oom {
            kills,
            no_victim: false,
        }
    } else {
        Outcome::Ok
    }
}

/// Models memory_reclaim() (6.1): proactive reclaim of `nr_to_reclaim` pages from the
/// memcg, each round asking try_to_free_mem_cgroup_pages() for what is still missing
/// (MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE); a round that reclaims nothing
/// uses up one of MAX_RECLAIM_RETRIES, the last round drains every CPU's LRU batches
/// first (lru_add_drain_all), and when none is left the write fails with EAGAIN.
/// `swappiness`: 6.13's `swappiness=` argument, this reclaim's swappiness.
fn memory_reclaim(
    k: &mut Kernel,
    p: &mut dyn Policy,
    m: MemcgId,
    nr_to_reclaim: u64,
    swappiness: Option<u32>,
) -> Outcome {
    let (mut retries, mut nr_reclaimed) = (MAX_RECLAIM_RETRIES, 0);
    while nr_reclaimed < nr_to_reclaim {
        if retries == 0 {
            batch::lru_add_drain_all(k, p);
        }
        let reclaimed = vmscan::try_to_free_mem_cgroup_pages_proactive(
            k,
            p,
            m,
            nr_to_reclaim - nr_reclaimed,
            swappiness,
        );
        if reclaimed == 0 {
            if retries == 0 {
                return Outcome::Err("EAGAIN");
            }
            retries -= 1;
        }
        nr_reclaimed += reclaimed;
    }
    Outcome::Ok
}

/// A sysctl write: vm.swappiness (in cgroup v2 every memcg reclaims with the global
/// value: 6.1's mem_cgroup_swappiness() ignores memcg->swappiness on the default
/// hierarchy, so the write changes every memcg's at once), vm.watermark_scale_factor
/// (watermark_scale_factor_sysctl_handler: setup_per_zone_wmarks), lru_gen's
/// min_ttl_ms (MGLRU only: ENOENT otherwise), zram's idle, writeback and writeback
/// limit files (idle_store, writeback_store, writeback_limit_store and
/// writeback_limit_enable_store: `zram`; ENODEV without a zram swap device).
fn sysctl_write(k: &mut Kernel, p: &mut dyn Policy, s: Sysctl) -> Result<(), &'static str> {
    use crate::kernel::zram;
    let has_zram = k.swap.as_ref().is_some_and(|sw| sw.zram.is_some());
    let zram_file = matches!(
        s,
        Sysctl::ZramIdle
            | Sysctl::ZramWriteback(_)
            | Sysctl::ZramWritebackLimitEnable(_)
            | Sysctl::ZramWritebackLimit(_)
    );
    if zram_file && !has_zram {
        return Err("ENODEV");
    }
    match s {
        Sysctl::ZramIdle => zram::mark_idle(k),
        Sysctl::ZramWriteback(mode) => return zram::writeback(k, mode),
        Sysctl::ZramWritebackLimitEnable(on) => zram::zram(k).wb_limit_enable = on,
        Sysctl::ZramWritebackLimit(pages) => zram::zram(k).bd_wb_limit = pages,
        Sysctl::Swappiness(v) => k.cfg.swappiness = v,
        Sysctl::WatermarkScaleFactor(v) => {
            k.cfg.watermark_scale_factor = v;
            k.setup_per_zone_wmarks();
        }
        Sysctl::MinTtlMs(v) => {
            p.set_min_ttl_ms(v)?;
            k.cfg.min_ttl_ms = v;
        }
    }
    Ok(())
}
