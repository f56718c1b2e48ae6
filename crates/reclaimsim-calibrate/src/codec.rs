//! Compression and decompression of 4 KiB pages with lzo1x-1 (zram's default family:
//! `lzo` and `lzo-rle` both run lzo1x_1_do_compress) and LZ4, on the pages the workloads
//! leave in memory.
//!
//! memtier writes values of `x` bytes unless `--random-data` is given (its object
//! generator memsets the value buffer with 'x'; the seeds' command lines do not pass it),
//! so a memcached page is item headers, keys and long runs of `x`. With `--random-data`
//! the values are pseudo-random bytes, as incompressible as the `random` pages.

use crate::stats::{self, Summary};
use crate::{Measurement, Outcome, Scale};
use rand::{RngCore, SeedableRng};
use reclaimsim::workload::memtier::{item_size, slab_chunk_size};
use std::hint::black_box;

const PAGE: usize = 4096;
/// Distinct pages each codec cycles through, so no single page trains the predictors.
const CORPUS: usize = 64;

/// A memcached slab region's first `CORPUS` pages filled with items of `value` bytes as
/// memtier's P:P populate leaves them: chunks of the item's slab class in arrival order,
/// each a 48-byte header (LRU and hash-chain pointers, times, sizes, refcount, flags,
/// class, key length), the CAS, the key `memtier-N` and its NUL, the value and `\r\n`,
/// and the chunk's unused tail still zero.
pub fn memcached_pages(value: usize) -> Vec<u8> {
    let key_len = |n: u64| format!("memtier-{n}").len() as u64;
    let size = item_size(0, key_len(100_000), value as u32);
    let chunk = slab_chunk_size(size).unwrap_or(size as u32) as usize;
    let mut region = vec![0u8; CORPUS * PAGE];
    let base: u64 = 0x7f3a_4c00_0000;
    for (i, item) in region.chunks_mut(chunk).enumerate() {
        let i = i as u64;
        // Four populating clients, each walking its own part of the key range.
        let key = format!("memtier-{}", 1 + (i % 4) * 67_500 + i / 4);
        let mut bytes = Vec::with_capacity(chunk);
        bytes.extend((base + (i + 1) * chunk as u64).to_le_bytes()); // next
        bytes.extend((base + i.saturating_sub(1) * chunk as u64).to_le_bytes()); // prev
        bytes.extend([0u8; 8]); // h_next: hash chains are short
        bytes.extend((1000 + i as u32 / 4096).to_le_bytes()); // time
        bytes.extend(0u32.to_le_bytes()); // exptime
        bytes.extend((value as u32 + 2).to_le_bytes()); // nbytes
        bytes.extend(1u16.to_le_bytes()); // refcount
        bytes.extend(3u16.to_le_bytes()); // it_flags: ITEM_LINKED | ITEM_CAS
        bytes.extend([15, key.len() as u8, 0, 0, 0, 0, 0, 0]); // slabs_clsid, nkey, padding to 48
        bytes.extend((i + 1).to_le_bytes()); // cas
        bytes.extend(key.as_bytes());
        bytes.push(0);
        bytes.extend(std::iter::repeat_n(b'x', value));
        bytes.extend(b"\r\n");
        let n = bytes.len().min(item.len());
        item[..n].copy_from_slice(&bytes[..n]);
    }
    region
}

/// `CORPUS` pages of pseudo-random bytes.
fn random_pages() -> Vec<u8> {
    let mut pages = vec![0u8; CORPUS * PAGE];
    rand_pcg::Pcg64::seed_from_u64(3).fill_bytes(&mut pages);
    pages
}

/// A page codec: compress into `out`, giving the compressed length, and decompress.
trait Codec {
    fn name(&self) -> &'static str;
    fn compress(&mut self, page: &[u8], out: &mut [u8]) -> Option<usize>;
    fn decompress(&mut self, comp: &[u8], out: &mut [u8]) -> Option<usize>;
}

#[cfg(feature = "lzo")]
struct Lzo(rust_lzo::LZOContext);

#[cfg(feature = "lzo")]
impl Codec for Lzo {
    fn name(&self) -> &'static str {
        "lzo"
    }
    fn compress(&mut self, page: &[u8], out: &mut [u8]) -> Option<usize> {
        let (c, err) = self.0.compress_to_slice(page, out);
        (err == rust_lzo::LZOError::OK).then_some(c.len())
    }
    fn decompress(&mut self, comp: &[u8], out: &mut [u8]) -> Option<usize> {
        let (d, err) = rust_lzo::LZOContext::decompress_to_slice(comp, out);
        (err == rust_lzo::LZOError::OK).then_some(d.len())
    }
}

struct Lz4;

impl Codec for Lz4 {
    fn name(&self) -> &'static str {
        "lz4"
    }
    fn compress(&mut self, page: &[u8], out: &mut [u8]) -> Option<usize> {
        lz4_flex::block::compress_into(page, out).ok()
    }
    fn decompress(&mut self, comp: &[u8], out: &mut [u8]) -> Option<usize> {
        lz4_flex::block::decompress_into(comp, out).ok()
    }
}

