"""Decoding a large reply with Python's cyclic garbage collector paused.

A page of 10,000 vector records becomes 10,000 pydantic models, and each model is three objects the
collector tracks (the model, its ``__dict__``, its fields set), beside the 10,000 parsed JSON objects
they are made of. Every 700 such allocations start a collection, and each one finds nothing to free:
every new object is reachable from the page being built. Worse, the survivors count towards a full
collection of the whole process, so most 10,000-record pages set one off in the middle of decoding:
in a process as large as a notebook's, 50-100 ms, more than the decoding itself and more than a
40 ms round trip (upstash-vector, whose records are one tracked object each, rarely triggers one).

While paused, what a decode allocates and drops again (the parsed JSON; the models too, when the
caller turns them into a DataFrame) is freed by reference counting and never scanned; what the
caller keeps is collected later on the usual schedule. The pause nests across threads (eight
batches of a fetch decode side by side) and is lifted when the last decode ends, and only if the
collector was running when the first one began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # decodes under way
_resume = False  # whether the collector ran when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (see the module docs)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
