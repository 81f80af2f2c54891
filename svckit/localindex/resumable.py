"""The resumable queries open on one index: each keeps its whole ranking until it is stopped or has been
idle for its ``maxIdle`` seconds, and at most ``max_resumable`` are open at once.

At the limit a new one is refused (400), as the hosted service does: it caps active resumable queries
and asks users to stop the ones they are done with. Dropping the oldest instead would break a handle
another client is still paging through, without telling it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from svckit.errors import InvalidRequest
from svckit.localindex.request import Includes, UnknownName


@dataclass
class Resumable:
    """A resumable query: its full ranking (ids and scores, best first), how far it was read, and when
    it was last used. Ids and a float array take 16 bytes a vector, a tenth of a list of tuples."""

    namespace: str
    ids: list[str]
    scores: np.ndarray
    position: int
    includes: Includes
    max_idle: float
    last_used: float


class ResumableQueries:
    """The open resumable queries of one index (the index's lock guards every call)."""

    def __init__(self, max_open: int, clock: Callable[[], float]) -> None:
        self.max_open = max_open
        self.clock = clock
        self._open: dict[str, Resumable] = {}

    def _expire(self) -> None:
        now = self.clock()
        for uid in [u for u, r in self._open.items() if now - r.last_used > r.max_idle]:
            del self._open[uid]

    def make_room(self) -> None:
        """Refuse a new query while ``max_open`` are open (the expired ones are dropped first)."""
        self._expire()
        if len(self._open) >= self.max_open:
            raise InvalidRequest(
                f"resumable query: {len(self._open)} are open on this index, the limit of {self.max_open} "
                "(the index's max_resumable limit); stop the ones you are done with (resumable-query-end), "
                "or wait until they have been idle for their maxIdle seconds")

    def add(self, query: Resumable) -> str:
        self.make_room()  # again: others may have started while this one ranked
        uid = str(uuid.uuid4())
        self._open[uid] = query
        return uid

    def live(self, uid: str) -> Resumable:
        """The open query ``uid``, marked as used now."""
        self._expire()
        found = self._open.get(uid)
        if found is None:
            raise UnknownName(f"resumable query {uid!r} not found: it was stopped, or it expired after its "
                              "maxIdle seconds without use")
        found.last_used = self.clock()
        return found

    def end(self, uid: str) -> None:
        self.live(uid)
        del self._open[uid]
