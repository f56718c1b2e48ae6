//! Memory costs: minor faults, page zeroing and copying, pread(2) of a cached page,
//! write(2) to /dev/null, and load latencies from L1 to DRAM by pointer chasing.

use crate::stats::{self, Summary};
use crate::{Measurement, Outcome, Scale};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::time::Instant;

const PAGE: usize = 4096;

/// An mmap'd region, unmapped when dropped.
struct Region {
    ptr: *mut u8,
    len: usize,
}

impl Region {
    /// `len` bytes of `MAP_SHARED` file memory (`fd`) or private anonymous memory, with
    /// transparent huge pages asked for or refused (`madvise`) when `huge` says so.
    fn map(len: usize, fd: Option<i32>, huge: Option<bool>) -> Result<Region, String> {
        let (flags, fd) = match fd {
            Some(fd) => (libc::MAP_SHARED, fd),
            None => (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1),
        };
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a fresh mapping at an address the kernel picks; nothing else refers to it.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "mmap of {len} bytes: {}",
                std::io::Error::last_os_error()
            ));
        }
        let region = Region {
            ptr: ptr.cast(),
            len,
        };
        if let Some(huge) = huge {
            let advice = if huge {
                libc::MADV_HUGEPAGE
            } else {
                libc::MADV_NOHUGEPAGE
            };
            // SAFETY: advice on the mapping just made; it changes no contents. Refused
            // advice (no THP in this kernel) leaves the pages as they are: not an error.
            unsafe { libc::madvise(ptr, len, advice) };
        }
        Ok(region)
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, readable and writable, and owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// The region as 64-bit words (mmap returns page-aligned memory).
    fn words(&mut self) -> &mut [u64] {
        // SAFETY: as bytes(); page alignment satisfies u64's.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast(), self.len / 8) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmaps what map() mapped; no reference into it outlives self.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Writes one byte to every page, as page_fault3 and the anonymous-fault loop do.
fn touch_pages(r: &mut Region) {
    for page in r.bytes().chunks_mut(PAGE) {
        // A volatile store, so the compiler keeps every page's write.
        // SAFETY: page is a valid, writable slice of at least one byte.
        unsafe { std::ptr::write_volatile(page.as_mut_ptr(), 1) };
    }
}

/// ns per page of map, touch, unmap rounds over `len` bytes (the first round untimed).
fn fault_rounds(s: &Scale, len: usize, fd: Option<i32>) -> Result<Summary, String> {
    let mut samples = Vec::new();
    for round in 0..=s.rounds(60) {
        let start = Instant::now();
        // No THP, or one fault would map 512 pages.
        let mut r = Region::map(len, fd, Some(false))?;
        touch_pages(&mut r);
        drop(r);
        if round > 0 {
            samples.push(start.elapsed().as_nanos() as f64 / (len / PAGE) as f64);
        }
    }
    stats::summarize(&samples, (samples.len() * len / PAGE) as u64).ok_or("no rounds".into())
}

/// Minor faults: anonymous memory (mmap, write a byte per page, munmap) and will-it-scale
/// page_fault3's loop on a shared mapping of a sparse temporary file.
pub fn faults(s: &Scale) -> Vec<Outcome> {
    let anon_len = s.bytes(16 << 20, 1 << 20);
    let anon = fault_rounds(s, anon_len, None).map(|sum| {
        let how = format!(
            "mmap {} MiB anonymous (MADV_NOHUGEPAGE), write one byte per 4 KiB page, munmap; \
             ns per page (fault, allocation, zeroing, charge, unmap and free)",
            anon_len >> 20
        );
        Measurement::new("anon_fault", sum, how)
    });
    let file_len = s.bytes(16 << 20, 1 << 20);
    let file = tempfile::tempfile()
        .and_then(|f| f.set_len(file_len as u64).map(|_| f))
        .map_err(|e| format!("temporary file: {e}"))
        .and_then(|f| fault_rounds(s, file_len, Some(f.as_raw_fd())))
        .map(|sum| {
            let how = format!(
                "page_fault3's loop: mmap a sparse {} MiB file in {} MAP_SHARED, write one byte \
                 per page, munmap; ns per page (do_shared_fault with page_mkwrite, unmap)",
                file_len >> 20,
                std::env::temp_dir().display()
            );
            Measurement::new("shared_file_fault", sum, how)
        });
    vec![
        anon.map_err(|e| ("anon_fault".into(), e)),
        file.map_err(|e| ("shared_file_fault".into(), e)),
    ]
}

/// Zeroing and copying 4 KiB pages cycled through a buffer far larger than L2, as a page
/// off the free lists is rarely in L1 or L2.
pub fn zero_copy(s: &Scale) -> Vec<Outcome> {
    let len = s.bytes(64 << 20, 8 << 20);
    let pages = len / PAGE;
    let zero = Region::map(len, None, Some(false)).and_then(|mut r| {
        touch_pages(&mut r);
        let buf = r.bytes();
        stats::time_rounds(s.rounds(50), 4096, |i| {
            let at = (i as usize * 7919 % pages) * PAGE;
            buf[at..at + PAGE].fill(0);
            black_box(&buf[at]);
        })
        .ok_or("no rounds".to_string())
    });
    let copy = Region::map(len, None, Some(false)).and_then(|mut r| {
        touch_pages(&mut r);
        let src = r.bytes();
        let mut dst = vec![0u8; PAGE];
        stats::time_rounds(s.rounds(50), 4096, |i| {
            let at = (i as usize * 7919 % pages) * PAGE;
            dst.copy_from_slice(&src[at..at + PAGE]);
            black_box(&dst);
        })
        .ok_or("no rounds".to_string())
    });
    let how = |what: &str| {
        format!(
            "{what} of 4 KiB pages visited in a scattered order over a {} MiB buffer",
            len >> 20
        )
    };
    vec![
        zero.map(|sum| Measurement::new("page_zero", sum, how("memset(0)")))
            .map_err(|e| ("page_zero".into(), e)),
        copy.map(|sum| Measurement::new("page_copy", sum, how("memcpy into a 4 KiB buffer")))
            .map_err(|e| ("page_copy".into(), e)),
    ]
}

/// pread(2) of 4 KiB pages of a file in the page cache, in random order, into one buffer.
pub fn pread(s: &Scale) -> Vec<Outcome> {
    let len = s.bytes(64 << 20, 4 << 20);
    let result = tempfile::tempfile()
        .and_then(|f| {
            let chunk = vec![0x5au8; 1 << 20];
            for off in (0..len).step_by(chunk.len()) {
                f.write_all_at(&chunk, off as u64)?;
            }
            Ok(f)
        })
        .map_err(|e| format!("temporary file: {e}"))
        .and_then(|f| {
            let mut order: Vec<u64> = (0..(len / PAGE) as u64).collect();
            order.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(1));
            let mut buf = vec![0u8; PAGE];
            let mut failed = None;
            let sum = stats::time_rounds(s.rounds(50), 4096, |i| {
                let page = order[i as usize % order.len()];
                if let Err(e) = f.read_exact_at(&mut buf, page * PAGE as u64) {
                    failed = Some(e);
                }
            });
            match failed {
                Some(e) => Err(format!("pread: {e}")),
                None => sum.ok_or("no rounds".into()),
            }
        });
    vec![result
        .map(|sum| {
            let how = format!(
                "pread(2) of a 4 KiB page at a random offset of a {} MiB file in the page \
                 cache (written, never dropped) into one user buffer",
                len >> 20
            );
            Measurement::new("pread", sum, how)
        })
        .map_err(|e| ("pread".into(), e))]
}

