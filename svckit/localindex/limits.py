"""The local index's limits: what one request may ask for, how long its work may run, and how much
state queries may hold.

Every limit is refused with a 400 (``InvalidRequest`` / ``FilterSyntaxError``) that names it, before
any work is done; the one on time (``max_query_seconds``) as soon as the work passes it
(:class:`Budget`). The defaults are set so that a real user never meets them: they bound what a
request can cost the sandbox, not what a notebook needs. The sandbox takes each one as a
``Sandbox(vector_<name>=...)`` option; a :class:`LocalIndex` takes ``limits=Limits(...)``.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field, fields

from svckit._progress import Cancel, is_cancelled
from svckit.core.filter import FilterLimits
from svckit.errors import InvalidRequest


@dataclass(frozen=True)
class Limits(FilterLimits):
    """Every limit of one local index: a filter's (:class:`~svckit.core.filter.FilterLimits`: length,
    nesting, conditions) and the ones below."""

    #: results one query returns, and one resumable-query-next (additionalK). The playground's slider
    #: stops at 100; 1,000 hits with metadata is already a megabyte-sized answer, and paging further
    #: is what resumable queries are for.
    max_top_k: int = 1000
    #: queries in one request (an array body). A batch runs its queries one after the other in one
    #: worker thread, so this bounds how long one request can take; svckit's evaluation sends 20.
    max_batch: int = 1000
    #: resumable queries open at once on one index. The hosted service also caps active resumable
    #: queries and asks users to stop them; each one holds the ranking of a whole namespace.
    max_resumable: int = 100
    #: seconds a resumable query may stay idle (maxIdle); the SDKs' default is 3600.
    max_idle: int = 86400
    #: seconds one request's work may run (a batch's queries together, with their filters): past it
    #: the request is answered 400 naming this limit. A query of the local index takes milliseconds;
    #: the clients give up after 10 s by default.
    max_query_seconds: float = 30.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "float":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                        or value <= 0:
                    raise ValueError(f"{f.name}: must be a positive number, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{f.name}: must be a positive integer, got {value!r}")


class Cancelled(Exception):
    """The request's client went away: its work stopped, and nobody waits for an answer."""


@dataclass
class Budget:
    """What one request's work may still take: time (``seconds``, ``max_query_seconds``) and its
    client's patience (``cancel``, the :mod:`svckit._progress` protocol: the sandbox sets it when the
    connection closes). :meth:`check` is called between the queries of a batch and between the
    records a filter judges, so the work stops within a record of either."""

    seconds: float
    cancel: Cancel = None
    deadline: float = field(init=False)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds
        # checked for every record: the event's own method where there is one (a third of the cost)
        cancel = self.cancel
        self._cancelled = cancel.is_set if isinstance(cancel, threading.Event) else lambda: is_cancelled(cancel)

    def check(self) -> None:
        """Raise :class:`Cancelled` once the client has gone, ``InvalidRequest`` past the deadline."""
        if self._cancelled():
            raise Cancelled("the client went away before its answer was ready")
        if time.monotonic() >= self.deadline:
            raise InvalidRequest(f"the request ran over the limit of {self.seconds:g} s (the index's "
                                 "max_query_seconds limit): narrow its filter, send fewer queries in one batch, "
                                 "or query a smaller namespace")
