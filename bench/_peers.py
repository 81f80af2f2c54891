"""The connection pools issue 21 weighed against svckit's own (aiohttp's for asyncio, urllib3's for
threads), for the benches to run svckit's clients over them in the same run (``transport=``):
httpx's default (httpcore), httpx-aiohttp and pyreqwest. The last two come with
``pip install -e ".[bench]"``; a pool whose package is missing is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

Factory = Callable[[], Any]


def other_pools() -> dict[str, tuple[Factory | None, Factory | None]]:
    """name -> (sync transport factory, async transport factory); None where the pool has no such side."""
    pools: dict[str, tuple[Factory | None, Factory | None]] = {
        "httpcore": (httpx.HTTPTransport, httpx.AsyncHTTPTransport)}
    try:
        from httpx_aiohttp import AiohttpTransport

        pools["httpx-aiohttp"] = (None, AiohttpTransport)
    except ImportError:
        pass
    try:
        from pyreqwest.compatibility.httpx import HttpxTransport, SyncHttpxTransport

        pools["pyreqwest"] = (SyncHttpxTransport, HttpxTransport)
    except ImportError:
        pass
    return pools
