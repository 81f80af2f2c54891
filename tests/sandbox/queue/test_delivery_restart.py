"""Nothing accepted is lost: messages, deduplication ids and schedules kept before a SIGKILL are
delivered, honoured and fired after the sandbox starts again on its data directory."""

from __future__ import annotations

import signal

from qstash import QStash

from svckit.config import Settings
from tests.conftest import cli_sandbox, lines_until
from tests.receiver import Receiver


def _start(data_dir) -> tuple[object, QStash]:
    proc = cli_sandbox("--data-dir", str(data_dir), "--areas", "account,queue")
    settings = Settings.from_lines(lines_until(proc, "SVC_QUEUE_NEXT_SIGNING_KEY="))
    return proc, QStash(settings.queue_token, base_url=settings.queue_url)


def test_messages_deduplication_and_schedules_survive_a_sigkill(tmp_path):
    data = tmp_path / "data"
    with Receiver() as destination:
        proc, qstash = _start(data)
        try:
            waiting = [qstash.message.publish(url=destination.url("/later"), body=str(i), delay=2).message_id
                       for i in range(3)]
            once = qstash.message.publish(url=destination.url("/once"), body="first", delay=2,
                                          deduplication_id="pay-7").message_id
            qstash.schedule.create(destination=destination.url("/tick"), cron="* * * * * */1", body="tick",
                                   schedule_id="every-second")
            destination.wait_for("/tick")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        assert destination.at("/later") == [] and destination.at("/once") == []
        ticks = len(destination.at("/tick"))

        proc, qstash = _start(data)
        try:
            again = qstash.message.publish(url=destination.url("/once"), body="second", delay=2,
                                           deduplication_id="pay-7")
            assert again.deduplicated and again.message_id == once
            later = destination.wait_for("/later", 3, timeout=15)
            assert sorted(d.headers["upstash-message-id"] for d in later) == sorted(waiting)
            [paid] = destination.wait_for("/once", timeout=15)
            assert paid.text == "first"
            destination.wait_for("/tick", ticks + 2, timeout=15)  # the schedule fires again
            assert qstash.schedule.get("every-second").last_schedule_time is not None
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)
        assert [d.text for d in destination.at("/once")] == ["first"]
