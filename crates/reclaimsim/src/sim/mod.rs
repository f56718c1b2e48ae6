//! The simulation core below the kernel model: virtual-time tasks and their run queue
//! (`sched`, its queue of tasks due `due`), spinlocks and contended lines as data
//! (`lock`; the kernel's lock and unlock paths are `kernel::spinlock`), the cost table
//! every modelled operation charges (`cost`), and the machine's CPU topology and NUMA
//! nodes (`topology`). Nothing here knows the kernel's state.

pub mod cost;
pub mod due;
pub mod lock;
pub mod sched;
pub mod topology;

/// For tests: a xorshift64 generator of draws below `n`, from a fixed seed.
#[cfg(test)]
pub(crate) fn test_draws() -> impl FnMut(u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}
