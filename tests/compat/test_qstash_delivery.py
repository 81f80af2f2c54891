"""The hosted service's ``qstash`` SDK (3.4.0), unchanged, against the sandbox as the local QStash:
messages published, enqueued, fanned out and scheduled, delivered to receivers on loopback, each with
a signature the SDK's own ``Receiver`` accepts; retries into the DLQ and back out; deduplication, flow
control, cancel, events and signing keys.

One sandbox for the module, with the retry backoff scaled down (``queue_backoff_scale``: 12 s before
the first retry becomes 12 ms); each test has receivers, queues, groups and labels of its own.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from qstash import AsyncQStash, QStash, Receiver
from qstash.errors import QStashError

from svckit.sandbox import Sandbox
from tests.conftest import eventually, running
from tests.receiver import Delivery
from tests.receiver import Receiver as Destination


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("qstash"), areas=["account", "queue"], queue_backoff_scale=0.001) as sb:
        yield sb


@pytest.fixture
def qstash(sandbox: Sandbox) -> QStash:
    return QStash(sandbox.env["SVC_QUEUE_TOKEN"], base_url=sandbox.env["SVC_QUEUE_URL"])


@pytest.fixture
def destination() -> Iterator[Destination]:
    with Destination() as receiver:
        yield receiver


def verify(sandbox: Sandbox, delivery: Delivery, url: str) -> None:
    """The delivery's signature, checked as the user's endpoint checks it: keys from the environment."""
    env = sandbox.env
    Receiver(current_signing_key=env["SVC_QUEUE_CURRENT_SIGNING_KEY"],
             next_signing_key=env["SVC_QUEUE_NEXT_SIGNING_KEY"]).verify(
        signature=delivery.headers["upstash-signature"], body=delivery.text, url=url)


def states(qstash: QStash, message_id: str) -> list[str]:
    return [e.state.value for e in reversed(qstash.log.list(filter={"message_id": message_id}).logs)]


def test_a_message_is_delivered_with_its_options_and_a_signature_the_receiver_accepts(sandbox, qstash, destination):
    url = destination.url("/orders?tenant=acme")
    published = qstash.message.publish_json(
        url=url, body={"order": 42}, method="PUT", headers={"X-Trace": "t-1", "Connection": "close"},
        retries=1, timeout="5s", label="compat-options")
    [delivery] = destination.wait_for("/orders")
    assert delivery.method == "PUT" and delivery.path == "/orders?tenant=acme"
    assert json.loads(delivery.body) == {"order": 42}
    assert delivery.headers["content-type"] == "application/json" and delivery.headers["x-trace"] == "t-1"
    assert delivery.headers.get("connection") != "close"  # hop by hop: the publisher's is not forwarded
    assert delivery.headers["upstash-message-id"] == published.message_id
    assert delivery.headers["upstash-retried"] == "0" and delivery.headers["user-agent"] == "Upstash-QStash"
    verify(sandbox, delivery, url)
    eventually(lambda: states(qstash, published.message_id) == ["CREATED", "ACTIVE", "DELIVERED"],
               "the message's events", 10)


def test_a_delayed_message_waits_can_be_read_and_canceled(qstash, destination):
    later = qstash.message.publish(url=destination.url("/later"), body="x", delay="1h", label="compat-delay")
    message = qstash.message.get(later.message_id)
    assert message.url == destination.url("/later") and message.body == "x"
    assert message.not_before - message.created_at == 3_600_000
    soon = qstash.message.publish(url=destination.url("/soon"), body="y", delay=1)
    start = time.time()
    [delivery] = destination.wait_for("/soon")
    assert delivery.at - start >= 0.9
    qstash.message.cancel(later.message_id)
    with pytest.raises(QStashError, match="404"):
        qstash.message.get(later.message_id)
    assert states(qstash, later.message_id) == ["CREATED", "CANCELED"]
    assert states(qstash, soon.message_id)[-1] == "DELIVERED"


def test_failed_deliveries_are_retried_then_dead_lettered_with_callbacks_and_retried_out(sandbox, qstash, destination):
    destination.answer("/flaky", 503)
    published = qstash.message.publish(
        url=destination.url("/flaky"), body="payload", retries=2, callback=destination.url("/callback"),
        failure_callback=destination.url("/failure"), label="compat-dlq")
    attempts = destination.wait_for("/flaky", 3)
    assert [a.headers["upstash-retried"] for a in attempts] == ["0", "1", "2"]
    callbacks = destination.wait_for("/callback", 3)
    [failure] = destination.wait_for("/failure")
    report = json.loads(failure.body)
    assert report["status"] == 503 and report["sourceMessageId"] == published.message_id
    assert base64.b64decode(report["sourceBody"]) == b"payload" and report["retried"] == report["maxRetries"] == 2
    assert [json.loads(c.body)["retried"] for c in callbacks] == [0, 1, 2]
    verify(sandbox, failure, destination.url("/failure"))
    entry = next(m for m in qstash.dlq.list(filter={"label": "compat-dlq"}).messages)
    assert (entry.message_id, entry.response_status, entry.response_body) == (published.message_id, 503, "answer 503")
    assert report["dlqId"] == entry.dlq_id
    # back out of the DLQ: delivered again as a new message, which now succeeds
    destination.answer("/flaky", 200)
    queue = httpx.post(f"{sandbox.env['SVC_QUEUE_URL']}/v2/dlq/retry/{entry.dlq_id}",
                       headers={"Authorization": f"Bearer {sandbox.env['SVC_QUEUE_TOKEN']}"})
    assert queue.status_code == 200
    destination.wait_for("/flaky", 4)
    assert all(m.dlq_id != entry.dlq_id for m in qstash.dlq.list().messages)


def test_deduplicated_messages_are_delivered_once(qstash, destination):
    url = destination.url("/dedup")
    first = qstash.message.publish(url=url, body="a", deduplication_id="order-7")
    again = qstash.message.publish(url=url, body="b", deduplication_id="order-7")
    assert (again.message_id, again.deduplicated, first.deduplicated) == (first.message_id, True, False)
    by_content = [qstash.message.publish(url=url, body="same", content_based_deduplication=True) for _ in range(2)]
    assert [r.deduplicated for r in by_content] == [False, True]
    destination.wait_for("/dedup", 2)
    time.sleep(0.3)
    assert sorted(d.text for d in destination.at("/dedup")) == ["a", "same"]


def test_a_queue_delivers_in_order_one_at_a_time(qstash, destination):
    qstash.queue.upsert("compat-orders", parallelism=1)
    destination.slow("/in-order", 0.05)
    for i in range(5):
        qstash.message.enqueue(queue="compat-orders", url=destination.url("/in-order"), body=str(i))
    deliveries = destination.wait_for("/in-order", 5)
    assert [d.text for d in deliveries] == ["0", "1", "2", "3", "4"]
    assert all(b.at - a.at >= 0.05 for a, b in itertools.pairwise(deliveries))  # never two at once
    queue = qstash.queue.get("compat-orders")
    assert (queue.parallelism, queue.paused) == (1, False)
    qstash.queue.pause("compat-orders")
    paused = qstash.message.enqueue(queue="compat-orders", url=destination.url("/in-order"), body="held")
    time.sleep(0.3)
    assert qstash.queue.get("compat-orders").lag == 1 and len(destination.at("/in-order")) == 5
    qstash.queue.resume("compat-orders")
    assert destination.wait_for("/in-order", 6)[-1].text == "held"
    eventually(lambda: states(qstash, paused.message_id)[-1] == "DELIVERED", "the held message delivered", 10)
    qstash.queue.delete("compat-orders")
    assert "compat-orders" not in [q.name for q in qstash.queue.list()]


def test_a_url_group_fans_out_to_every_endpoint(qstash, destination):
    qstash.url_group.upsert_endpoints(url_group="compat-fans", endpoints=[
        {"url": destination.url("/fan-a"), "name": "a"}, {"url": destination.url("/fan-b")}])
    answers = qstash.message.publish_json(url_group="compat-fans", body={"news": 1})
    assert sorted(a.url for a in answers) == sorted([destination.url("/fan-a"), destination.url("/fan-b")])
    for path in ("/fan-a", "/fan-b"):
        [delivery] = destination.wait_for(path)
        assert delivery.headers["upstash-topic-name"] == "compat-fans"
    qstash.url_group.remove_endpoints(url_group="compat-fans", endpoints=[{"name": "a"}])
    assert [e.url for e in qstash.url_group.get("compat-fans").endpoints] == [destination.url("/fan-b")]
    qstash.url_group.delete("compat-fans")
    with pytest.raises(QStashError, match="404"):
        qstash.url_group.get("compat-fans")


def test_a_schedule_fires_on_time_and_stops_when_paused(qstash, destination):
    schedule_id = qstash.schedule.create_json(destination=destination.url("/tick"), cron="* * * * * */1",
                                              body={"tick": True})
    # two ticks of the every-second cron well within the wait, each its own message (when each came is
    # not compared: on a loaded machine a late first tick comes a moment before the next one)
    first, second = destination.wait_for("/tick", 2, timeout=10)
    assert first.headers["upstash-schedule-id"] == second.headers["upstash-schedule-id"] == schedule_id
    assert first.headers["upstash-message-id"] != second.headers["upstash-message-id"]
    qstash.schedule.pause(schedule_id)
    assert qstash.schedule.get(schedule_id).paused
    fired = len(destination.at("/tick"))
    time.sleep(1.5)
    assert len(destination.at("/tick")) <= fired + 1  # one may have been on its way
    schedule = qstash.schedule.get(schedule_id)
    assert schedule.last_schedule_time is not None and schedule.cron == "* * * * * */1"
    qstash.schedule.delete(schedule_id)
    assert schedule_id not in [s.schedule_id for s in qstash.schedule.list()]


def test_flow_control_keeps_one_delivery_of_a_key_at_a_time(qstash, destination):
    destination.slow("/flow", 0.05)
    for i in range(4):
        qstash.message.publish(url=destination.url("/flow"), body=str(i), flow_control={"key": "compat", "parallelism": 1})
    deliveries = destination.wait_for("/flow", 4)
    assert all(b.at - a.at >= 0.05 for a, b in itertools.pairwise(deliveries))


def test_rotated_keys_sign_the_next_deliveries(sandbox, qstash, destination):
    before = qstash.signing_key.get()
    after = qstash.signing_key.rotate()
    assert after.current == before.next and after.next != before.next
    assert sandbox.env["SVC_QUEUE_CURRENT_SIGNING_KEY"] == after.current
    qstash.message.publish(url=destination.url("/rotated"), body="r")
    [delivery] = destination.wait_for("/rotated")
    Receiver(current_signing_key=after.current, next_signing_key=after.next).verify(
        signature=delivery.headers["upstash-signature"], body="r", url=destination.url("/rotated"))


def test_a_destination_off_this_machine_is_refused_naming_the_rule(qstash):
    with pytest.raises(QStashError, match=r"400.*only to this machine.*--allow-destination"):
        qstash.message.publish(url="https://example.com/hook", body="x")


def test_the_async_client_publishes_and_cancels(sandbox, destination):
    async def main() -> None:
        client = AsyncQStash(sandbox.env["SVC_QUEUE_TOKEN"], base_url=sandbox.env["SVC_QUEUE_URL"])
        now = await client.message.publish_json(url=destination.url("/async"), body=[1, 2])
        later = await client.message.publish(url=destination.url("/async-later"), body="z", delay="10m")
        assert (await client.message.cancel_many([later.message_id])) == 1
        return now.message_id

    import asyncio

    message_id = asyncio.run(main())
    [delivery] = destination.wait_for("/async")
    assert delivery.headers["upstash-message-id"] == message_id and json.loads(delivery.body) == [1, 2]


def test_redacted_fields_are_delivered_but_not_shown(qstash, destination):
    published = qstash.message.publish(url=destination.url("/secret"), body="card 4242", delay="1h",
                                       headers={"Authorization": "Bearer abc", "X-Plain": "p"},
                                       redact={"body": True, "header": ["Authorization"]})
    shown = qstash.message.get(published.message_id)
    assert shown.body == "REDACTED" and shown.headers["Authorization"] == ["REDACTED"]
    assert shown.headers["X-Plain"] == ["p"]
    [created] = qstash.log.list(filter={"message_id": published.message_id}).logs
    assert base64.b64decode(created.body_base64 or "") == b"REDACTED"
    now = qstash.message.publish(url=destination.url("/secret"), body="card 4242",
                                 headers={"Authorization": "Bearer abc"}, redact={"body": True, "header": True})
    [delivery] = destination.wait_for("/secret")
    assert delivery.text == "card 4242" and delivery.headers["authorization"] == "Bearer abc"
    assert now.message_id == delivery.headers["upstash-message-id"]