/// write(2) of one 4 KiB buffer to /dev/null, as `dd of=/dev/null` writes each block it
/// read: the kernel's write_null returns at once, so this is the syscall's entry and
/// exit with the VFS's checks (rw_verify_area, fsnotify).
pub fn write_devnull(s: &Scale) -> Vec<Outcome> {
    vec![devnull(s)]
}

fn devnull(s: &Scale) -> Outcome {
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(|e| ("write_devnull".to_string(), format!("/dev/null: {e}")))?;
    let buf = vec![0x5au8; PAGE];
    let mut failed = None;
    let sum = stats::time_rounds(s.rounds(50), 4096, |_| {
        if let Err(e) = std::io::Write::write_all(&mut &null, &buf) {
            failed = Some(e);
        }
    });
    let how = "write(2) of a 4 KiB buffer to /dev/null (dd's write of each block it read)";
    match (failed, sum) {
        (Some(e), _) => Err(("write_devnull".into(), format!("write: {e}"))),
        (None, None) => Err(("write_devnull".into(), "no rounds".into())),
        (None, Some(sum)) => Ok(Measurement::new("write_devnull", sum, how.into())),
    }
}

/// The data caches' sizes from sysfs: L1d, L2, L3 (bytes), as the kernel reports them.
fn cache_sizes() -> (Option<usize>, Option<usize>, Option<usize>) {
    let mut sizes = [None; 3];
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let size = size.trim();
        let bytes = match size.strip_suffix('K').or(size.strip_suffix('M')) {
            Some(n) if size.ends_with('M') => n.parse::<usize>().ok().map(|n| n << 20),
            Some(n) => n.parse::<usize>().ok().map(|n| n << 10),
            None => size.parse().ok(),
        };
        if let (Ok(l @ 1..=3), "Data" | "Unified") = (level.trim().parse::<usize>(), kind.trim()) {
            sizes[l - 1] = bytes;
        }
    }
    (sizes[0], sizes[1], sizes[2])
}

