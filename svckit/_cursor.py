"""The one cursor loop: every listing that follows a cursor page by page (``Queue.iter_runs`` /
``iter_dlq`` / ``iter_events``, ``Vector.iter_range``, ``KV.scan_iter`` / ``hscan_iter`` /
``sscan_iter`` / ``zscan_iter``) and the keyspace walk (:func:`svckit.kv.walk_keys`) run here.

A sans-I/O core, :class:`Pages`, decides what the next request asks for (:meth:`Pages.request`),
whether to send it (:meth:`Pages.goes_on`: not after the last page, not once ``limit`` items were
handed out, not once ``cancel`` is set) and what a reply brings (:meth:`Pages.take`), and reports
progress (:mod:`svckit._progress`). Two shells send the requests, one after another (each page
needs the cursor of the one before): :func:`follow` and :func:`afollow`. :func:`listing` and
:func:`alisting` wrap them as what every ``iter_*`` returns, a :class:`Run` / :class:`ARun`: an
iterator of the items that also says how the run ended::

    runs = queue.iter_runs(progress=True, cancel=stop_event, limit=500)
    for run in runs: ...
    runs.complete, runs.cancelled, runs.count, runs.requests

A cancelled run stops before its next request and keeps what it handed out: ``cancelled`` is True
(the rule of :mod:`svckit._progress`). Another reply (SCAN's) subclasses :class:`Pages`, overriding
``request`` and ``take`` (keyspace's ``_Walk``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import aclosing, closing
from typing import Any, Generic, TypeVar

from svckit._progress import Cancel, ProgressArg, Reporter, is_cancelled
from svckit.errors import InvalidArgument

__all__ = ["ARun", "PagePart", "Pages", "Run", "afollow", "alisting", "follow", "listing"]

T = TypeVar("T")
#: How a page is read: an attribute name, or a function of the page.
PagePart = str | Callable[[Any], Any]


def _part(spec: PagePart) -> Callable[[Any], Any]:
    if callable(spec):
        return spec
    return lambda page: getattr(page, spec)


class Pages:
    """The state of one cursor chain. ``items`` and ``cursor`` say where a page's items and the next
    cursor are; the chain ends after the page whose next cursor is falsy (None, "" or SCAN's 0).
    ``start`` is the first request's cursor. ``limit`` stops it after that many items (the last page
    cut to it). ``progress`` gets, after every page, phase and unit ``unit`` (by default the
    ``items`` name), ``done`` the items so far, ``total`` None, ``round_trips`` the pages read."""

    def __init__(self, items: PagePart = "items", cursor: PagePart = "cursor", *, start: Any = None,
                 progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None,
                 unit: str | None = None) -> None:
        if limit is not None and limit < 0:
            raise InvalidArgument("limit", f"the most items to read must be >= 0 (None: all), got {limit!r}")
        self.items, self.next_cursor = _part(items), _part(cursor)
        self.at = start
        self.unit = unit or (items if isinstance(items, str) else "items")
        self.cancel, self.limit = cancel, limit
        self.report = Reporter(progress)
        self.count = 0  # items handed out
        self.requests = 0  # one per page, one after another: the round trips
        self.ended = False  # the last page was read
        self.cut_short = False  # ``limit`` left out items of a page read
        self.cancelled = False  # stopped because ``cancel`` was set

    @property
    def complete(self) -> bool:
        """Every item was handed out: the last page was read and ``limit`` cut none."""
        return self.ended and not self.cut_short

    def goes_on(self) -> bool:
        """True when another request is due; marks the run ``cancelled`` when ``cancel`` stops it."""
        if self.ended or (self.limit is not None and self.count >= self.limit):
            return False
        self.cancelled = is_cancelled(self.cancel)
        return not self.cancelled

    def request(self) -> Any:
        """What the next request is sent: the cursor."""
        return self.at

    def take(self, page: Any) -> Sequence[Any]:
        """The page's items (cut to ``limit``); remembers where the next page starts."""
        self.at = self.next_cursor(page)
        self.ended = not self.at
        self.requests += 1
        batch = self.cut(list(self.items(page)))
        self.report(self.unit, self.count, unit=self.unit, round_trips=self.requests)
        return batch

    def cut(self, batch: list[Any]) -> list[Any]:
        """``batch`` cut to the items ``limit`` still allows, counted."""
        if self.limit is not None and len(batch) > self.limit - self.count:  # goes_on: room for 1 at least
            batch, self.cut_short = batch[: self.limit - self.count], True
        self.count += len(batch)
        return batch


def follow(fetch: Callable[[Any], Any], pages: Pages) -> Iterator[Any]:
    """The loop: ``fetch(pages.request())`` while ``pages.goes_on()``, yielding what ``pages.take``
    makes of each reply. Lazy: a request is sent when the next step is asked for."""
    with pages.report:
        while pages.goes_on():
            yield pages.take(fetch(pages.request()))


async def afollow(fetch: Callable[[Any], Awaitable[Any]], pages: Pages) -> AsyncIterator[Any]:
    """The asyncio twin of :func:`follow` (``fetch`` returns an awaitable reply)."""
    with pages.report:
        while pages.goes_on():
            yield pages.take(await fetch(pages.request()))


class Run(Generic[T]):
    """An iterator over a cursor chain (its items, or its steps) that says how the run ended:
    ``complete`` (every item was handed out), ``cancelled`` (``cancel`` stopped it), ``count`` (items
    handed out), ``requests`` (pages read)."""

    def __init__(self, pages: Pages, steps: Iterator[T]) -> None:
        self.pages, self._steps = pages, steps

    def __iter__(self) -> Run[T]:
        return self

    def __next__(self) -> T:
        return next(self._steps)

    def close(self) -> None:
        """Stop early: no further request, the progress bar closed."""
        self._steps.close()  # type: ignore[attr-defined]

    @property
    def complete(self) -> bool:
        return self.pages.complete

    @property
    def cancelled(self) -> bool:
        return self.pages.cancelled

    @property
    def count(self) -> int:
        return self.pages.count

    @property
    def requests(self) -> int:
        return self.pages.requests


class ARun(Generic[T]):
    """The asyncio twin of :class:`Run` (``async for``; ``aclose()``)."""

    def __init__(self, pages: Pages, steps: AsyncIterator[T]) -> None:
        self.pages, self._steps = pages, steps

    def __aiter__(self) -> ARun[T]:
        return self

    async def __anext__(self) -> T:
        return await self._steps.__anext__()

    async def aclose(self) -> None:
        await self._steps.aclose()  # type: ignore[attr-defined]

    complete = Run.complete
    cancelled = Run.cancelled
    count = Run.count
    requests = Run.requests


def _items(steps: Iterator[Sequence[Any]]) -> Iterator[Any]:
    with closing(steps):  # type: ignore[type-var]
        for batch in steps:
            yield from batch


async def _aitems(steps: AsyncIterator[Sequence[Any]]) -> AsyncIterator[Any]:
    async with aclosing(steps):  # type: ignore[type-var]
        async for batch in steps:
            for item in batch:
                yield item


def listing(fetch: Callable[[Any], Any], pages: Pages) -> Run[Any]:
    """Every item of every page (:func:`follow`, flattened), as a :class:`Run`."""
    return Run(pages, _items(follow(fetch, pages)))


def alisting(fetch: Callable[[Any], Awaitable[Any]], pages: Pages) -> ARun[Any]:
    """The asyncio twin of :func:`listing`."""
    return ARun(pages, _aitems(afollow(fetch, pages)))
