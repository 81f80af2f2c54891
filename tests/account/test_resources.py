"""The account client's reads of what the account holds, against a service answering exactly as
issue 45's wire format says (httpx MockTransport): round trips, failures kept apart, the spec-only
fallback, hidden credentials, plan names checked before any request, clients handed on."""

from __future__ import annotations

import httpx
import pytest

import svckit.kv
import svckit.vector
from svckit.account import Account, AccountResources, AsyncAccount
from svckit.errors import AuthError, InvalidArgument, NotFound
from tests.account.devapi_replies import DB_RO_TOKEN, DB_TOKEN, SECRETS, VECTOR_TOKEN, Replies, database

URL = "http://127.0.0.1:9/devapi/v2"
LISTS = {"/redis/databases", "/vector/index", "/search", "/qstash/users"}
STATS = 6  # one database, four vector indexes, one queue account


def account(replies: Replies, **options) -> Account:
    return Account(URL, "dev@example.com", "key", transport=replies.transport(), **options)


def aaccount(replies: Replies, **options) -> AsyncAccount:
    return AsyncAccount(URL, "dev@example.com", "key", transport=replies.async_transport(), **options)


def check_everything(res: AccountResources) -> None:
    assert res.errors == {}
    assert [db.database_name for db in res.databases] == ["sandbox"]
    assert [ix.name for ix in res.vector_indexes] == ["dense", "sparse", "hybrid", "nomodel"]
    assert [sx.name for sx in res.search_indexes] == ["docs"]
    assert [q.id for q in res.queue_accounts] == ["queue-account-1"]
    assert set(res.database_stats) == {res.databases[0].database_id}
    assert set(res.vector_stats) == {ix.id for ix in res.vector_indexes}
    assert res.database_stats[res.databases[0].id].keys == 17
    assert res.queue_stats["queue-account-1"].dlq_message_count == 3


def test_resources_is_two_round_trips_the_lists_then_every_stats_side_by_side():
    replies = Replies(waves=[len(LISTS), STATS])  # each group must be in flight at once, or its barrier breaks
    with account(replies) as acct:
        res = acct.resources("1d")
    check_everything(res)
    assert set(replies.paths[:4]) == LISTS and len(replies.paths) == len(LISTS) + STATS
    assert all("/stats" in path for path in replies.paths[4:])


async def test_async_resources_is_two_round_trips_too():
    replies = Replies(waves=[len(LISTS), STATS])
    async with aaccount(replies) as acct:
        res = await acct.resources()
    check_everything(res)
    assert set(replies.paths[:4]) == LISTS and len(replies.paths) == len(LISTS) + STATS


def test_a_failed_stats_request_is_told_and_the_rest_kept():
    sparse = "9b8a7c6d-0000-4000-8000-00000000v002"
    replies = Replies(missing=[f"/vector/index/{sparse}/stats", "/search"])
    with account(replies) as acct:
        res = acct.resources()
    assert set(res.errors) == {sparse, "search_indexes"}
    assert "HTTP 404" in res.errors[sparse] and res.search_indexes == []
    assert sparse not in res.vector_stats and len(res.vector_stats) == 3
    assert len(res.vector_indexes) == 4 and res.queue_accounts and res.database_stats


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_a_service_with_only_the_spec_paths_still_gives_its_queue_account(asynchronous):
    # 404 on every vendor list path: the spec's GET /queue/user and the id-less stats, still two rounds
    replies = Replies(missing=["/redis", "/vector", "/search", "/qstash/users", "/qstash/user/", "/qstash/stats/"],
                      waves=[len(LISTS), 2])
    if asynchronous:
        async with aaccount(replies) as acct:
            res = await acct.resources()
    else:
        with account(replies) as acct:
            res = acct.resources()
    assert [q.id for q in res.queue_accounts] == ["queue-account-1"]
    assert res.queue_stats["queue-account-1"].requests_on("2026-12-06") == 12
    assert set(res.errors) == {"databases", "vector_indexes", "search_indexes"}
    assert replies.paths[4:] == ["/queue/user", "/qstash/stats"]


def test_wrong_credentials_raise_rather_than_look_like_an_empty_account():
    replies = Replies()
    replies.reply = lambda request: httpx.Response(401, json={"error": "invalid credentials"})
    with account(replies) as acct, pytest.raises(AuthError):
        acct.resources()


def test_nothing_readable_raises_the_first_error():
    replies = Replies(missing=["/"])
    with account(replies) as acct, pytest.raises(NotFound):
        acct.resources()


