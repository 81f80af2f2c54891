"""What a keyspace pass found (:func:`svckit.kv.analyze_keyspace`): the summary a person reads first,
the frames (displayed in the widget's units: :mod:`svckit.display`) and how close a sampled pass came
to a complete one (:meth:`KeyspaceReport.against`). Kept apart from the pass itself
(:mod:`svckit.kv.analysis`), which only counts and estimates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from svckit._units import mark
from svckit.kv.estimates import SMALL_PREFIX
from svckit.kv.formats import format_bytes

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class KeyspaceReport:
    """What :func:`analyze_keyspace` found. ``complete`` False means a sampled pass: ``sample_size``
    of ``total_keys`` keys were described and every ``±`` column is a 95% interval half-width."""

    pattern: str
    complete: bool
    total_keys: int
    sample_size: int
    seed: int
    vanished: int
    memory_available: bool
    memory: float
    memory_pm: float
    delimiter: str
    depth: int
    big_value_bytes: int
    big_length: int
    seconds: float
    by_prefix: pd.DataFrame
    by_type: pd.DataFrame
    ttl: pd.DataFrame
    no_expiry: pd.DataFrame
    biggest: pd.DataFrame
    warnings: pd.DataFrame
    confidence: float = 0.95
    #: keys of the sample described because their prefix holds few keys (the rest is random)
    whole_keys: int = 0
    #: big values in all (a sampled pass: an estimate)
    big_values: float = 0.0
    #: the pass was cancelled (:mod:`svckit._progress`): its figures cover only the keys it reached
    cancelled: bool = False

    @property
    def sampling_fraction(self) -> float:
        return self.sample_size / self.total_keys if self.total_keys else 1.0

    def summary(self) -> str:
        """One paragraph a person reads first: what was measured and how sure it is."""
        if self.complete:
            head = f"Complete pass: all {self.total_keys:,} keys matching {self.pattern!r} described"
            err = "figures are exact"
        else:
            whole = (f"; {self.whole_keys:,} of them in prefixes of at most {SMALL_PREFIX} keys, described whole"
                     if self.whole_keys else "")
            head = (f"Sampled pass: {self.sample_size:,} of {self.total_keys:,} keys matching {self.pattern!r} "
                    f"({self.sampling_fraction:.1%}, seed {self.seed}{whole})")
            err = ("key counts per prefix are exact (from SCAN); memory, type and TTL figures are "
                   "estimates, ± = 95% interval")
        mem = ("MEMORY USAGE is not available on this backend, so memory is not reported" if not self.memory_available
               else f"memory {format_bytes(self.memory) or '—'}"
               + ("" if self.complete else f" ± {format_bytes(self.memory_pm) or '—'}"))
        big = f"{len(self.warnings):,} big value(s)"
        if not self.complete and len(self.warnings):
            big += f" in the sample (≈ {self.big_values:,.0f} in all)"
        elif not self.complete:
            big += " in the sample (a sampled pass can miss rare big values; run a complete pass to list them all)"
        unseen = ""
        if not self.complete:
            missed = self.by_prefix[self.by_prefix["sampled"] == 0]
            # the outermost prefixes without a sampled key (their sub-prefixes are in them)
            top = missed[~missed["parent"].isin(set(missed["prefix"]))]
            if len(top):
                unseen = (f"; {int(top['keys'].sum()):,} key(s) under {len(top):,} prefix(es) had no key in the "
                          "sample, so their memory is not estimated (a rare prefix of big values needs a complete pass)")
        if self.cancelled:
            return (f"Cancelled after {self.seconds:.1f} s: partial figures over the {self.total_keys:,} keys "
                    f"matching {self.pattern!r} walked and the {self.sample_size:,} described before the cancel; "
                    f"{mem}; run it again for a report.")
        return f"{head} in {self.seconds:.1f} s; {err}; {mem}; {big}{unseen}."

    def against(self, exact: KeyspaceReport) -> pd.DataFrame:
        """How close this (sampled) pass came to ``exact`` (a complete pass), per prefix: ``memory``
        ± ``memory ±`` beside ``memory exact``, and ``within ±`` (NA where the sample gave no
        interval). About one prefix in twenty is expected outside a 95% interval."""
        import pandas as pd

        compare = self.by_prefix.merge(exact.by_prefix[["prefix", "memory"]], on="prefix", how="left",
                                       suffixes=("", " exact"))
        within = (compare["memory"] - compare["memory exact"]).abs() <= compare["memory ±"]
        gaps = compare[["memory", "memory ±", "memory exact"]].isna().any(axis=1)
        compare["within ±"] = pd.array(within.where(~gaps, None), dtype="boolean")
        shown = compare[["prefix", "keys", "sampled", "memory", "memory ±", "memory exact", "within ±"]]
        return mark(shown.copy(), **{"within ±": "yes/no"})

    def frames(self) -> dict[str, pd.DataFrame]:
        return {"by_prefix": self.by_prefix, "by_type": self.by_type, "ttl": self.ttl,
                "no_expiry": self.no_expiry, "biggest": self.biggest, "warnings": self.warnings}


__all__ = ["KeyspaceReport"]