/// Compress every page once and check the round trip; the compressed pages.
fn round_trip(codec: &mut dyn Codec, pages: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut out = vec![0u8; 2 * PAGE];
    let mut back = vec![0u8; PAGE];
    pages
        .chunks(PAGE)
        .map(|page| {
            let n = codec.compress(page, &mut out).ok_or("compression failed")?;
            let comp = out[..n].to_vec();
            let m = codec
                .decompress(&comp, &mut back)
                .ok_or("decompression failed")?;
            (back[..m] == *page)
                .then_some(comp)
                .ok_or("the round trip changed the page")
        })
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", codec.name()))
}

/// Compression and decompression timings of one codec on one kind of page.
fn time_codec(s: &Scale, codec: &mut dyn Codec, pages: &[u8]) -> Result<[Summary; 2], String> {
    let comp = round_trip(codec, pages)?;
    let mut out = vec![0u8; 2 * PAGE];
    let (rounds, iters) = (s.rounds(15), s.iters(4000));
    let compress = stats::time_rounds(rounds, iters, |i| {
        let page = &pages[(i as usize % CORPUS) * PAGE..][..PAGE];
        black_box(codec.compress(black_box(page), &mut out));
    });
    let decompress = stats::time_rounds(rounds, iters, |i| {
        black_box(codec.decompress(black_box(&comp[i as usize % CORPUS]), &mut out));
    });
    match (compress, decompress) {
        (Some(c), Some(d)) => Ok([c, d]),
        _ => Err("no rounds".into()),
    }
}

/// Mean compressed size of the corpus, in bytes.
fn mean_size(codec: &mut dyn Codec, pages: &[u8]) -> usize {
    round_trip(codec, pages).map_or(0, |c| c.iter().map(Vec::len).sum::<usize>() / CORPUS)
}

/// lzo1x-1 and LZ4 on memcached-like pages (values of 2000 and 32 bytes, memtier's
/// default data), zeroed pages and random pages.
pub fn codecs(s: &Scale) -> Vec<Outcome> {
    let contents = [
        (
            "items2000",
            "memcached slab pages of items with 2000-byte values of 'x' (memtier -d 2000)",
            memcached_pages(2000),
        ),
        (
            "items32",
            "memcached slab pages of items with 32-byte values of 'x' (memtier's default -d 32)",
            memcached_pages(32),
        ),
        (
            "zero",
            "zero-filled pages (zram stores these without compressing)",
            vec![0u8; CORPUS * PAGE],
        ),
        (
            "random",
            "pseudo-random pages (memtier --random-data values)",
            random_pages(),
        ),
    ];
    let mut out = Vec::new();
    let mut codecs: Vec<Box<dyn Codec>> = vec![Box::new(Lz4)];
    #[cfg(feature = "lzo")]
    codecs.insert(0, Box::new(Lzo(rust_lzo::LZOContext::new())));
    #[cfg(not(feature = "lzo"))]
    for (kind, ..) in &contents {
        for op in ["compress", "decompress"] {
            let why = "skipped: lzo1x-1 needs the GPL-2.0 rust-lzo (build with --features lzo)";
            out.push(Err((format!("lzo_{op}_{kind}"), why.to_string())));
        }
    }
    for codec in codecs.iter_mut() {
        for (kind, what, pages) in &contents {
            let size = mean_size(codec.as_mut(), pages);
            let impl_ = match codec.name() {
                "lzo" => "lzo1x-1 (rust-lzo: Linux's lzo1x_compress.c / lzo1x_decompress_safe.c)",
                _ => "LZ4 block format (lz4_flex, unsafe paths)",
            };
            let names =
                ["compress", "decompress"].map(|op| format!("{}_{op}_{kind}", codec.name()));
            match time_codec(s, codec.as_mut(), pages) {
                Ok(sums) => {
                    for (name, sum) in names.into_iter().zip(sums) {
                        let how = format!("{impl_}, one 4 KiB page of {CORPUS} {what}, to {size} bytes on average; ns per page");
                        out.push(Ok(Measurement::new(&name, sum, how)));
                    }
                }
                Err(e) => out.extend(names.map(|n| Err((n, e.clone())))),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcached_pages_hold_items_in_their_slab_chunks() {
        let pages = memcached_pages(2000);
        assert_eq!(pages.len(), CORPUS * PAGE);
        // 2000-byte values make ~2075-byte items: the 2320-byte class.
        let chunk = slab_chunk_size(item_size(0, 14, 2000)).unwrap() as usize;
        assert_eq!(chunk, 2320);
        let second = &pages[chunk..2 * chunk];
        assert_eq!(&second[56..56 + 14], b"memtier-67501\0");
        assert!(second[70..70 + 2000].iter().all(|&b| b == b'x'));
        assert!(
            second[chunk - 100..].iter().all(|&b| b == 0),
            "the chunk's tail"
        );
    }

    #[cfg(feature = "lzo")]
    #[test]
    fn both_codecs_round_trip_every_kind_of_page() {
        for pages in [
            memcached_pages(32),
            random_pages(),
            vec![0u8; CORPUS * PAGE],
        ] {
            let lzo = round_trip(&mut Lzo(rust_lzo::LZOContext::new()), &pages).unwrap();
            let lz4 = round_trip(&mut Lz4, &pages).unwrap();
            assert_eq!((lzo.len(), lz4.len()), (CORPUS, CORPUS));
        }
        let items = mean_size(
            &mut Lzo(rust_lzo::LZOContext::new()),
            &memcached_pages(2000),
        );
        assert!(items < 1024, "runs of 'x' compress well: {items}");
    }
}
