"""The queue account's limits are the local QStash's: each refused just past its edge, with the answer
the SDKs expect, and lifted by a plan upgrade from the next request on (a sandbox per test: an
upgrade changes the whole account)."""

from __future__ import annotations

import time

import pytest
from qstash import QStash
from qstash.errors import DailyMessageLimitExceededError, QStashError

from svckit.sandbox import Sandbox
from svckit.sandbox.plans import PLAN_PRESETS
from tests.receiver import Receiver
from tests.sandbox.queue.test_message_size import upgrade

FREE, PAID = PLAN_PRESETS["free"], PLAN_PRESETS["paid"]


@pytest.fixture
def qstash(queue_sandbox: Sandbox) -> QStash:
    return QStash(queue_sandbox.env["SVC_QUEUE_TOKEN"], base_url=queue_sandbox.env["SVC_QUEUE_URL"])


@pytest.fixture
def upgraded(queue_sandbox: Sandbox):
    import httpx

    def to(plan: str) -> None:
        with httpx.Client() as http:
            upgrade(queue_sandbox, http, plan)
    return to


URL = "http://127.0.0.1:9/never-delivered"  # every message of these tests waits an hour


def test_delay_retries_and_timeout_at_their_edges(qstash, upgraded):
    qstash.message.publish(url=URL, body="x", delay=FREE["max_delay"])
    with pytest.raises(QStashError, match=r"400.*max_delay of 604,800 s"):
        qstash.message.publish(url=URL, body="x", delay=FREE["max_delay"] + 1)
    qstash.message.publish(url=URL, body="x", delay="1h", retries=FREE["max_retries"])
    with pytest.raises(QStashError, match=r"400.*max_retries of 3"):
        qstash.message.publish(url=URL, body="x", delay="1h", retries=FREE["max_retries"] + 1)
    qstash.message.publish(url=URL, body="x", delay="1h", timeout=FREE["timeout"])
    with pytest.raises(QStashError, match=r"400.*timeout of 900 s"):
        qstash.message.publish(url=URL, body="x", delay="1h", timeout=FREE["timeout"] + 1)
    upgraded("paid")
    qstash.message.publish(url=URL, body="x", delay=FREE["max_delay"] + 1, retries=PAID["max_retries"],
                           timeout=FREE["timeout"] + 1)


def test_the_message_size_at_its_edge(qstash, upgraded):
    limit = FREE["max_message_size"]
    qstash.message.publish(url=URL, body=b"m" * limit, delay="1h")
    with pytest.raises(QStashError, match=r"413.*max_message_size"):
        qstash.message.publish(url=URL, body=b"m" * (limit + 1), delay="1h")
    upgraded("queue_enterprise_1m")
    qstash.message.publish(url=URL, body=b"m" * (limit + 1), delay="1h")


def test_the_days_messages_at_their_edge(qstash, upgraded):
    limit = FREE["max_requests_per_day"]
    answers = qstash.message.batch([{"url": URL, "body": str(i), "delay": "1h"} for i in range(limit - 1)])
    assert len(answers) == limit - 1
    with pytest.raises(DailyMessageLimitExceededError):  # a batch that would cross the edge is refused whole
        qstash.message.batch([{"url": URL, "body": "a", "delay": "1h"}, {"url": URL, "body": "b", "delay": "1h"}])
    qstash.message.publish(url=URL, body="last of the day", delay="1h")
    with pytest.raises(DailyMessageLimitExceededError) as refused:
        qstash.message.publish(url=URL, body="one too many", delay="1h")
    assert (refused.value.limit, refused.value.remaining) == (str(limit), "0")
    assert int(refused.value.reset) > time.time()
    upgraded("paid")
    qstash.message.publish(url=URL, body="after the upgrade", delay="1h")


