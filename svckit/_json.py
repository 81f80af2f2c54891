"""JSON on the wire, through orjson: several times faster than the standard library on the
pipeline-sized bodies that dominate a client's (and the gateway's) CPU time per command.

``loads`` raises a ``ValueError`` subclass on bad input (with a recursion limit of its own), as
``json.loads`` does, so callers catch ``ValueError``.
"""

from __future__ import annotations

from typing import Any

import orjson

JSON_HEADERS = {"Content-Type": "application/json"}


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON (non-ASCII kept as is)."""
    return orjson.dumps(obj)


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)
