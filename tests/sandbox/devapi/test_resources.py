"""The account's resources through the vendor's developer API paths: each lists what the sandbox
really holds, its endpoint and token work, and its usage counts what was sent."""

from __future__ import annotations

import ssl
import uuid

import httpx
import pytest

from svckit.sandbox.delivery.stats import PERIODS
from tests.conftest import running
from tests.sandbox.devapi.conftest import devapi_client

UNKNOWN = "00000000-0000-4000-8000-000000000000"
PER_ID = ["/redis/database/{id}", "/redis/stats/{id}", "/vector/index/{id}", "/vector/index/{id}/stats",
          "/search/{id}", "/search/{id}/stats"]


def _database(devapi: httpx.Client) -> dict:
    [database] = devapi.get("/redis/databases").json()
    return database


def _index(devapi: httpx.Client, name: str) -> dict:
    return next(index for index in devapi.get("/vector/index").json() if index["name"] == name)


def _kv(database: dict, command: list, token_field: str = "rest_token", **options) -> httpx.Response:
    return httpx.post(database["endpoint"], json=command,
                      headers={"Authorization": f"Bearer {database[token_field]}"}, **options)


# -- key-value -------------------------------------------------------------------------------------
def test_the_database_is_listed_with_an_endpoint_and_tokens_that_work(devapi, devapi_sandbox):
    database = _database(devapi)
    assert database["endpoint"] == f"{devapi_sandbox.url}/kv"
    assert database["region"] == database["primary_region"] == "local"
    assert database["port"] == devapi_sandbox.port and database["tls"] is False
    assert database["customer_id"] == devapi_sandbox.env["SVC_DEVAPI_EMAIL"]
    assert database["db_request_limit"] > 0 and database["db_max_request_size"] > 0
    assert database["db_max_commands_per_second"] == -1  # no such bound in the sandbox
    key = f"devapi-{uuid.uuid4().hex}"
    assert _kv(database, ["SET", key, "listed"]).json() == {"result": "OK"}
    assert _kv(database, ["GET", key], "read_only_rest_token").json() == {"result": "listed"}
    assert devapi.get(f"/redis/database/{database['database_id']}").json() == database


def test_credentials_hide_leaves_the_tokens_out(devapi):
    database = _database(devapi)
    hidden = devapi.get(f"/redis/database/{database['database_id']}", params={"credentials": "hide"}).json()
    assert "rest_token" not in hidden and "read_only_rest_token" not in hidden
    assert hidden == {k: v for k, v in database.items() if k not in ("rest_token", "read_only_rest_token")}


def test_commands_today_go_up_by_the_commands_sent(devapi, devapi_sandbox):
    database = _database(devapi)
    stats = f"/redis/stats/{database['database_id']}"
    before = devapi.get(stats).json()
    key = f"devapi-{uuid.uuid4().hex}"
    headers = {"Authorization": f"Bearer {database['rest_token']}"}
    assert _kv(database, ["SET", key, "1"]).status_code == 200
    pipeline = httpx.post(f"{database['endpoint']}/pipeline", headers=headers,
                          json=[["INCR", key], ["INCR", key], ["GET", key]])
    assert [reply["result"] for reply in pipeline.json()] == [2, 3, "3"]
    after = devapi.get(stats).json()
    assert after["daily_net_commands"] == before["daily_net_commands"] + 4
    assert after["dailyrequests"][0]["y"] == after["daily_net_commands"]
    assert after["keyspace"][0]["y"] == before["keyspace"][0]["y"] + 1
    assert after["days"] and after["current_storage"] >= 0
    if devapi.get(stats).json()["current_storage"] == 0:  # fakeredis has no INFO; a real Redis says its memory
        assert "fakeredis" in str(devapi_sandbox.area("kv").backend_name)


# -- vector ----------------------------------------------------------------------------------------
def test_every_vector_index_is_listed_as_it_runs(devapi, devapi_sandbox):
    indexes = {index["name"]: index for index in devapi.get("/vector/index").json()}
    assert sorted(indexes) == ["dense", "hybrid", "nomodel", "sparse"]
    assert {name: index["index_type"] for name, index in indexes.items()} == {
        "dense": "DENSE", "hybrid": "HYBRID", "nomodel": "DENSE", "sparse": "SPARSE"}
    assert indexes["dense"]["embedding_model"] == indexes["hybrid"]["embedding_model"] == "all-MiniLM-L6-v2"
    assert "embedding_model" not in indexes["nomodel"] and "embedding_model" not in indexes["sparse"]
    assert indexes["sparse"]["sparse_embedding_model"] == indexes["hybrid"]["sparse_embedding_model"] == "BM25"
    assert indexes["dense"]["dimension_count"] == 384
    for name, index in indexes.items():
        assert index["endpoint"] == f"{devapi_sandbox.url}/vector/{name}"
        assert index["token"] == devapi_sandbox.env["SVC_VECTOR_TOKEN"] and index["read_only_token"] == ""
        assert index["max_reads_per_request"] == 1000 and index["max_vector_count"] == -1
        assert devapi.get(f"/vector/index/{index['id']}").json() == index


