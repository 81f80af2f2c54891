"""The estimates of a sampled keyspace pass (:func:`svckit.kv.analyze_keyspace`) and their error.

The estimates and their error (sampled pass; sampling fraction ``f = n / N``):

* memory of a prefix with ``K`` keys (exact), ``k`` of them sampled, mean ``m`` and sample variance
  ``s²`` of their MEMORY USAGE: ``K · m``, standard error ``K · sqrt((1 - k/K) · s² / k)``;
* key count of a type or a TTL bucket from the sample share ``p``: ``N · p``, standard error
  ``N · sqrt((1 - f) · p (1 - p) / (n - 1))``; memory of a type: ``N · ȳ`` with ``y`` a key's memory
  when it has that type, else 0, standard error ``N · sqrt((1 - f) · s_y² / n)``;
* every ``±`` is the half-width of a normal 95% interval (1.96 standard errors). A prefix with fewer
  than 2 sampled keys has no stated error (``±`` is NA), one with none has no memory estimate.

The sample has two strata: the keys of small prefixes (at most :data:`SMALL_PREFIX` keys of their
own), described whole while they are at most :data:`WHOLE_SHARE` of the sample, and a simple random
sample of the other keys. The formulas above apply to the random stratum (``N`` and ``n`` its own);
each figure adds the whole stratum's exact part, which has no error. A normal interval assumes the
sample saw the spread of the values: one big value alone in its prefix (a report, a backlog) breaks
that when missed, which is why such prefixes are described whole.
"""

from __future__ import annotations

import math

#: z of a two-sided normal 95% interval
Z95 = 1.959963984540054
#: a prefix holding at most this many keys of its own is described whole in a sampled pass
SMALL_PREFIX = 5
#: the small prefixes' keys take at most this share of the sample (none, if they are more)
WHOLE_SHARE = 0.1


class Stats:
    """count, memory sum and memory sum of squares of a group of described keys."""

    __slots__ = ("count", "mem", "mem2")

    def __init__(self) -> None:
        self.count = 0
        self.mem = 0.0
        self.mem2 = 0.0

    def add(self, memory: int) -> None:
        self.count += 1
        self.mem += memory
        self.mem2 += float(memory) * memory


def domain_estimate(total_keys: int, stats: Stats | None, exact: bool) -> tuple[float, float]:
    """Memory total of a group whose key count is known (``total_keys``) from its sampled keys:
    (estimate, 95% half-width); NaN where the sample cannot say."""
    if stats is None or stats.count == 0:
        return (0.0, 0.0) if exact or total_keys == 0 else (math.nan, math.nan)
    if exact or stats.count >= total_keys:  # every key of the group was sampled
        return stats.mem, 0.0
    k = stats.count
    mean = stats.mem / k
    estimate = total_keys * mean
    if k < 2:
        return estimate, math.nan
    var = max(stats.mem2 - k * mean * mean, 0.0) / (k - 1)
    fpc = max(1.0 - k / total_keys, 0.0) if total_keys else 0.0
    return estimate, Z95 * total_keys * math.sqrt(fpc * var / k)


def share_estimate(population: int, n: int, count: int, exact: bool) -> tuple[float, float]:
    """Number of keys in a category from its count in the sample: (estimate, 95% half-width)."""
    if exact or n == 0:
        return float(count), 0.0
    p = count / n
    fpc = max(1.0 - n / population, 0.0) if population else 0.0
    se = population * math.sqrt(fpc * p * (1 - p) / (n - 1)) if n > 1 else math.nan
    return population * p, Z95 * se


def total_estimate(population: int, n: int, stats: Stats | None, exact: bool) -> tuple[float, float]:
    """Memory of a category (zero for keys outside it) from the sample: (estimate, 95% half-width)."""
    if stats is None:
        return 0.0, 0.0
    if exact or n == 0:
        return stats.mem, 0.0
    mean = stats.mem / n
    var = max(stats.mem2 - n * mean * mean, 0.0) / (n - 1) if n > 1 else math.nan
    fpc = max(1.0 - n / population, 0.0) if population else 0.0
    return population * mean, Z95 * population * math.sqrt(fpc * var / n)


__all__ = ["SMALL_PREFIX", "WHOLE_SHARE", "Z95", "Stats", "domain_estimate", "share_estimate", "total_estimate"]
