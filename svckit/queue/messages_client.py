"""The message methods of :class:`~svckit.queue.Queue` and :class:`~svckit.queue.AsyncQueue`: publish
and enqueue, read and cancel messages, queues, URL groups, schedules, signing keys, and a failed
message delivered again from the DLQ. Requests are built by :mod:`svckit.queue.messaging`; these
mixins only send them (``self._call``) and decode the replies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from svckit.queue.messaging import (
    build_cancel_message_request,
    build_cancel_messages_request,
    build_endpoints_request,
    build_message_request,
    build_publish_request,
    build_queue_action_request,
    build_queue_request,
    build_queue_upsert_request,
    build_retry_dlq_request,
    build_schedule_create_request,
    build_schedule_request,
    build_signing_keys_request,
    build_url_group_request,
    decode_list,
    decode_published,
    decode_schedule_id,
)
from svckit.queue.models import Message, Published, QueueInfo, Schedule, SigningKeys, UrlGroup
from svckit.queue.protocol import decode_count, decode_model

Endpoints = Sequence[str | Mapping[str, str]]


class Messages:
    """Publishing and its resources, over ``self._call`` (the sync client's)."""

    _call: Any

    def publish(self, body: Any = None, *, url: str | None = None, url_group: str | None = None,
                queue: str | None = None, **options: Any) -> Published | list[Published]:
        """Publish ``body`` (bytes and str as they are, anything else as JSON) to ``url`` or to every
        endpoint of ``url_group`` (a list back, one per endpoint), on ``queue`` when given. Options:
        ``delay``, ``not_before``, ``retries``, ``retry_delay``, ``timeout``, ``method``, ``headers``,
        ``callback``, ``failure_callback``, ``deduplication_id``, ``content_based_deduplication``,
        ``flow_control_key`` / ``_value``, ``label``, ``redact``, ``content_type``."""
        return decode_published(self._call(build_publish_request(body, url=url, url_group=url_group, queue=queue,
                                                                 **options)))

    def message(self, message_id: str) -> Message:
        """A message waiting for delivery (NotFound once it was delivered, failed or canceled)."""
        return decode_model(Message, self._call(build_message_request(message_id)), "message")

    def cancel_message(self, message_id: str) -> None:
        self._call(build_cancel_message_request(message_id))

    def cancel_messages(self, message_ids: Sequence[str]) -> int:
        """Cancel the waiting messages among ``message_ids``; returns how many were."""
        return decode_count(self._call(build_cancel_messages_request(message_ids)), "cancelled", "cancel")

    def upsert_queue(self, name: str, parallelism: int = 1, paused: bool = False) -> None:
        self._call(build_queue_upsert_request(name, parallelism, paused))

    def queue_info(self, name: str) -> QueueInfo:
        return decode_model(QueueInfo, self._call(build_queue_request(name)), "queue")

    def queues(self) -> list[QueueInfo]:
        return decode_list(QueueInfo, self._call(build_queue_request()), "queues")

    def pause_queue(self, name: str, paused: bool = True) -> None:
        self._call(build_queue_action_request(name, "pause" if paused else "resume"))

    def delete_queue(self, name: str) -> None:
        self._call(build_queue_action_request(name, "delete"))

    def add_endpoints(self, group: str, endpoints: Endpoints) -> None:
        """Add endpoints (URLs, or ``{"url", "name"}``) to URL group ``group`` (made if new)."""
        self._call(build_endpoints_request(group, endpoints))

    def remove_endpoints(self, group: str, endpoints: Endpoints) -> None:
        self._call(build_endpoints_request(group, endpoints, remove=True))

    def url_group(self, name: str) -> UrlGroup:
        return decode_model(UrlGroup, self._call(build_url_group_request(name)), "URL group")

    def url_groups(self) -> list[UrlGroup]:
        return decode_list(UrlGroup, self._call(build_url_group_request()), "URL groups")

    def delete_url_group(self, name: str) -> None:
        self._call(build_url_group_request(name, delete=True))

    def create_schedule(self, body: Any = None, *, destination: str, cron: str, **options: Any) -> str:
        """Publish ``body`` to ``destination`` on ``cron``; returns the schedule's id (``schedule_id``
        replaces that schedule; ``queue`` enqueues each firing; other options as :meth:`publish`)."""
        return decode_schedule_id(self._call(build_schedule_create_request(body, destination=destination, cron=cron,
                                                                           **options)))

    def schedule(self, schedule_id: str) -> Schedule:
        return decode_model(Schedule, self._call(build_schedule_request(schedule_id)), "schedule")

    def schedules(self) -> list[Schedule]:
        return decode_list(Schedule, self._call(build_schedule_request()), "schedules")

    def pause_schedule(self, schedule_id: str, paused: bool = True) -> None:
        self._call(build_schedule_request(schedule_id, "pause" if paused else "resume"))

    def delete_schedule(self, schedule_id: str) -> None:
        self._call(build_schedule_request(schedule_id, "delete"))

    def signing_keys(self, rotate: bool = False) -> SigningKeys:
        """The keys deliveries are signed with; ``rotate=True`` makes the next one current first."""
        return decode_model(SigningKeys, self._call(build_signing_keys_request(rotate)), "signing keys")

    def retry_dlq(self, dlq_id: str) -> Published:
        """Deliver the failed message of DLQ entry ``dlq_id`` again, as a new message."""
        return decode_model(Published, self._call(build_retry_dlq_request(dlq_id)), "retry")


class AsyncMessages:
    """:class:`Messages` for the asyncio client: the same methods, awaited."""

    _call: Any

    async def publish(self, body: Any = None, *, url: str | None = None, url_group: str | None = None,
                      queue: str | None = None, **options: Any) -> Published | list[Published]:
        return decode_published(await self._call(build_publish_request(body, url=url, url_group=url_group,
                                                                       queue=queue, **options)))

    async def message(self, message_id: str) -> Message:
        return decode_model(Message, await self._call(build_message_request(message_id)), "message")

    async def cancel_message(self, message_id: str) -> None:
        await self._call(build_cancel_message_request(message_id))

    async def cancel_messages(self, message_ids: Sequence[str]) -> int:
        return decode_count(await self._call(build_cancel_messages_request(message_ids)), "cancelled", "cancel")

    async def upsert_queue(self, name: str, parallelism: int = 1, paused: bool = False) -> None:
        await self._call(build_queue_upsert_request(name, parallelism, paused))

    async def queue_info(self, name: str) -> QueueInfo:
        return decode_model(QueueInfo, await self._call(build_queue_request(name)), "queue")

    async def queues(self) -> list[QueueInfo]:
        return decode_list(QueueInfo, await self._call(build_queue_request()), "queues")

    async def pause_queue(self, name: str, paused: bool = True) -> None:
        await self._call(build_queue_action_request(name, "pause" if paused else "resume"))

    async def delete_queue(self, name: str) -> None:
        await self._call(build_queue_action_request(name, "delete"))

    async def add_endpoints(self, group: str, endpoints: Endpoints) -> None:
        await self._call(build_endpoints_request(group, endpoints))

    async def remove_endpoints(self, group: str, endpoints: Endpoints) -> None:
        await self._call(build_endpoints_request(group, endpoints, remove=True))

    async def url_group(self, name: str) -> UrlGroup:
        return decode_model(UrlGroup, await self._call(build_url_group_request(name)), "URL group")

    async def url_groups(self) -> list[UrlGroup]:
        return decode_list(UrlGroup, await self._call(build_url_group_request()), "URL groups")

    async def delete_url_group(self, name: str) -> None:
        await self._call(build_url_group_request(name, delete=True))

    async def create_schedule(self, body: Any = None, *, destination: str, cron: str, **options: Any) -> str:
        return decode_schedule_id(await self._call(build_schedule_create_request(
            body, destination=destination, cron=cron, **options)))

    async def schedule(self, schedule_id: str) -> Schedule:
        return decode_model(Schedule, await self._call(build_schedule_request(schedule_id)), "schedule")

    async def schedules(self) -> list[Schedule]:
        return decode_list(Schedule, await self._call(build_schedule_request()), "schedules")

    async def pause_schedule(self, schedule_id: str, paused: bool = True) -> None:
        await self._call(build_schedule_request(schedule_id, "pause" if paused else "resume"))

    async def delete_schedule(self, schedule_id: str) -> None:
        await self._call(build_schedule_request(schedule_id, "delete"))

    async def signing_keys(self, rotate: bool = False) -> SigningKeys:
        return decode_model(SigningKeys, await self._call(build_signing_keys_request(rotate)), "signing keys")

    async def retry_dlq(self, dlq_id: str) -> Published:
        return decode_model(Published, await self._call(build_retry_dlq_request(dlq_id)), "retry")
