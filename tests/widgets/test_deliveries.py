"""The Deliveries widget over real HTTP against a sandbox of the test's own, delivering to a receiver
on loopback: what it shows after a refresh, what following picks up, and its static view."""

from __future__ import annotations

import threading

from svckit.queue import Queue
from svckit.widgets import Deliveries
from tests.conftest import eventually
from tests.receiver import Receiver


def test_refresh_shows_each_message_with_its_answers_and_the_dlq(queue_sandbox):
    with Receiver() as destination, Queue.from_settings(queue_sandbox.settings) as queue:
        destination.answer("/flaky", 503, 200)
        destination.answer("/down", 500)
        ok = queue.publish("a", url=destination.url("/flaky"), retries=2, label="widget")
        dead = queue.publish("b", url=destination.url("/down"), retries=0, label="widget")
        view = Deliveries(queue, label="widget")
        eventually(lambda: set(view.refresh()["state"]) == {"DELIVERED", "FAILED"}, "both messages final", 15)
        rows = view.frame.set_index("message_id")
        assert rows.loc[ok.message_id, "statuses"] == "503 200" and rows.loc[dead.message_id, "in_dlq"]
        assert "delivered 1" in view.summary.value and "failed 1" in view.summary.value
        assert "1 in the DLQ" in view.summary.value
        assert ok.message_id in view.table.value and "503 200" in view.table.value
        static = view.static_html()
        assert ok.message_id in static and "Deliveries" in static  # the table and the chart's title
        assert {t.name for t in view.figure.figure.data} >= {"DELIVERED", "FAILED", "ERROR"}


def test_following_picks_up_new_deliveries_until_stopped(queue_sandbox):
    with Receiver() as destination, Queue.from_settings(queue_sandbox.settings) as queue:
        view = Deliveries(queue, label="live")
        view.interval = 0.1
        assert len(view.frame) == 0 and "no deliveries yet" in view.table.value
        view.follow_toggle.value = True  # the Follow button
        assert view.following
        sent = queue.publish("x", url=destination.url("/live"), label="live")
        eventually(lambda: sent.message_id in view.table.value and "delivered 1" in view.summary.value,
                   "the new delivery shown while following", 15)
        assert view.stop() and not view.following and view.follow_toggle.description == "Follow"
        count = view.refreshed
        queue.publish("y", url=destination.url("/live"), label="live")
        destination.wait_for("/live", 2)
        assert view.refreshed == count  # stopped: nothing read any more


def test_a_failed_read_is_said_not_raised(queue_sandbox):
    with Queue(queue_sandbox.env["SVC_QUEUE_URL"], "wrong-token") as queue:
        view = Deliveries(queue)
    assert view.message_kind == "error" and "Reading the events log failed" in view.message


class HeldEvents:
    """A queue client whose events read waits, once ``hold`` is set, for the test to let it answer."""

    def __init__(self, real: Queue) -> None:
        self.real = real
        self.hold, self.release = threading.Event(), threading.Event()

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def events(self, **kwargs):
        if self.hold.is_set():
            self.release.wait(10)
        return self.real.events(**kwargs)


def test_the_refresh_button_reads_off_the_kernels_thread(queue_sandbox):
    with Queue.from_settings(queue_sandbox.settings) as queue:
        held = HeldEvents(queue)
        view = Deliveries(held, label="held")
        assert view.refreshed == 1  # built: read at once
        held.hold.set()
        view.refresh_button.click()  # returns at once: the read waits in the job's thread
        assert view.loader.running and view.refreshed == 1
        held.release.set()
        assert view.wait(30) and view.refreshed == 2
