"""The sandbox's key-value rules over real HTTP, as a client sees them: what the Read Only token may
run, which commands the REST interface refuses, how a transaction is discarded (and that nothing of
it ran), the request size and the daily request limit. Each answer is checked to the error body."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import running

LIMIT = 12  # the daily request limit of the ``limited`` sandbox
MAX_SIZE = 200  # its request size limit, bytes


class Client:
    def __init__(self, env: dict[str, str]) -> None:
        self.url, self.token, self.readonly = env["SVC_KV_URL"], env["SVC_KV_TOKEN"], env["SVC_KV_READONLY_TOKEN"]
        self.http = httpx.Client(timeout=30)

    def post(self, path: str, rows, *, readonly: bool = False) -> httpx.Response:
        token = self.readonly if readonly else self.token
        return self.http.post(self.url + path, json=rows, headers={"Authorization": f"Bearer {token}"})

    def run(self, *argv: str, readonly: bool = False) -> httpx.Response:
        return self.post("/", list(argv), readonly=readonly)

    def path(self, *argv: str) -> httpx.Response:
        """The command in the URL's path: no body, so only the command's own size counts."""
        return self.http.get(f"{self.url}/{'/'.join(argv)}", headers={"Authorization": f"Bearer {self.token}"})


@pytest.fixture(scope="module")
def kv(tmp_path_factory) -> Iterator[Client]:
    with running(tmp_path_factory.mktemp("kv-rules"), areas=["kv"], backend="fakeredis") as sandbox:
        client = Client(sandbox.env)
        yield client
        client.http.close()


@pytest.fixture
def limited(tmp_path) -> Iterator[Client]:
    with running(tmp_path / "data", areas=["kv"], backend="fakeredis", kv_daily_request_limit=LIMIT,
                 kv_max_request_size=MAX_SIZE) as sandbox:
        client = Client(sandbox.env)
        yield client
        client.http.close()


def key() -> str:
    return f"k:{uuid.uuid4().hex[:10]}"


def refused(r: httpx.Response, error: str, status: int = 400) -> None:
    assert (r.status_code, r.json()) == (status, {"error": error})


# -- the Read Only token -------------------------------------------------------------------------
def test_the_readonly_token_reads(kv):
    k = key()
    kv.run("SET", k, "v")
    assert kv.run("GET", k, readonly=True).json() == {"result": "v"}
    assert kv.run("get", k, readonly=True).json() == {"result": "v"}  # any case
    assert kv.run("EXISTS", k, readonly=True).json() == {"result": 1}


@pytest.mark.parametrize("command", [["SET", "x", "1"], ["del", "x"], ["INCR", "x"], ["FLUSHALL"]])
def test_the_readonly_token_may_not_write(kv, command):
    name = command[0].lower()
    refused(kv.run(*command, readonly=True),
            f"NOPERM this user has no permissions to run the '{name}' command (read-only token)")


def test_the_readonly_token_may_not_run_a_command_the_table_does_not_know(kv):
    refused(kv.run("MYMODULE.DO", "x", readonly=True),
            "NOPERM this user has no permissions to run the 'mymodule.do' command (read-only token)")


@pytest.mark.parametrize("name", ["SCAN", "keys"])
def test_the_readonly_token_may_not_list_keys(kv, name):
    refused(kv.run(name, "0" if name == "SCAN" else "*", readonly=True),
            f"NOPERM the read-only token may not run '{name.lower()}'")
    assert kv.run(name, "0" if name == "SCAN" else "*").status_code == 200  # the Standard token may


def test_the_readonly_token_in_a_pipeline_refuses_only_the_writes(kv):
    k = key()
    r = kv.post("/pipeline", [["SET", k, "v"], ["GET", k]], readonly=True)
    assert r.status_code == 200 and r.json() == [
        {"error": "NOPERM this user has no permissions to run the 'set' command (read-only token)"},
        {"result": None}]


# -- commands the REST interface refuses -----------------------------------------------------------
def test_a_blocking_command_is_not_available(kv):
    refused(kv.run("BLPOP", "x", "0"),
            "ERR Command is not available: 'BLPOP' (blocking commands cannot be served over REST)")
    refused(kv.run("blpop", "x", "0", readonly=True),
            "ERR Command is not available: 'BLPOP' (blocking commands cannot be served over REST)")


@pytest.mark.parametrize("name", ["XREAD", "xreadgroup"])
def test_a_stream_read_that_blocks_is_not_available(kv, name):
    args = ["GROUP", "g", "c"] if name == "xreadgroup" else []
    refused(kv.run(name, *args, "block", "0", "STREAMS", "s", ">"),
            f"ERR Command is not available: '{name.upper()} ... BLOCK' (blocking commands cannot be served "
            f"over REST)")


def test_a_stream_read_that_does_not_block_runs(kv):
    k = key()
    kv.run("XADD", k, "*", "f", "v")
    r = kv.run("XREAD", "COUNT", "1", "STREAMS", k, "0")
    assert r.status_code == 200 and r.json()["result"][0][0] == k


def test_a_command_name_with_a_space_is_unknown(kv):
    refused(kv.run("GET k"), "ERR unknown command 'GET k'")
    refused(kv.run(" "), "ERR unknown command ' '")


def test_config_rewrite_is_refused(kv):
    refused(kv.run("CONFIG", "REWRITE"), "NOPERM this command reaches the host or the network and the sandbox "
                                         "refuses it: CONFIG REWRITE writes the server's configuration file")


# -- transactions --------------------------------------------------------------------------------
def test_a_transaction_runs_whole(kv):
    k = key()
    r = kv.post("/multi-exec", [["SET", k, "1"], ["INCRBY", k, "4"], ["GET", k]])
    assert r.status_code == 200 and r.json() == [{"result": "OK"}, {"result": 5}, {"result": "5"}]


def test_a_readonly_token_write_discards_the_whole_transaction(kv):
    k = key()
    kv.run("SET", k, "1")
    r = kv.post("/multi-exec", [["GET", k], ["INCR", k]], readonly=True)
    refused(r, "EXECABORT Transaction discarded: NOPERM this user has no permissions to run the 'incr' "
               "command (read-only token)")
    assert kv.run("GET", k).json() == {"result": "1"}
    assert kv.post("/multi-exec", [["GET", k], ["EXISTS", k]], readonly=True).json() == [
        {"result": "1"}, {"result": 1}]


def test_a_refused_command_discards_the_transaction_and_nothing_runs(kv):
    k = key()
    refused(kv.post("/multi-exec", [["SET", k, "1"], ["BLPOP", k, "0"]]),
            "EXECABORT Transaction discarded: ERR Command is not available: 'BLPOP' (blocking commands cannot "
            "be served over REST)")
    refused(kv.post("/multi-exec", [["SET", k, "1"], ["GET k"]]),
            "EXECABORT Transaction discarded: ERR unknown command 'GET k'")
    assert kv.run("EXISTS", k).json() == {"result": 0}


def test_a_command_the_gateway_runs_itself_cannot_be_in_a_transaction(kv):
    k = key()
    refused(kv.post("/multi-exec", [["SET", k, "1"], ["config", "set", "maxmemory-samples", "5"]]),
            "EXECABORT Transaction discarded: ERR CONFIG SET cannot run inside a transaction: the gateway runs "
            "it itself, outside Redis; send it on its own")
    refused(kv.post("/multi-exec", [["ACL", "RESTTOKEN", "someone", "secret"]]),
            "EXECABORT Transaction discarded: ERR ACL RESTTOKEN cannot run inside a transaction: the gateway "
            "runs it itself, outside Redis; send it on its own")
    assert kv.run("EXISTS", k).json() == {"result": 0}


def test_a_transaction_redis_discards_names_its_first_error(kv):
    k = key()
    r = kv.post("/multi-exec", [["SET", k, "1"], ["INCR"], ["GET"]])
    assert r.status_code == 400
    error = r.json()["error"]
    assert error.startswith("EXECABORT Transaction discarded because of previous errors")
    assert error.endswith(" First error: ERR wrong number of arguments for 'incr' command")
    assert kv.run("EXISTS", k).json() == {"result": 0}


def test_a_failing_command_inside_a_transaction_is_its_error_element(kv):
    k, text = key(), key()
    kv.run("SET", text, "abc")
    body = kv.post("/multi-exec", [["SET", k, "1"], ["INCR", text], ["INCR", k]]).json()
    assert body[0] == {"result": "OK"} and body[2] == {"result": 2}
    assert body[1] == {"error": "ERR value is not an integer or out of range"}


# -- the request size and the daily limit --------------------------------------------------------
def test_a_command_over_the_request_size_is_refused(limited):
    k = "k" * 10
    assert limited.path("SET", k, "v" * (MAX_SIZE - 13)).json() == {"result": "OK"}  # 3 + 10 + 187 bytes
    refused(limited.path("SET", k, "v" * (MAX_SIZE - 12)),
            f"ERR max request size exceeded: the command is {MAX_SIZE + 1} bytes, the limit is {MAX_SIZE} bytes")


def test_the_daily_limit_counts_commands(limited):
    assert limited.post("/pipeline", [["INCR", "n"]] * 10).status_code == 200  # 10 of 12
    r = limited.post("/multi-exec", [["INCR", "n"]] * 3)  # 13 > 12: discarded, nothing counted
    refused(r, f"EXECABORT Transaction discarded: max daily request limit exceeded (limit {LIMIT})")
    assert limited.post("/multi-exec", [["INCR", "n"]] * 2).json() == [{"result": 11}, {"result": 12}]  # 12 of 12
    refused(limited.run("GET", "n"), f"ERR max daily request limit exceeded (limit {LIMIT})")
    r = limited.post("/pipeline", [["GET", "n"]])
    assert r.json() == [{"error": f"ERR max daily request limit exceeded (limit {LIMIT})"}]


def test_a_pipeline_runs_up_to_the_daily_limit(limited):
    r = limited.post("/pipeline", [["INCR", "m"]] * (LIMIT + 2))
    body = r.json()
    assert body[:LIMIT] == [{"result": i} for i in range(1, LIMIT + 1)]
    assert body[LIMIT:] == [{"error": f"ERR max daily request limit exceeded (limit {LIMIT})"}] * 2


def test_a_command_name_that_is_not_utf8_is_named_with_replacement_characters(kv):
    headers = {"Authorization": f"Bearer {kv.token}"}
    r = kv.http.get(f"{kv.url}/%FF%20x/k", headers=headers)
    refused(r, "ERR unknown command '\ufffd x'")
    r = kv.http.get(f"{kv.url}/%FFget/k", headers={"Authorization": f"Bearer {kv.readonly}"})
    refused(r, "NOPERM this user has no permissions to run the '\ufffdget' command (read-only token)")


@pytest.mark.parametrize("bad_at", [0, 1])
def test_a_discarded_transaction_names_its_first_error_wherever_it_is(kv, bad_at):
    k = key()
    rows = [["SET", k, "1"]]
    rows.insert(bad_at, ["INCR"])
    r = kv.post("/multi-exec", rows)
    assert r.status_code == 400
    assert r.json()["error"].endswith(" First error: ERR wrong number of arguments for 'incr' command")
    assert kv.run("EXISTS", k).json() == {"result": 0}
