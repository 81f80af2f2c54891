"""When a failed delivery is tried again (sans I/O).

- The default backoff (the vendor's docs, "Retry"): ``min(86400, e ** (2.5 * n))`` seconds before the
  n-th retry, n from 1: 12 s, 2 min 28 s, 30 min 8 s, 6 h 7 min, then a day.
- ``Upstash-Retry-Delay``: an expression of ``retried`` (the retries made so far, 0 before the first)
  giving milliseconds, with ``pow sqrt abs exp floor ceil round min max``: ``1000 * (1 + retried)``.
  It is evaluated by simpleeval (no names, attributes or calls beyond these), never by Python's eval.
- The destination may say when: ``Retry-After`` (or ``X-RateLimit-Reset``, ``-Requests``, ``-Tokens``)
  in seconds, as an HTTP date or as a Go duration (``6m5s``); a day at most, else the backoff applies.

Every delay is capped at a day (:data:`MAX_DELAY`).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from simpleeval import InvalidExpression, NumberTooHigh, SimpleEval

MAX_DELAY = 86400.0
#: response headers a destination may tell its next attempt's time with, in the order they are read
RETRY_AFTER_HEADERS = ("retry-after", "x-ratelimit-reset", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
_FUNCTIONS = {"pow": math.pow, "sqrt": math.sqrt, "abs": abs, "exp": math.exp, "floor": math.floor,
              "ceil": math.ceil, "round": round, "min": min, "max": max}
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")


def default_backoff(retry: int) -> float:
    """Seconds before retry number ``retry`` (1 for the first) by the default policy."""
    return min(MAX_DELAY, math.exp(2.5 * retry))


def _evaluate(expression: str, retried: int) -> float:
    value = SimpleEval(functions=_FUNCTIONS, names={"retried": retried}).eval(expression)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"it gives {value!r}, not a number of milliseconds")
    return float(value)


def retry_delay_problem(expression: str) -> str | None:
    """Why ``expression`` is not a usable ``Upstash-Retry-Delay`` (it must give a number of
    milliseconds for the first retries), or None."""
    try:
        for retried in (0, 1, 2):
            _evaluate(expression, retried)
    except NumberTooHigh:
        return None  # a large value: capped at a day when it is used
    except (InvalidExpression, ValueError, TypeError, ArithmeticError, SyntaxError) as exc:
        return (f"{expression!r} is not an expression of `retried` giving milliseconds ({exc}); use numbers, "
                "+ - * /, pow sqrt abs exp floor ceil round min max, e.g. 1000 * (1 + retried)")
    return None


def retry_delay(expression: str | None, retried: int) -> float:
    """Seconds before the next attempt, ``retried`` retries having been made: the message's
    ``Upstash-Retry-Delay`` expression when it has one, else the default backoff."""
    if expression is None:
        return default_backoff(retried + 1)
    try:
        return min(MAX_DELAY, _evaluate(expression, retried) / 1000)
    except NumberTooHigh:
        return MAX_DELAY
    except (InvalidExpression, ValueError, TypeError, ArithmeticError):  # checked at publish; a later n may fail
        return default_backoff(retried + 1)


def asked_delay(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the destination's response asks to wait before the next attempt (headers by lower-case
    name), or None: none given, not readable, or over a day."""
    now = time.time() if now is None else now
    for name in RETRY_AFTER_HEADERS:
        raw = headers.get(name)
        if raw is None or not raw.strip():
            continue
        seconds = _when(raw.strip(), now)
        if seconds is not None and 0 <= seconds <= MAX_DELAY:
            return seconds
        return None
    return None


def _when(raw: str, now: float) -> float | None:
    try:
        return float(raw)
    except ValueError:
        pass
    parts = _GO_DURATION.findall(raw)
    if parts and "".join(n + u for n, u in parts) == raw:
        return sum(float(n) * _GO_UNITS[u] for n, u in parts)
    try:
        return parsedate_to_datetime(raw).timestamp() - now
    except (TypeError, ValueError, IndexError):
        return None
