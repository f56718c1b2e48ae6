//! zsmalloc's packing (mm/zsmalloc.c, Linux 6.1), shared by zswap's zsmalloc zpool and
//! zram: objects go to size classes 16 bytes apart, and the pool's frames follow the
//! bytes its objects' classes take (zspages packed without waste, classes not merged).
//! Only the sizes are modelled, no zspage or object.

use crate::kernel::folio::Pfn;
use crate::kernel::Kernel;

pub const PAGE_SIZE: u32 = 4096;
/// ZS_MIN_ALLOC_SIZE (32 bytes) and ZS_SIZE_CLASS_DELTA (PAGE_SIZE >> CLASS_BITS, 16).
const ZS_MIN_ALLOC: u32 = 32;
const ZS_DELTA: u32 = 16;
/// ZS_MAX_PAGES_PER_ZSPAGE in 6.1 (1 << ZS_MAX_ZSPAGE_ORDER, 2).
const ZS_MAX_PAGES_PER_ZSPAGE: u32 = 4;
/// ZS_HANDLE_SIZE: sizeof(unsigned long).
const ZS_HANDLE_SIZE: u32 = 8;

/// The size class an object of `len` bytes goes to.
pub fn class_size(len: u32) -> u32 {
    len.max(ZS_MIN_ALLOC).next_multiple_of(ZS_DELTA)
}

/// Models get_pages_per_zspage() (6.1): the zspage of 1 to 4 pages that wastes the
/// least share of itself on objects of `size` (the first of equals).
fn pages_per_zspage(size: u32) -> u32 {
    let (mut best, mut max_used) = (1, 0);
    for i in 1..=ZS_MAX_PAGES_PER_ZSPAGE {
        let zspage = i * PAGE_SIZE;
        let used = (zspage - zspage % size) * 100 / zspage;
        if used > max_used {
            (best, max_used) = (i, used);
        }
    }
    best
}

/// Models zs_huge_class_size() (6.1, set in zs_create_pool): going down from the largest
/// class, the first that packs more than one object into more than one page, less
/// ZS_HANDLE_SIZE - 1. zram stores a page that compresses to this or more whole
/// (ZRAM_HUGE).
pub fn huge_class_size() -> u32 {
    let mut size = PAGE_SIZE;
    loop {
        let pages = pages_per_zspage(size);
        if pages != 1 && pages * PAGE_SIZE / size != 1 {
            return size - (ZS_HANDLE_SIZE - 1);
        }
        size -= ZS_DELTA;
    }
}

/// A zsmalloc pool: the bytes its objects' classes take and the frames backing them.
#[derive(Clone, Debug, Default)]
pub struct ZsPool {
    pub bytes: u64,
    pub frames: Vec<Pfn>,
}

impl ZsPool {
    /// zs_get_total_pages().
    pub fn pages(&self) -> u64 {
        self.frames.len() as u64
    }
}

/// The pool's frames follow its bytes: as many pages as the classes' bytes fill, taken
/// from the running task's preferred node (its CPU's, unless its nodemask leaves that
/// out) and charged to no memcg (zsmalloc's alloc_page has no __GFP_ACCOUNT), given
/// back when they empty. False when a frame was needed and none was free.
pub fn fit_frames(k: &mut Kernel, pool: fn(&mut Kernel) -> &mut ZsPool) -> bool {
    loop {
        let z = pool(k);
        let need = z.bytes.div_ceil(u64::from(PAGE_SIZE));
        let have = z.frames.len() as u64;
        if have > need {
            let pfn = z.frames.pop().unwrap();
            k.free_unaccounted(pfn);
        } else if have < need {
            let node = crate::kernel::fault::preferred_node(k);
            let Some(pfn) = k.take_free_page(node) else {
                return false;
            };
            pool(k).frames.push(pfn);
        } else {
            return true;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_huge_class_of_4k_pages() {
        // 3264 is the largest class that fits five objects in four pages (16320 of
        // 16384 bytes); every class above it wastes more in a multi-page zspage.
        assert_eq!(super::huge_class_size(), 3264 - 7);
        assert_eq!(super::class_size(119), 128);
        assert_eq!(super::class_size(5), 32);
    }
}
