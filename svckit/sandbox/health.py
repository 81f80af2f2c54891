"""``GET /health``: what each area depends on, checked now (no auth; it shows no secret).

    {"ok": false, "areas": {"kv": [{"check": "redis", "ok": false, "detail": "restarting: ..."}],
                            "queue": [{"check": "sqlite", "ok": true, "detail": "..."}]}}

The status is 200 when every check passed and 503 otherwise, so a monitor can read the status alone;
``svckit doctor --sandbox URL`` prints the checks (svckit/doctor.py). Every area's checks run at the
same time, each bounded by ``CHECK_TIMEOUT``: an area that does not answer in time, or whose check
raised, reports that as a failed check rather than holding the answer up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.sandbox.area import Area, Health

PATH = "/health"
CHECK_TIMEOUT = 3.0


async def _checks(area: Area) -> list[Health]:
    name = type(area).__name__
    try:
        return await asyncio.wait_for(area.health(), CHECK_TIMEOUT)
    except TimeoutError:
        return [Health("area", False, f"{name} did not answer its health check within {CHECK_TIMEOUT:g} s")]
    except Exception as exc:  # noqa: BLE001 - any failure of a check is what the check reports
        return [Health("area", False, f"{name}'s health check failed: {type(exc).__name__}: {exc}")]


async def report(areas: Sequence[Area]) -> dict[str, Any]:
    """Every area's checks, keyed by the first word of its prefix (``kv``, ``vector``, ``devapi``, ``queue``)."""
    results = await asyncio.gather(*(_checks(area) for area in areas))
    by_area = {area.prefix.strip("/").partition("/")[0]: [asdict(h) for h in checks]
               for area, checks in zip(areas, results)}
    return {"ok": all(h["ok"] for checks in by_area.values() for h in checks), "areas": by_area}


def route(areas: Sequence[Area]) -> Route:
    async def endpoint(request: Request) -> JSONResponse:
        body = await report(areas)
        return JSONResponse(body, status_code=200 if body["ok"] else 503, headers={"Cache-Control": "no-store"})

    return Route(PATH, endpoint, methods=["GET"])