/// ns per dependent load walking one random cycle through every 64-byte line of a
/// `bytes` buffer (on transparent huge pages where the kernel has them, so that TLB
/// misses do not add page walks).
fn chase(s: &Scale, bytes: usize, steps: u64) -> Result<Summary, String> {
    let mut r = Region::map(bytes, None, Some(true))?;
    let words = r.words();
    let lines = words.len() / 8;
    let mut order: Vec<u32> = (0..lines as u32).collect();
    order.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(2));
    for (k, &line) in order.iter().enumerate() {
        words[line as usize * 8] = u64::from(order[(k + 1) % lines]);
    }
    let mut at = order[0] as usize;
    let sum = stats::time_rounds(s.rounds(15), steps, |_| at = words[at * 8] as usize);
    black_box(at);
    sum.ok_or("no rounds".into())
}

/// Load latencies: L1, L2 and L3 hits and a DRAM miss, by pointer chasing over buffers of
/// half of each cache and over a buffer far larger than the last-level cache.
pub fn latencies(s: &Scale) -> Vec<Outcome> {
    let (l1, l2, l3) = cache_sizes();
    let llc = l3.or(l2).unwrap_or(32 << 20);
    let dram = if s.quick {
        64 << 20
    } else {
        (4 * llc).clamp(256 << 20, 1 << 30)
    };
    let levels = [
        ("l1_hit", l1.map(|b| b / 2), 1_000_000),
        ("l2_hit", l2.map(|b| b / 2), 1_000_000),
        // Four times L2 and at most half of L3: virtual machines often report the host's
        // whole L3, of which a guest gets far less (this project's report 260 MiB and
        // miss from 16 MiB on).
        (
            "l3_hit",
            l3.zip(l2).map(|(l3, l2)| (l3 / 2).min(4 * l2)),
            500_000,
        ),
        ("dram_miss", Some(dram), 200_000),
    ];
    levels
        .into_iter()
        .map(|(name, bytes, steps)| {
            let fail = |e: String| (name.to_string(), e);
            let bytes = bytes.ok_or_else(|| fail("sysfs gives no such cache".into()))?;
            let sum = chase(s, bytes, s.iters(steps)).map_err(fail)?;
            let how = format!(
                "dependent loads along one random cycle through every 64-byte line of a {} KiB \
                 buffer (MADV_HUGEPAGE); caches from sysfs: L1d {}, L2 {}, L3 {} KiB",
                bytes >> 10,
                l1.unwrap_or(0) >> 10,
                l2.unwrap_or(0) >> 10,
                l3.unwrap_or(0) >> 10
            );
            Ok(Measurement::new(name, sum, how))
        })
        .collect()
}
