"""The account client's resource reads over real HTTP against a sandbox with every area: what it lists
is what the sandbox holds (its URLs and tokens work), usage moves with use, the per-instance queue
paths act on the record, and ``resources()`` keeps to two round trips on the wire."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svckit.account import Account, AsyncAccount, IndexType
from svckit.errors import APIError, InvalidArgument
from svckit.sandbox import Sandbox
from tests.account.devapi_replies import Waves
from tests.conftest import running

KINDS = {"dense": "SVC_VECTOR_URL", "sparse": "SVC_VECTOR_SPARSE_URL", "hybrid": "SVC_VECTOR_HYBRID_URL",
         "nomodel": "SVC_VECTOR_NOMODEL_URL"}


@pytest.fixture
def every_area(tmp_path) -> Iterator[Sandbox]:
    with running(tmp_path / "data", seed=None, areas=["kv", "vector", "account", "queue"]) as sandbox:
        yield sandbox


def secrets_of(sandbox: Sandbox) -> list[str]:
    env = sandbox.env
    return [env[name] for name in ("SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN", "SVC_VECTOR_TOKEN", "SVC_QUEUE_TOKEN",
                                   "SVC_DEVAPI_KEY")]


def test_resources_lists_what_the_sandbox_holds_and_its_urls_and_tokens_work(every_area):
    env = every_area.env
    with Account.from_settings(every_area.settings) as acct:
        res = acct.resources()
        assert res.errors == {}
        (db,) = res.databases
        assert db.rest_url == env["SVC_KV_URL"] and db.rest_token.get_secret_value() == env["SVC_KV_TOKEN"]
        assert db.read_only_rest_token.get_secret_value() == env["SVC_KV_READONLY_TOKEN"]
        assert {ix.name: ix.url for ix in res.vector_indexes} == {name: env[var] for name, var in KINDS.items()}
        kinds = {ix.name: ix.index_type for ix in res.vector_indexes}
        assert kinds == {"dense": IndexType.DENSE, "sparse": IndexType.SPARSE, "hybrid": IndexType.HYBRID,
                         "nomodel": IndexType.DENSE}
        assert [q.id for q in res.queue_accounts] == [acct.queue_account().id]
        assert set(res.database_stats) == {db.id} and set(res.vector_stats) == {ix.id for ix in res.vector_indexes}
        assert set(res.queue_stats) == {res.queue_accounts[0].id}

        with acct.kv_client(db) as kv:
            kv.mset({"a": "1", "b": "2", "c": "3"})
        with acct.kv_client(db, read_only=True) as ro:
            assert ro.get("a") == "1"
            with pytest.raises(APIError):
                ro.set("d", "4")
        dense = next(ix for ix in res.vector_indexes if ix.name == "dense")
        with acct.vector_client(dense, timeout=60.0) as vec:
            vec.upsert_data([{"id": "x", "data": "red shoes"}, {"id": "y", "data": "blue hat"}])
            assert [hit.id for hit in vec.query_data("red shoes", top_k=1)] == ["x"]

        after = acct.resources()
    stats = after.database_stats[db.id]
    assert stats.keys == 3 and stats.daily_net_commands >= 2 and stats.current_storage > 0
    vstats = after.vector_stats[dense.id]
    assert vstats.current_vector_count == 2 and vstats.daily_update_count >= 1 and vstats.daily_query_count >= 1
    assert repr(after).count("SecretStr('**********')") >= 6
    assert not any(secret in repr(after) for secret in secrets_of(every_area))


def test_resources_is_two_round_trips_on_the_wire(every_area):
    # every request waits at its round's barrier before it is sent: one after another would break it
    waves = Waves([4, 6])  # the four lists; the stats of one database, four vector indexes, one queue account
    with Account.from_settings(every_area.settings, transport=waves.transport()) as acct:
        res = acct.resources("1d")
    assert res.errors == {} and len(waves.paths) == 10
    assert set(waves.paths[:4]) == {"/redis/databases", "/vector/index", "/search", "/qstash/users"}


async def test_async_resources_over_http(every_area):
    waves = Waves([4, 6])
    async with AsyncAccount.from_settings(every_area.settings, transport=waves.async_transport()) as acct:
        res = await acct.resources()
    assert res.errors == {} and len(waves.paths) == 10
    async with AsyncAccount.from_settings(every_area.settings) as acct:
        db = await acct.database(res.databases[0].id, hide_credentials=True)
        assert db.rest_token is None and db.rest_url == every_area.env["SVC_KV_URL"]
        async with acct.kv_client(res.databases[0]) as kv:
            assert await kv.set("k", "v")
        assert (await acct.database_stats(db.id)).keys == 1
        index = await acct.vector_index(res.vector_indexes[0].id)
        assert index == res.vector_indexes[0]
        queue = res.queue_accounts[0]
        assert await acct.set_queue_plan(queue.id, "qstash_fixed_10m") == "OK"
        assert (await acct.queue_account(queue.id)).reserved_type == "queue_enterprise_10m"


def test_hide_credentials_over_http(every_area):
    with Account.from_settings(every_area.settings) as acct:
        (db,) = acct.databases()
        hidden = acct.database(db.id, hide_credentials=True)
        assert hidden.rest_token is None and hidden.read_only_rest_token is None
        assert hidden.model_dump(exclude={"rest_token", "read_only_rest_token"}) == \
            db.model_dump(exclude={"rest_token", "read_only_rest_token"})
        with pytest.raises(InvalidArgument, match="no token"):
            acct.kv_client(hidden)


def test_the_per_instance_queue_paths_act_on_the_record(every_area):
    with Account.from_settings(every_area.settings) as acct:
        (queue,) = acct.queue_accounts()
        assert acct.queue_account(queue.id) == acct.queue_account() == queue
        assert acct.queue_stats("1d", id=queue.id).dlq_message_count == acct.queue_stats("1d").dlq_message_count
        rotated = acct.rotate_queue_token(queue.id)
        assert rotated.token != queue.token and acct.queue_account().token == rotated.token
        assert acct.set_queue_plan(queue.id, "qstash_fixed_1m") == "OK"
        assert acct.queue_account(queue.id).reserved_type == "queue_enterprise_1m"
        assert acct.set_queue_plan(queue.id, "qstash_fixed_100m") == "OK"
        assert acct.queue_account().plan == "queue_enterprise_100m"
        with pytest.raises(APIError) as caught:
            acct.queue_account("no-such-account")
        assert caught.value.status == 404


def test_a_sandbox_without_kv_and_vector_lists_none(queue_sandbox):
    with Account.from_settings(queue_sandbox.settings) as acct:
        res = acct.resources()
    assert res.databases == [] and res.vector_indexes == [] and res.errors == {}
    assert len(res.queue_accounts) == 1 and set(res.queue_stats) == {res.queue_accounts[0].id}
