//! The simulation core below the kernel model: virtual-time tasks and their run queue
//! (`sched`, its queue of tasks due `due`), spinlocks and contended lines as data (`lock`; the kernel's lock and
//! unlock paths are `kernel::spinlock`), and the cost table every modelled operation
//! charges (`cost`), and the machine's CPU topology and NUMA nodes (`topology`). Nothing here knows the kernel's state.

pub mod cost;
pub mod due;
pub mod lock;
pub mod sched;
pub mod topology;
