"""The Host header: a request that names another site (a DNS-rebinding page) is refused on every route
of every area; the names the sandbox serves, and the names added with ``allowed_hosts`` /
``--allowed-host``, are served."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from svckit.cli import build_parser, sandbox_from_args
from svckit.sandbox import Sandbox
from tests.conftest import running

ADDED = "sandbox.internal.test"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("hosts"), backend="fakeredis", allowed_hosts=[ADDED]) as sb:
        yield sb


def _routes(sb: Sandbox) -> list[tuple[str, str, dict[str, str]]]:
    """(method, URL, headers) of a route of every kind: no auth, and each area with its credentials."""
    env = sb.env
    bearer = {"Authorization": f"Bearer {env['SVC_KV_TOKEN']}"}
    return [
        ("GET", f"{sb.url}/health", {}),
        ("GET", f"{sb.url}/openapi.json", {}),
        ("POST", f"{env['SVC_KV_URL']}/ping", bearer),
        ("GET", f"{env['SVC_VECTOR_URL']}/info", {"Authorization": f"Bearer {env['SVC_VECTOR_TOKEN']}"}),
        ("GET", f"{env['SVC_DEVAPI_URL']}/redis/databases", {}),
        ("GET", f"{env['SVC_QUEUE_URL']}/v2/queues", {"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}),
    ]


@pytest.mark.parametrize("host", ["rebind.attacker.example", "rebind.attacker.example:{port}", "127.0.0.1.nip.io",
                                  "localhost.attacker.example:{port}", "[::2]:{port}", "not a host"])
def test_a_host_the_sandbox_does_not_serve_is_refused_on_every_route(sandbox: Sandbox, host: str) -> None:
    forged = host.format(port=sandbox.port)
    with httpx.Client(timeout=30) as http:
        for method, url, headers in _routes(sandbox):
            answer = http.request(method, url, headers={**headers, "Host": forged})
            assert answer.status_code == 400, (url, answer.status_code, answer.text[:200])
            error = answer.json()["error"]
            assert answer.json()["status"] == 400
            assert f"Host {forged!r} is not a name this sandbox serves" in error
            assert "--allowed-host NAME" in error and "allowed_hosts=" in error


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "127.0.0.1", "LOCALHOST",
                                  "localhost.:{port}", "localhost:1", ADDED, f"{ADDED}:{{port}}"])
def test_the_names_the_sandbox_serves_and_the_added_ones_are_served(sandbox: Sandbox, host: str) -> None:
    """Any port: a forwarded port (ssh -L, a container's mapping) is the same server."""
    name = host.format(port=sandbox.port)
    with httpx.Client(timeout=30) as http:
        answers = [http.request(method, url, headers={**headers, "Host": name})
                   for method, url, headers in _routes(sandbox)]
    health, openapi, kv, vector, devapi, queue = answers
    assert health.status_code == 200 and health.json()["areas"]
    assert openapi.status_code == 200 and openapi.json()["openapi"]
    assert kv.json() == {"result": "PONG"}
    assert vector.status_code == 200 and "vectorCount" in vector.json()["result"]
    assert devapi.status_code == 401  # served by the area: it asks for its credentials
    assert queue.status_code == 200, queue.text


def test_allowed_host_is_a_repeatable_flag_and_a_bad_name_stops_the_start(tmp_path) -> None:
    args = build_parser().parse_args(["sandbox", "--allowed-host", "a.test", "--allowed-host", "[::5]"])
    assert sandbox_from_args(args).options.allowed_hosts == ("a.test", "[::5]")
    assert sandbox_from_args(build_parser().parse_args(["sandbox"])).options.allowed_hosts == ()
    with pytest.raises(ValueError, match=r"allowed_hosts: 'a\.test/x' is not a host name or address"):
        Sandbox(tmp_path / "data", areas=["account"], allowed_hosts=["a.test/x"]).start()
    assert not (tmp_path / "data").exists()  # refused before anything is made there