def test_a_query_to_the_listed_endpoint_works_and_is_counted(devapi):
    index = _index(devapi, "nomodel")
    stats = f"/vector/index/{index['id']}/stats"
    before, total_before = devapi.get(stats).json(), devapi.get("/vector/index/stats").json()
    auth = {"Authorization": f"Bearer {index['token']}"}
    vector = [1.0] + [0.0] * (index["dimension_count"] - 1)
    item = f"devapi-{uuid.uuid4().hex}"
    assert httpx.post(f"{index['endpoint']}/upsert", headers=auth, json={"id": item, "vector": vector}).status_code == 200
    hits = httpx.post(f"{index['endpoint']}/query", headers=auth, json={"vector": vector, "topK": 1}).json()["result"]
    assert hits[0]["id"] == item
    after, total_after = devapi.get(stats).json(), devapi.get("/vector/index/stats").json()
    assert after["daily_query_count"] == before["daily_query_count"] + 1
    assert after["daily_update_count"] == before["daily_update_count"] + 1
    assert after["current_vector_count"] == before["current_vector_count"] + 1
    assert after["vector_count"][0]["y"] == after["current_vector_count"] and after["storage_usage"] > 0
    assert total_after["request"] == total_before["request"] + 2
    assert total_after["record_count"] == total_before["record_count"] + 1


@pytest.mark.parametrize("path", ["/vector/index/{id}/stats", "/vector/index/stats", "/search/stats"])
def test_a_bad_period_is_a_400_naming_the_periods(devapi, path):
    r = devapi.get(path.format(id=_index(devapi, "dense")["id"]), params={"period": "1w"})
    assert r.status_code == 400 and all(period in r.json()["error"] for period in PERIODS)


# -- search and unknown ids --------------------------------------------------------------------------
def test_search_indexes_are_listed_without_a_data_api(devapi):
    indexes = devapi.get("/search").json()
    assert {index["id"] for index in indexes} == {"idx_products", "idx_support_articles"}
    for index in indexes:
        assert index["endpoint"] == index["token"] == "" and index["region"] == "local"
        assert devapi.get(f"/search/{index['id']}").json() == index
        stats = devapi.get(f"/search/{index['id']}/stats").json()  # nothing is recorded: zeros
        assert stats["current_vector_count"] == stats["daily_query_count"] == 0
    # the vendor's CLI's `search stats`: the account's search usage, not an index named "stats"
    assert devapi.get("/search/stats").json()["record_count"] == 0


@pytest.mark.parametrize("path", PER_ID)
def test_an_unknown_id_is_a_404(devapi, path):
    r = devapi.get(path.format(id=UNKNOWN))
    assert r.status_code == 404 and "not found" in r.json()["error"]


def test_the_sandbox_says_how_many_resources_the_developer_api_lists(devapi_sandbox):
    assert "2 search indexes and 5 other resources" in devapi_sandbox.holds()["account"]


def test_areas_the_sandbox_does_not_run_list_nothing(raw_devapi):  # queue_sandbox: account and queue only
    assert raw_devapi.get("/redis/databases").json() == []
    assert raw_devapi.get("/vector/index").json() == []
    assert len(raw_devapi.get("/search").json()) == 2
    assert raw_devapi.get(f"/redis/stats/{UNKNOWN}").status_code == 404


# -- endpoints follow the origin, ids follow the data directory -------------------------------------
def test_endpoints_follow_the_origin_the_request_came_to(devapi_sandbox):
    with devapi_client(devapi_sandbox, base_url=f"http://localhost:{devapi_sandbox.port}/devapi/v2") as devapi:
        database = _database(devapi)
    assert database["endpoint"] == f"http://localhost:{devapi_sandbox.port}/kv"
    assert _kv(database, ["PING"]).json() == {"result": "PONG"}


def test_an_https_sandbox_lists_https_endpoints_that_work(tmp_path):
    with running(tmp_path / "data", areas=["kv", "account"], tls=True) as sandbox:
        trusted = ssl.create_default_context(cafile=str(sandbox.ca_file))
        with devapi_client(sandbox, verify=trusted) as devapi:
            database = _database(devapi)
        assert database["endpoint"] == f"https://127.0.0.1:{sandbox.port}/kv" and database["tls"] is True
        assert database["port"] == sandbox.port
        assert _kv(database, ["PING"], verify=trusted).json() == {"result": "PONG"}


def test_ids_survive_a_restart_on_the_same_data_directory(tmp_path):
    def ids() -> list[str]:
        with running(tmp_path / "data", areas=["kv", "account"], backend="fakeredis") as sandbox, \
                devapi_client(sandbox) as devapi:
            database = _database(devapi)
            return [database["database_id"], str(database["creation_time"]), devapi.get("/qstash/users").json()[0]["id"]]

    first = ids()
    assert ids() == first
    uuid.UUID(first[0])
