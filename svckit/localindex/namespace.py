"""What one namespace of a :class:`~svckit.localindex.LocalIndex` holds: its records by row and its dense
and sparse parts, and a filter's verdicts on its records (reached outside the index lock)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from svckit.core.filter import Filter
from svckit.localindex import sparse
from svckit.localindex.ann import DenseStore
from svckit.localindex.request import SparsePair


@dataclass(frozen=True)
class Record:
    """A stored vector's id, text and metadata. Replaced on every write, never changed in place: a query
    that filtered a copy of the record list outside the lock relies on it (see :class:`Verdicts`)."""

    id: str
    data: str | None
    metadata: dict[str, Any] | None
    given: bool = False  # the vectors came from the client, not from embedding ``data``


class Entry(NamedTuple):
    """A record to insert; ``sparse`` is a client-given sparse vector (None: made from ``data``)."""

    id: str
    data: str | None
    metadata: dict[str, Any] | None
    sparse: SparsePair | None = None
    given: bool = False


@dataclass
class Namespace:
    """One namespace: records by row, the id -> row map, and the dense and sparse parts."""

    dense: DenseStore | None
    sparse: sparse.SparseStore | None
    records: dict[int, Record] = field(default_factory=dict)
    row_of: dict[str, int] = field(default_factory=dict)
    next_row: int = 0
    sorted_ids: list[str] | None = None  # ids in range order, rebuilt after a write

    def __len__(self) -> int:
        return len(self.row_of)

    def ids_in_order(self) -> list[str]:
        if self.sorted_ids is None:
            self.sorted_ids = sorted(self.row_of)
        return self.sorted_ids


@dataclass(frozen=True)
class Verdicts:
    """A filter's verdict on each record of a namespace, reached outside the index lock.

    Filtering is the slow part of a query (the filter runs on every record), so the lock is held only
    to copy the record list; :meth:`rows`, under the lock, judges again only the records written since.
    ``records`` keeps the copied records alive, so no other record can take one of their ``id()``s."""

    flt: Filter
    records: list[Record]
    matched: dict[int, bool]

    def rows(self, ns: Namespace) -> np.ndarray:
        """The rows of ``ns`` whose record matches now, in order (call with the index lock held)."""
        matched, flt = self.matched, self.flt
        rows = np.fromiter((row for row, rec in ns.records.items()
                            if (matched[id(rec)] if id(rec) in matched else flt.matches(rec.metadata))),
                           dtype=np.int64)
        rows.sort()
        return rows