def test_queues_groups_endpoints_schedules_and_parallelism_at_their_edges(qstash, upgraded):
    for i in range(FREE["max_queues"]):
        qstash.queue.upsert(f"q{i}", parallelism=FREE["max_parallelism"] if i == 0 else 1)
    with pytest.raises(QStashError, match=r"412.*max_queues"):
        qstash.queue.upsert("one-more")
    with pytest.raises(QStashError, match=r"412.*max_queues"):  # an enqueue would make one too
        qstash.message.enqueue(queue="one-more", url=URL, body="x")
    with pytest.raises(QStashError, match=r"412.*max_parallelism"):
        qstash.queue.upsert("q0", parallelism=FREE["max_parallelism"] + 1)
    for i in range(FREE["max_topics"]):
        qstash.url_group.upsert_endpoints(url_group=f"g{i}", endpoints=[{"url": URL}])
    with pytest.raises(QStashError, match=r"412.*max_topics"):
        qstash.url_group.upsert_endpoints(url_group="one-more", endpoints=[{"url": URL}])
    qstash.url_group.upsert_endpoints(url_group="g0", endpoints=[
        {"url": f"http://127.0.0.1:9/e{i}"} for i in range(FREE["max_endpoints_per_topic"] - 1)])
    with pytest.raises(QStashError, match=r"412.*max_endpoints_per_topic"):
        qstash.url_group.upsert_endpoints(url_group="g0", endpoints=[{"url": "http://127.0.0.1:9/one-more"}])
    for i in range(FREE["max_schedules"]):
        qstash.schedule.create(destination=URL, cron="0 0 1 1 *", body=str(i))
    with pytest.raises(QStashError, match=r"412.*max_schedules"):
        qstash.schedule.create(destination=URL, cron="0 0 1 1 *", body="one more")
    upgraded("paid")
    qstash.queue.upsert("one-more", parallelism=FREE["max_parallelism"] + 1)
    qstash.url_group.upsert_endpoints(url_group="one-more", endpoints=[{"url": URL}])
    qstash.url_group.upsert_endpoints(url_group="g0", endpoints=[{"url": "http://127.0.0.1:9/one-more"}])
    qstash.schedule.create(destination=URL, cron="0 0 1 1 *", body="one more")


def test_at_most_the_accounts_global_parallelism_is_delivered_at_once(qstash, queue_sandbox, upgraded):
    limit = FREE["max_global_parallelism"]
    with Receiver() as destination:
        gate = destination.gate("/busy")
        qstash.message.batch([{"url": destination.url("/busy"), "body": str(i)} for i in range(limit + 5)])
        destination.wait_in_flight(limit)
        time.sleep(0.3)  # time enough for more to start, if any could
        assert destination.in_flight == limit
        gate.set()
        destination.wait_for("/busy", limit + 5, timeout=20)
        assert destination.most_in_flight == limit
        upgraded("paid")  # 200 at once: the next burst goes out whole
        wider = destination.gate("/wider")
        qstash.message.batch([{"url": destination.url("/wider"), "body": str(i)} for i in range(limit + 5)])
        destination.wait_in_flight(limit + 5)
        wider.set()
        destination.wait_for("/wider", limit + 5, timeout=20)


def test_the_dlq_keeps_the_accounts_max_dlq_size_newest_entries(qstash, queue_sandbox, upgraded):
    queue_sandbox.area("queue").store.update_queue_account(max_dlq_size=2)

    def dlq_holds(expected: set[str]) -> None:
        deadline = time.monotonic() + 10
        while (held := {e.message_id for e in qstash.dlq.list().messages}) != expected:
            assert time.monotonic() < deadline, held
            time.sleep(0.05)

    with Receiver() as destination:
        destination.answer("/down", 500)
        ids: list[str] = []
        for i in range(3):  # one at a time: deliveries at once may enter the DLQ in any order
            ids.append(qstash.message.publish(url=destination.url("/down"), body=str(i), retries=0).message_id)
            dlq_holds(set(ids[-2:]))
        upgraded("paid")  # its max_dlq_size of 100,000: nothing more is made room for
        ids.append(qstash.message.publish(url=destination.url("/down"), body="3", retries=0).message_id)
        dlq_holds(set(ids[1:]))


def _burst(http, count: int) -> list[int]:
    """``count`` requests inside one fresh second of the clock (tried again if they straddled two)."""
    for _ in range(5):
        time.sleep(1.01 - time.time() % 1)  # the start of the next second
        started = time.time()
        answers = [http.get("/v2/queues").status_code for _ in range(count)]
        if int(time.time()) == int(started):
            return answers
    raise AssertionError("five bursts of requests in a row straddled a second: the machine is too slow for this test")


def test_requests_per_second_at_their_edge_publishing_aside(qstash, queue_sandbox, upgraded):
    import httpx
    from qstash.errors import RateLimitExceededError

    limit = 5  # the free plan's 100 a second, made small so that a burst surely fits in a second
    queue_sandbox.area("queue").store.update_queue_account(max_requests_per_second=limit)
    headers = {"Authorization": f"Bearer {queue_sandbox.env['SVC_QUEUE_TOKEN']}"}
    with httpx.Client(base_url=queue_sandbox.env["SVC_QUEUE_URL"], headers=headers) as http:
        assert _burst(http, limit + 1) == [200] * limit + [429]
        with pytest.raises(RateLimitExceededError) as refused:
            while True:  # the SDK's own request, refused the same way within a second
                qstash.queue.list()
        assert refused.value.limit == str(limit) and refused.value.remaining == "0"
        qstash.message.publish(url=URL, body="publishing is not counted", delay="1h")
        upgraded("paid")  # the developer API's request: another area, not counted either
        assert _burst(http, limit + 1) == [200] * (limit + 1)
