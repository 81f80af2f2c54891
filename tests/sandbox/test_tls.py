"""The sandbox over https (``Sandbox(tls=True)``, ``svckit sandbox --tls``) and the clients on it.

One sandbox with every area serves real TLS on 127.0.0.1 for the module. The key-value, vector,
account and queue clients reach it trusting its CA by ``verify=``, by SVC_CA_FILE (``connect``,
``from_env``) and by SSL_CERT_FILE / SSL_CERT_DIR (both pools: urllib3's for KV, aiohttp's for
AsyncKV); an explicit ``verify=`` wins over each of them; and a client that does not trust the CA
gets one error, at once, saying how to trust it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trustme

from svckit import connect
from svckit._http import RetryPolicy, SyncTransport
from svckit.account import Account
from svckit.config import Settings
from svckit.errors import InvalidArgument, UntrustedCertificate
from svckit.kv import KV, AsyncKV
from svckit.queue import Queue
from svckit.sandbox import Sandbox
from svckit.vector import Vector
from tests.conftest import cli_sandbox, lines_until, running

#: the dense index's dimension (the packaged all-MiniLM-L6-v2)
DIMENSION = 384


@pytest.fixture(scope="module")
def sb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("tls"), tls=True, backend="fakeredis") as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def ca(sb: Sandbox) -> str:
    return sb.env["SVC_CA_FILE"]


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A CA that signed nothing the sandbox presents."""
    path = tmp_path_factory.mktemp("other-ca") / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture(autouse=True)
def no_trust_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a test trusts is what it sets: none of the machine's TLS or SVC_* variables."""
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", *(n for n in os.environ if n.startswith("SVC_"))):
        monkeypatch.delenv(name, raising=False)


def kv_of(sb: Sandbox, **options) -> KV[str]:
    return KV(sb.env["SVC_KV_URL"], sb.env["SVC_KV_TOKEN"], **options)


def akv_of(sb: Sandbox, **options) -> AsyncKV[str]:
    return AsyncKV(sb.env["SVC_KV_URL"], sb.env["SVC_KV_TOKEN"], **options)