def test_hidden_credentials_leave_the_tokens_out_even_if_a_service_sends_them():
    asked_hide = []

    def ignores_hide(request: httpx.Request) -> httpx.Response:
        asked_hide.append(request.url.params.get("credentials") == "hide")
        return httpx.Response(200, json=database())  # an older service: tokens sent whatever was asked

    replies = Replies()
    replies.reply = ignores_hide
    with account(replies) as acct:
        db = acct.database(database()["database_id"], hide_credentials=True)
        shown = acct.database(database()["database_id"])
    assert replies.paths == [f"/redis/database/{db.database_id}"] * 2 and asked_hide == [True, False]
    assert db.rest_token is None and db.read_only_rest_token is None
    assert shown.rest_token.get_secret_value() == DB_TOKEN


def test_set_queue_plan_checks_the_name_before_any_request():
    replies = Replies()
    with account(replies) as acct, pytest.raises(InvalidArgument) as caught:
        acct.set_queue_plan("queue-account-1", "qstash_fixed_5m")
    assert replies.paths == []
    assert caught.value.argument == "plan_name"
    for name in ("paid", "qstash_fixed_1m", "qstash_fixed_10m", "qstash_fixed_100m", "queue_enterprise_1m"):
        assert name in str(caught.value)


def test_bad_ids_and_periods_are_refused_before_any_request():
    replies = Replies()
    with account(replies) as acct:
        for call in (lambda: acct.database(""), lambda: acct.vector_index_stats("x", period="2h"),
                     lambda: acct.resources(period="5m"), lambda: acct.queue_stats("1h", id="")):
            with pytest.raises(InvalidArgument):
                call()
    assert replies.paths == []


class Recorded:
    def __init__(self, url, token, **options):
        self.url, self.token, self.options = url, token, options


def test_kv_and_vector_clients_take_the_record_and_this_clients_options(monkeypatch):
    monkeypatch.setattr(svckit.kv, "KV", Recorded)
    monkeypatch.setattr(svckit.vector, "Vector", Recorded)
    with account(Replies(), timeout=3.5, verify=False) as acct:
        res = acct.resources()
        kv = acct.kv_client(res.databases[0])
        ro = acct.kv_client(res.databases[0], read_only=True, timeout=1.0)
        vec = acct.vector_client(res.vector_indexes[2])
        hidden = acct.database(res.databases[0].id, hide_credentials=True)
        with pytest.raises(InvalidArgument, match="no token") as caught:
            acct.kv_client(hidden)
        with pytest.raises(InvalidArgument, match="no token"):
            acct.kv_client(res.databases[0].model_copy(update={"read_only_rest_token": None}), read_only=True)
    assert (kv.url, kv.token, kv.options) == ("http://127.0.0.1:8123/kv", DB_TOKEN,
                                              {"readonly": False, "timeout": 3.5, "verify": False})
    assert (ro.token, ro.options) == (DB_RO_TOKEN, {"readonly": True, "timeout": 1.0, "verify": False})
    assert (vec.url, vec.token, vec.options) == ("http://127.0.0.1:8123/vector/hybrid", VECTOR_TOKEN,
                                                 {"timeout": 3.5, "verify": False})
    assert not any(secret in str(caught.value) for secret in SECRETS)


async def test_async_kv_and_vector_clients(monkeypatch):
    monkeypatch.setattr(svckit.kv, "AsyncKV", Recorded)
    monkeypatch.setattr(svckit.vector, "AsyncVector", Recorded)
    async with aaccount(Replies(), timeout=2.0) as acct:
        res = await acct.resources()
    kv, vec = acct.kv_client(res.databases[0]), acct.vector_client(res.vector_indexes[0])
    assert (kv.token, kv.options) == (DB_TOKEN, {"readonly": False, "timeout": 2.0, "verify": True})
    assert (vec.url, vec.token) == ("http://127.0.0.1:8123/vector/dense", VECTOR_TOKEN)


def test_rest_url_is_the_endpoint_with_a_scheme_or_https_before_a_host():
    from svckit.account import Database, VectorIndex

    assert Database(database_id="d", endpoint="eu1-fine-cat-123.upstash.io").rest_url == \
        "https://eu1-fine-cat-123.upstash.io"
    assert Database(database_id="d", endpoint="http://127.0.0.1:8123/kv/").rest_url == "http://127.0.0.1:8123/kv"
    assert VectorIndex(id="v", endpoint="fine-cat-123-vector.upstash.io").url == "https://fine-cat-123-vector.upstash.io"


def test_no_secret_in_any_repr():
    with account(Replies()) as acct:
        res = acct.resources()
    shown = [repr(res), str(res), *map(repr, res.databases), *map(repr, res.vector_indexes),
             *map(repr, res.queue_accounts), repr(acct)]
    for text in shown:
        assert not any(secret in text for secret in SECRETS)
