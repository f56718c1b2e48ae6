"""The ``policy=`` hook of :func:`reclaimsim.run` and :func:`reclaimsim.compare`: a reclaim
policy of one's own, in the shape of cache_ext's (SOSP'25) eBPF policies, governing the
page cache of a memcg (or of every memcg, an instance each) inside the model's kernel.

The kernel calls the hooks of one instance per governed memcg: ``init(memcg)`` once,
then ``folio_added``, ``folio_accessed``, ``folio_removed`` with a folio, and
``evict_folios(ctx)`` for candidates to reclaim. A folio is an ``int`` (its frame
number) that stays the same from ``folio_added`` to ``folio_removed``; the kernel calls
``folio_removed`` whenever the folio leaves the memcg, evictions included, before the
frame can come back in another ``folio_added``. Each hook call costs the run the same
fixed virtual time as a Rust plugin's (``policy_hook`` in the cost table): how long the
Python takes changes the wall time only.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar, Optional

#: ``FolioList.iterate`` callback answers, as cache_ext's.
CONTINUE = 0
EVICT = 1
STOP = 2


@dataclass(frozen=True)
class EvictCtx:
    """What ``evict_folios`` is asked: ``memcg`` (its path), ``node``, ``nr_to_reclaim``
    (how many folios to propose; more are ignored), ``swappiness``, ``priority`` (12 on
    the first pass, lower as reclaim gets harder) and ``reclaimer``: ``"kswapd"``,
    ``"direct"``, ``"memcg_limit"`` or ``"proactive"``."""

    memcg: str
    node: int
    nr_to_reclaim: int
    swappiness: int
    priority: int
    reclaimer: str


class Policy:
    """Subclass it and pass the class as ``policy=``. Hooks left out do nothing; the
    default ``evict_folios`` proposes nothing, so the kernel's own LRU reclaims (the
    results' ``plugin.fallbacks`` count how often).

    ``memcg``: the memcg it governs when the scenario does not name one in
    ``kernel.plugin`` (None: every memcg). ``pages``: ``"file"`` (the memcg's page
    cache, as cache_ext) or ``"all"`` (its anon folios too: they are added when they
    join the LRU, accessed only through the young bits a reference check reads, and a
    proposed anon folio is swapped out). An exception in a hook, or a proposed folio
    not resident in the memcg, stops the run and raises :class:`PolicyError` naming the
    hook."""

    memcg: ClassVar[Optional[str]] = None
    pages: ClassVar[str] = "file"

    def init(self, memcg: str) -> None:
        """Called once, before the run, with the governed memcg's path."""

    def folio_added(self, folio: int) -> None:
        """A folio of the memcg's page cache joined the LRU."""

    def folio_accessed(self, folio: int) -> None:
        """An access the kernel saw: a read(2) at once, a mapped access when a reference
        check reads the folio's young bits."""

    def folio_removed(self, folio: int) -> None:
        """The folio left the memcg (evicted, or freed)."""

    def evict_folios(self, ctx: EvictCtx) -> Iterable[int]:
        """Up to ``ctx.nr_to_reclaim`` folios to reclaim."""
        return []


class FolioList:
    """A list of folios as cache_ext's list helpers keep them: ``add`` at the tail (or
    the head), ``move``, ``delete``, ``iterate`` from the head proposing candidates, and
    ``sample`` by a score. The same semantics as the Rust plugins' ``Lists``, so a
    policy written with it evicts in the same order in either language."""

    def __init__(self) -> None:
        self._d: OrderedDict[int, None] = OrderedDict()

    def add(self, folio: int, tail: bool = True) -> None:
        """Put ``folio`` at the tail (the newest end) or the head; moves it if present."""
        self._d[folio] = None
        self._d.move_to_end(folio, last=tail)

    move = add

    def delete(self, folio: int) -> bool:
        """Take ``folio`` off; False if it was not on the list."""
        return self._d.pop(folio, 0) is None

    def first(self) -> Optional[int]:
        return next(iter(self._d), None)

    def __contains__(self, folio: object) -> bool:
        return folio in self._d

    def __len__(self) -> int:
        return len(self._d)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._d))

    def iterate(self, fn: Callable[[int, int], int], max: int, out: list[int]) -> None:
        """Show ``fn(index, folio)`` each folio from the head, once, until ``out`` holds
        ``max``: ``EVICT`` appends it to ``out`` and moves it to the tail, ``STOP``
        ends the walk, ``CONTINUE`` goes on."""
        for i, f in enumerate(list(self._d)):
            if len(out) >= max:
                return
            r = fn(i, f)
            if r == EVICT:
                out.append(f)
                self._d.move_to_end(f)
            elif r == STOP:
                return

    def sample(
        self, n: int, sample_size: int, score: Callable[[int], float], out: list[int]
    ) -> None:
        """Take ``n * sample_size`` folios off the head; from each group of
        ``sample_size`` propose the lowest ``score`` (the first on a tie); put all of
        them back at the tail in the order taken."""
        k = max(1, sample_size)
        taken = []
        while len(taken) < n * k and self._d:
            f, _ = self._d.popitem(last=False)
            taken.append(f)
        for g in range(0, len(taken), k):
            group = taken[g : g + k]
            out.append(min(group, key=score))
        for f in taken:
            self._d[f] = None