# -- the sandbox ----------------------------------------------------------------------------------
def test_a_tls_sandbox_serves_https_and_names_its_ca_first(sb: Sandbox, ca: str) -> None:
    assert sb.url.startswith("https://127.0.0.1:")
    assert list(sb.env)[0] == "SVC_CA_FILE" and Path(ca) == sb.data_dir / "ca.pem"
    urls = [value for name, value in sb.env.items() if name.endswith("_URL")]
    assert len(urls) == 7 and all(url.startswith(sb.url + "/") for url in urls)
    assert Path(ca).read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert stat.S_IMODE(Path(ca).stat().st_mode) == 0o600
    assert sb.settings.ca_file == ca


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "::1"])
def test_the_certificate_names_every_loopback_name(sb: Sandbox, ca: str, name: str) -> None:
    context = ssl.create_default_context(cafile=ca)  # checks the name against the certificate's
    with socket.create_connection(("127.0.0.1", sb.port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=name) as tls:
        assert tls.version() in ("TLSv1.2", "TLSv1.3")


def test_the_server_key_is_never_left_on_disk(sb: Sandbox) -> None:
    files = [path for path in sb.data_dir.rglob("*") if path.is_file()]
    assert files and not [path for path in files if b"PRIVATE KEY" in path.read_bytes()]


def test_a_sandbox_without_tls_is_unchanged(tmp_path: Path) -> None:
    with running(tmp_path, areas=["kv"], backend="fakeredis") as plain:
        assert plain.url.startswith("http://127.0.0.1:") and "SVC_CA_FILE" not in plain.env
        assert plain.settings.ca_file is None and not (tmp_path / "ca.pem").exists()
        with KV.from_settings(plain.settings) as kv:
            assert kv.ping()


# -- every client over https, trusting the CA by verify= ----------------------------------------
def test_kv_over_https(sb: Sandbox, ca: str) -> None:
    with kv_of(sb, verify=ca) as kv:
        kv.set("tls:greeting", "hello")
        assert kv.get("tls:greeting") == "hello"
        assert kv.pipeline().incr("tls:n").incr("tls:n").get("tls:greeting").exec() == [1, 2, "hello"]


def test_a_kv_event_stream_over_https(sb: Sandbox, ca: str) -> None:
    """Streams go through httpx's own transport, not the pools: it trusts the same CA."""
    with kv_of(sb, verify=ca) as kv, kv.monitor() as monitor:
        kv.set("tls:watched", "x")
        assert next(e for e in monitor if e.command.upper() == "SET").args == ["tls:watched", "x"]


async def test_async_kv_over_https(sb: Sandbox, ca: str) -> None:
    async with akv_of(sb, verify=ca) as kv:
        await kv.set("tls:async", "v")
        assert await kv.get("tls:async") == "v"
        assert await kv.pipeline().incr("tls:an").get("tls:async").exec() == [1, "v"]


def test_vector_over_https(sb: Sandbox, ca: str) -> None:
    with Vector(sb.env["SVC_VECTOR_URL"], sb.env["SVC_VECTOR_TOKEN"], verify=ca, timeout=60.0) as index:
        index.upsert({"id": "tls", "vector": [0.5] * DIMENSION, "metadata": {"over": "https"}})
        [record] = index.fetch("tls")
        assert record is not None and record.metadata == {"over": "https"}
        assert [match.id for match in index.query([0.5] * DIMENSION, top_k=1)] == ["tls"]


def test_queue_and_account_over_https(sb: Sandbox, ca: str) -> None:
    env = sb.env
    credentials = env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"]
    with Queue(env["SVC_QUEUE_URL"], env["SVC_QUEUE_TOKEN"], verify=ca) as queue, \
            Account(env["SVC_DEVAPI_URL"], *credentials, verify=ca) as account:
        assert queue.workflow_logs().runs == [] and queue.dlq().messages == []
        assert account.queue_account().token.get_secret_value() == env["SVC_QUEUE_TOKEN"]


# -- SVC_CA_FILE: connect() and from_env() ------------------------------------------------------
def test_connect_trusts_svc_ca_file(sb: Sandbox) -> None:
    with connect(sb.env) as clients:
        clients.kv.set("tls:connect", "1")
        assert clients.kv.get("tls:connect") == "1"
        assert clients.vector.info().dimension == DIMENSION
        assert clients.queue.dlq().messages == [] and clients.account.queue_account().max_retries


async def test_from_env_trusts_svc_ca_file(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in sb.env.items():
        monkeypatch.setenv(name, value)
    with KV.from_env() as kv, Vector.from_env() as index, Queue.from_env() as queue, \
            Account.from_env() as account:
        assert kv.ping() and index.info().dimension == DIMENSION
        assert queue.workflow_logs().runs == [] and account.queue_account().max_retries
    async with AsyncKV.from_env() as akv:
        assert await akv.ping()


def test_an_explicit_verify_wins_over_svc_ca_file(sb: Sandbox, other_ca: str) -> None:
    assert Settings(ca_file="ca.pem").client_options({"timeout": 1}) == {"timeout": 1, "verify": "ca.pem"}
    assert Settings(ca_file="ca.pem").client_options({"verify": False}) == {"verify": False}
    assert Settings().client_options({}) == {}
    with connect(sb.env, verify=other_ca) as clients, pytest.raises(UntrustedCertificate):
        clients.kv.ping()


# -- SSL_CERT_FILE / SSL_CERT_DIR (httpx's trust_env), in both pools ------------------------------
def hashed_dir(ca: str, where: Path) -> str:
    """A directory OpenSSL searches (SSL_CERT_DIR): the CA under its subject hash."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl not installed (it names the CA by its subject hash)")
    digest = subprocess.run([openssl, "x509", "-hash", "-noout", "-in", ca], capture_output=True, text=True,
                            check=True).stdout.strip()
    shutil.copy(ca, where / f"{digest}.0")
    return str(where)


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "SSL_CERT_DIR"])
async def test_both_pools_trust_ssl_cert_file_and_dir(sb: Sandbox, ca: str, variable: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(variable, ca if variable == "SSL_CERT_FILE" else hashed_dir(ca, tmp_path))
    with kv_of(sb) as kv:
        assert kv.ping()
    async with akv_of(sb) as akv:
        assert await akv.ping()


async def test_an_explicit_verify_wins_over_ssl_cert_file(sb: Sandbox, ca: str, other_ca: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", other_ca)
    with kv_of(sb, verify=ca) as kv:
        assert kv.ping()
    async with akv_of(sb, verify=ca) as akv:
        assert await akv.ping()
    monkeypatch.setenv("SSL_CERT_FILE", ca)
    with kv_of(sb, verify=other_ca) as kv, pytest.raises(UntrustedCertificate):
        kv.ping()
    async with akv_of(sb, verify=other_ca) as akv:
        with pytest.raises(UntrustedCertificate):
            await akv.ping()


# -- a CA the client does not trust -------------------------------------------------------------
async def test_an_untrusted_certificate_says_how_to_trust_it(sb: Sandbox) -> None:
    errors = []
    with kv_of(sb) as kv:  # certifi's roots
        for attempt in (kv.ping, kv.monitor):  # the pool's path, and httpx's own (streams)
            with pytest.raises(UntrustedCertificate) as info:
                attempt()
            errors.append(info.value)
    async with akv_of(sb) as akv:
        with pytest.raises(UntrustedCertificate) as info:
            await akv.ping()
        errors.append(info.value)
    for error in errors:
        message = str(error)
        assert "CERTIFICATE_VERIFY_FAILED" in message and sb.url in message
        assert "verify=" in message and "SVC_CA_FILE" in message and "svckit sandbox --tls" in message
        assert sb.env["SVC_KV_TOKEN"] not in message


async def test_an_untrusted_certificate_is_not_retried(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every handshake meets the same certificate: a retry would only wait."""
    waits: list[int] = []

    def delay(self: RetryPolicy, attempt: int) -> float:
        waits.append(attempt)
        return 0.0

    monkeypatch.setattr(RetryPolicy, "delay", delay)
    with kv_of(sb, retry=RetryPolicy(attempts=5)) as kv, pytest.raises(UntrustedCertificate):
        kv.ping()
    async with akv_of(sb, retry=RetryPolicy(attempts=5)) as akv:
        with pytest.raises(UntrustedCertificate):
            await akv.ping()
    assert waits == []


def test_a_ca_bundle_that_cannot_be_loaded_is_named(sb: Sandbox, ca: str, tmp_path: Path) -> None:
    (tmp_path / "empty.pem").write_text("")
    for bundle in (tmp_path / "missing.pem", tmp_path / "empty.pem"):
        with pytest.raises(InvalidArgument, match=r"^verify: cannot load the CA bundle .*SVC_CA_FILE"):
            SyncTransport(sb.url, verify=str(bundle))
    with warnings.catch_warnings():  # a path, which httpx deprecates, is taken without its warning
        warnings.simplefilter("error")
        SyncTransport(sb.url, verify=ca).close()


# -- the command line -----------------------------------------------------------------------------
def test_svckit_sandbox_tls_prints_its_ca_file_and_https_urls(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc = cli_sandbox("--tls", "--data-dir", str(data), "--areas", "kv", "--backend", "fakeredis")
    try:
        lines = lines_until(proc, "SVC_KV_READONLY_TOKEN=")
        settings = Settings.from_lines(lines)
        assert lines[0] == f"SVC_CA_FILE={data.resolve() / 'ca.pem'}\n"
        assert settings.kv_url and settings.kv_url.startswith("https://127.0.0.1:")
        trust = ssl.create_default_context(cafile=settings.ca_file)
        reply = httpx.get(f"{settings.kv_url}/PING", headers={"Authorization": f"Bearer {settings.kv_token}"},
                          verify=trust, timeout=10)
        assert reply.json() == {"result": "PONG"}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
