"""The local index's limits: what one request may ask for, and how much state queries may hold.

Every limit is refused with a 400 (``InvalidRequest`` / ``FilterSyntaxError``) that names it, before
any work is done. The defaults are set so that a real user never meets them: they bound what a
request can cost the sandbox, not what a notebook needs. The sandbox takes each one as a
``Sandbox(vector_<name>=...)`` option; a :class:`LocalIndex` takes ``limits=Limits(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Limits:
    #: results one query returns, and one resumable-query-next (additionalK). The playground's slider
    #: stops at 100; 1,000 hits with metadata is already a megabyte-sized answer, and paging further
    #: is what resumable queries are for.
    max_top_k: int = 1000
    #: queries in one request (an array body). A batch runs its queries one after the other in one
    #: worker thread, so this bounds how long one request can take; svckit's evaluation sends 20.
    max_batch: int = 1000
    #: characters of a filter. Hand-written filters are a few dozen; this leaves room for an IN list of
    #: a few hundred ids, and bounds the GLOB patterns (RE2's time is linear in the value for a given
    #: pattern, and grows with the pattern's size).
    max_filter_length: int = 16384
    #: levels of nested parentheses in a filter. Real filters nest a handful; the parser is recursive
    #: and Python's stack gives out near 330.
    max_filter_depth: int = 64
    #: resumable queries open at once on one index. The hosted service also caps active resumable
    #: queries and asks users to stop them; each one holds the ranking of a whole namespace.
    max_resumable: int = 100
    #: seconds a resumable query may stay idle (maxIdle); the SDKs' default is 3600.
    max_idle: int = 86400

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{f.name}: must be a positive integer, got {value!r}")

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Limits:
        """The limits a sandbox was started with: ``vector_max_top_k`` and so on (None or absent:
        the default)."""
        given = {f.name: options[f"vector_{f.name}"] for f in fields(cls)
                 if options.get(f"vector_{f.name}") is not None}
        return cls(**given)
