"""svckit's own queue client as a QStash client: publish, enqueue, read and cancel messages, queues, URL
groups, schedules, signing keys and a failed message retried from the DLQ, sync and async, over real
HTTP against a sandbox of the test's own, delivering to a receiver on loopback; and their frames."""

from __future__ import annotations

import json

import pytest
from qstash import Receiver as Verifier

from svckit import frames
from svckit.errors import InvalidArgument, NotFound
from svckit.queue import Published
from tests.conftest import eventually
from tests.receiver import Receiver


@pytest.fixture
def destination():
    with Receiver() as receiver:
        yield receiver


def test_publish_with_options_delivers_a_signed_message(queue, destination):
    sent = queue.publish({"order": 1}, url=destination.url("/hook"), headers={"X-Tenant": "a"}, retries=1,
                         timeout=5, label="svckit-client")
    assert isinstance(sent, Published) and sent.message_id.startswith("msg_")
    [delivery] = destination.wait_for("/hook")
    assert json.loads(delivery.body) == {"order": 1} and delivery.headers["x-tenant"] == "a"
    assert delivery.headers["content-type"] == "application/json"
    keys = queue.signing_keys()
    assert "sig_" not in repr(keys)  # the keys are secrets: masked when shown
    Verifier(current_signing_key=keys.current.get_secret_value(), next_signing_key=keys.next.get_secret_value()
             ).verify(signature=delivery.headers["upstash-signature"], body=delivery.text, url=destination.url("/hook"))
    rotated = queue.signing_keys(rotate=True)
    assert rotated.current.get_secret_value() == keys.next.get_secret_value()


def test_a_waiting_message_is_read_canceled_and_framed(queue, destination):
    later = [queue.publish(f"m{i}", url=destination.url("/later"), delay="1h", label="later") for i in range(3)]
    message = queue.message(later[0].message_id)
    assert message.body == "m0" and message.not_before - message.created_at == 3_600_000
    frame = frames.messages_frame([queue.message(p.message_id) for p in later])
    assert list(frame["message_id"]) == [p.message_id for p in later] and set(frame["label"]) == {"later"}
    queue.cancel_message(later[0].message_id)
    assert queue.cancel_messages([p.message_id for p in later]) == 2
    with pytest.raises(NotFound):
        queue.message(later[1].message_id)


def test_a_bulk_cancel_whose_body_is_not_an_object_cancels_nothing(queue, raw_queue, destination):
    waiting = queue.publish("stays", url=destination.url("/later"), delay="1h")
    for body in (json.dumps([waiting.message_id]), "[" * 100_000):  # not an object; nested too deep
        r = raw_queue.request("DELETE", "/v2/messages", content=body)
        assert r.status_code == 400 and "request body" in r.json()["error"], r.text
    assert queue.message(waiting.message_id).message_id == waiting.message_id  # still waiting


def test_queues_url_groups_and_schedules(queue, destination):
    queue.upsert_queue("client-q", parallelism=2)
    sent = queue.publish("queued", url=destination.url("/q"), queue="client-q")
    destination.wait_for("/q")
    assert [(q.name, q.parallelism) for q in queue.queues()] == [("client-q", 2)]
    queue.pause_queue("client-q")
    assert queue.queue_info("client-q").paused
    assert list(frames.queues_frame(queue.queues())["paused"]) == [True]
    queue.delete_queue("client-q")

    queue.add_endpoints("client-g", [destination.url("/a"), {"url": destination.url("/b"), "name": "b"}])
    fanned = queue.publish("news", url_group="client-g")
    assert sorted(p.url for p in fanned) == [destination.url("/a"), destination.url("/b")]
    frame = frames.url_groups_frame(queue.url_groups())
    assert list(frame["endpoint_name"].fillna("")) == ["", "b"]
    queue.remove_endpoints("client-g", [destination.url("/a")])
    assert [e.url for e in queue.url_group("client-g").endpoints] == [destination.url("/b")]
    queue.delete_url_group("client-g")

    schedule_id = queue.create_schedule("tick", destination=destination.url("/tick"), cron="* * * * * */1")
    destination.wait_for("/tick", timeout=10)
    eventually(lambda: queue.schedule(schedule_id).last_schedule_time, "the schedule's last time", 10)
    queue.pause_schedule(schedule_id)
    [row] = frames.schedules_frame(queue.schedules()).itertuples()
    assert row.schedule_id == schedule_id and row.paused
    queue.delete_schedule(schedule_id)
    assert sent.message_id and queue.schedules() == []


def test_a_failed_message_is_retried_from_the_dlq(queue, destination):
    destination.answer("/down", 500)
    sent = queue.publish("p", url=destination.url("/down"), retries=0, label="client-dlq")
    destination.wait_for("/down")
    entry = eventually(lambda: next(iter(queue.iter_dlq(label="client-dlq")), None), "the DLQ entry", 10)
    assert entry.message_id == sent.message_id and entry.response_status == 500
    events = frames.events_frame(queue.iter_events(message_id=sent.message_id))
    assert events["state"].iloc[0] == "FAILED"  # newest first
    destination.answer("/down", 200)
    again = queue.retry_dlq(entry.dlq_id)
    assert again.message_id != sent.message_id
    destination.wait_for("/down", 2)


def test_arguments_are_checked_before_anything_is_sent(queue):
    with pytest.raises(InvalidArgument, match="exactly one of url and url_group"):
        queue.publish("x")
    with pytest.raises(InvalidArgument, match="retries"):
        queue.publish("x", url="http://127.0.0.1:9/x", retries=-1)
    with pytest.raises(InvalidArgument, match="method"):
        queue.publish("x", url="http://127.0.0.1:9/x", method="TRACE")


async def test_the_async_client_publishes_and_lists(aqueue, destination):
    sent = await aqueue.publish(b"bytes", url=destination.url("/async"))
    [delivery] = destination.wait_for("/async")
    assert delivery.body == b"bytes" and delivery.headers["upstash-message-id"] == sent.message_id
    await aqueue.upsert_queue("async-q")
    assert [q.name for q in await aqueue.queues()] == ["async-q"]


def test_the_deliveries_frame_follows_each_message(queue, destination):
    destination.answer("/flaky", 503, 503, 200)  # two failures, then delivered
    destination.answer("/dead", 500)
    flaky = queue.publish("f", url=destination.url("/flaky"), retries=3, label="follow")
    dead = queue.publish("d", url=destination.url("/dead"), retries=1, label="follow")
    waiting = queue.publish("w", url=destination.url("/later"), delay="1h", label="follow")

    def folded():
        frame = frames.deliveries_frame(queue.iter_events(label="follow")).set_index("message_id")
        done = {flaky.message_id: "DELIVERED", dead.message_id: "FAILED"}
        return [frame] if all(frame["state"].get(m) == s for m, s in done.items()) else None

    [frame] = eventually(folded, "both messages final", 15)
    assert frame.loc[flaky.message_id, "statuses"] == "503 503 200"
    assert (frame.loc[flaky.message_id, "attempts"], frame.loc[flaky.message_id, "in_dlq"]) == (3, False)
    assert frame.loc[dead.message_id, "statuses"] == "500 500" and frame.loc[dead.message_id, "in_dlq"]
    assert "500" in frame.loc[dead.message_id, "error"]
    assert frame.loc[waiting.message_id, "state"] == "CREATED" and frame.loc[waiting.message_id, "attempts"] == 0
