"""The OpenAPI document cannot drift from the app: every route mounted in the sandbox's Starlette app
is described, every described path is served, and the sandbox serves the document without auth."""

from __future__ import annotations

import re

import httpx
import pytest
from starlette.routing import Mount, Route

from svckit.sandbox import openapi
from svckit.sandbox.area import Credentials, SandboxContext
from svckit.sandbox.kv.gateway import ALLOWED_METHODS, Gateway
from svckit.sandbox.options import SandboxOptions
from svckit.sandbox.server import ALL_AREAS, build_app, load_areas

_PARAM = re.compile(r"^\{[^}]+\}$")


def _segments(path: str) -> list[str]:
    return path.strip("/").split("/") if path.strip("/") else []


def _covers(template: str, concrete_template: str) -> bool:
    """True if the route ``template`` (Starlette syntax, may end in ``{x:path}``) serves the document
    path ``concrete_template`` (OpenAPI syntax). A route's ``{param}`` matches any one segment."""
    route, doc = _segments(template), _segments(concrete_template)
    for i, part in enumerate(route):
        if part.endswith(":path}"):
            return len(doc) > i
        if i >= len(doc):
            return False
        if not _PARAM.match(part) and part != doc[i]:
            return False
    return len(route) == len(doc)


def _mounted_routes(tmp_path) -> list[tuple[str, set[str]]]:
    """(full path, methods) of every Starlette route of the app, areas included (through their
    mounts and any middleware that wraps an area's router)."""
    ctx = SandboxContext(tmp_path, Credentials.load_or_create(tmp_path), SandboxOptions(backend="fakeredis"))
    app = build_app(load_areas(ctx, ALL_AREAS))
    found: list[tuple[str, set[str]]] = []

    def walk(routes, prefix: str) -> None:
        for route in routes:
            if isinstance(route, Route):
                found.append((prefix + route.path, set(route.methods or ()) - {"HEAD"} or {"GET"}))
            elif isinstance(route, Mount):
                inner = route.app
                while not hasattr(inner, "routes") and hasattr(inner, "app"):  # AuthGate and friends
                    inner = inner.app
                if isinstance(inner, Gateway):
                    found.append((prefix + route.path, set(ALLOWED_METHODS)))
                elif hasattr(inner, "routes"):
                    walk(inner.routes, prefix + route.path)
                else:
                    raise AssertionError(f"cannot see the routes under {prefix + route.path}: {inner!r}")

    walk(app.routes, "")
    return found


#: routes that accept a method only to refuse it with a 405 and the error body (the vector area routes
#: every operation through one handler); checked against the live sandbox below.
REFUSED_WITH_405 = {("GET", "/vector/{index}/{operation}/{namespace}")}


@pytest.fixture(scope="module")
def mounted(tmp_path_factory):
    return _mounted_routes(tmp_path_factory.mktemp("routes"))


def _described() -> dict[str, set[str]]:
    return {path: {m.upper() for m in item} for path, item in openapi.document()["paths"].items()}


def test_every_mounted_route_is_in_the_document(mounted):
    described = _described()
    for path, methods in mounted:
        if path.endswith("/") and path != "/kv/" and path.rstrip("/") in [p for p, _ in mounted]:
            continue  # the trailing-slash alias of a route (same handler, empty namespace)
        if path == "/kv":  # the gateway routes by raw path: its shapes are the /kv/... entries
            kv_methods = set().union(*(m for p, m in described.items() if p.startswith("/kv/{command}")))
            assert kv_methods == methods, "methods of the key-value gateway"
            assert {"/kv/", "/kv/pipeline", "/kv/multi-exec", "/kv/monitor", "/kv/subscribe/{channel}",
                    "/kv/publish/{channel}/{message}"} <= set(described)
            continue
        matching = [doc for doc in described if _covers(path, doc)]
        assert matching, f"{path} is served but not in the OpenAPI document"
        for method in methods:
            if (method, re.sub(r"\{(\w+):\w+\}", r"{\1}", path)) in REFUSED_WITH_405:  # {x:path} -> {x}
                continue
            assert any(method in described[doc] for doc in matching), f"{method} {path} is not described"


def test_every_described_path_is_served(mounted):
    for doc_path, methods in _described().items():
        if doc_path.startswith("/kv/"):
            assert any(p == "/kv" for p, _ in mounted)
            continue
        serving = [(p, m) for p, m in mounted if _covers(p, doc_path)]
        assert serving, f"{doc_path} is described but no route serves it"
        for method in methods:
            assert any(method in m for _, m in serving), f"{method} {doc_path} is described but not served"


def test_the_document_is_valid_openapi_3():
    from openapi_spec_validator import validate

    validate(openapi.document())


def test_the_sandbox_serves_the_document_without_auth(guarded):
    response = httpx.get(guarded.url + openapi.OPENAPI_PATH, timeout=10)
    assert response.status_code == 200
    assert response.json() == openapi.document()
    assert set(response.json()["components"]["securitySchemes"]) == {
        "kvBearer", "kvQueryToken", "vectorBearer", "devapiBasic", "queueBearer"}


def test_undescribed_methods_are_refused_with_405(guarded):
    for method, path in REFUSED_WITH_405:
        concrete = path.replace("{index}", "dense").replace("{operation}", "query-data").replace("{namespace}", "ns")
        response = guarded.http.request(method, guarded.url + concrete, headers=guarded.auth("vector"))
        assert response.status_code == 405
        assert response.json() == {"error": "query-data takes POST", "status": 405}
