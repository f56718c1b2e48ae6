#!/usr/bin/env python3
"""Reads `perf script -F ip,sym` of swapcost (stdin) and the unperturbed CPU times a
page (argv: swap-in ns, swap-out ns, brd's page lookup ns) and prints, for a swap-in
fault and for a swap-out by MADV_PAGEOUT, the time with zram's own work and the bio
layer taken out (6.1 hands a page to zram or brd through ->rw_page, with no bio), the
data's copy kept, and brd's lookup of its page put in: what the same path costs on brd.
Shares are of the samples whose call chain holds do_swap_page (swap-in) or
madvise_pageout (swap-out), counting each function once a sample."""
import collections
import sys

t_in, t_out, brd = (float(a) for a in sys.argv[1:4])
# What the model charges on each path beside swap_in_rest / swap_out_rest at the default
# profile: a swap-in fault's fault 1000, page_alloc 150, charge 30, brd's page_copy 400,
# the LRU add ~70 and the slot's return ~50; a swap-out's isolation ~50, folio_check 60,
# swap_slot 100, try_to_unmap's rmap_lookup 150, pvmw_descent 350, unmap 300 and its
# rwsem ~40, brd's page_copy 400, the shadow's xarray 50, page_free 100 and the
# uncharge 30 (MADV_PAGEOUT skips folio_referenced and the LRU scan).
charged_in, charged_out = (float(a) for a in (sys.argv[4:6] + ["1700", "1650"])[:2])
samples, cur = [], set()
for line in sys.stdin:
    parts = line.split()
    if not parts:
        if cur:
            samples.append(cur)
        cur = set()
        continue
    cur.add(parts[-1] if len(parts) == 1 else parts[1])
if cur:
    samples.append(cur)


def shares(root):
    n, c = 0, collections.Counter()
    for s in samples:
        if root in s:
            n += 1
            c.update(s)
    return n, {k: v / n for k, v in c.items()}


# A swap-in fault's samples: every page fault but the first touches (do_anonymous_page).
faults = sum(1 for s in samples if "exc_page_fault" in s and "do_anonymous_page" not in s)
n_in, s_in = shares("do_swap_page")
g = lambda s, k: s.get(k, 0.0)
# do_swap_page's part of a swap-in fault's samples (the rest: fault entry and exit).
dsp = n_in / max(faults, 1)
zram_in = (
    g(s_in, "zram_submit_bio") - g(s_in, "copy_page")  # zram's lookup and own work
    + g(s_in, "swap_read_folio") - g(s_in, "zram_submit_bio")  # the bio around it
    + g(s_in, "zram_slot_free_notify")  # zram frees the slot's object
)
brd_in = t_in * (1 - dsp * zram_in) + brd
n_out, s_out = shares("madvise_pageout")
zram_out = (
    g(s_out, "zram_submit_bio") - g(s_out, "__pi_memcpy")  # compression, zsmalloc
    + g(s_out, "swap_writepage_bdev_sync") - g(s_out, "zram_submit_bio")  # the bio
)
# madvise's own page-table walk, which stands for reclaim's LRU scan.
walk = 1 - g(s_out, "shrink_folio_list") - g(s_out, "folio_isolate_lru")
brd_out = t_out * (1 - zram_out - walk) + brd
print(f"swap-in: {n_in} samples in do_swap_page ({dsp:.1%} of their faults'); zram and the "
      f"bio {zram_in:.1%} of do_swap_page: on brd {brd_in:.0f} ns a page; less the model's "
      f"{charged_in:.0f} ns: swap_in_rest = {brd_in - charged_in:.0f} ns")
print(f"swap-out: {n_out} samples; zram and the bio {zram_out:.1%}, madvise's walk {walk:.1%}: "
      f"on brd {brd_out:.0f} ns a page; less the model's {charged_out:.0f} ns: "
      f"swap_out_rest = {brd_out - charged_out:.0f} ns")
for k in ("workingset_refault", "mem_cgroup_swapin_charge_folio", "__mem_cgroup_uncharge_swap",
          "swap_cache_get_folio", "copy_page", "vma_alloc_folio_noprof", "psi_memstall_enter"):
    print(f"  swap-in {k}: {g(s_in, k):.1%}")
for k in ("try_to_unmap", "__remove_mapping", "folio_alloc_swap", "folio_isolate_lru",
          "folio_end_writeback", "__pi_memcpy"):
    print(f"  swap-out {k}: {g(s_out, k):.1%}")
