"""The sans-I/O core of the queue area's messages (the local QStash of the sandbox, and the hosted
service's publish API): ``build_*`` functions validate arguments and describe requests; the
:class:`~svckit.queue.Queue` clients send them. A message's options go as request headers under the
spec's neutral prefix (``Service-Delay``; the hosted service's SDKs send ``Upstash-*``, which the
sandbox takes too). Durations are seconds (int or float) or the service's text (``"10s"``, ``"1d2h"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from svckit._http import ApiRequest
from svckit.errors import InvalidArgument, ProtocolError
from svckit.queue.models import Published
from svckit.queue.protocol import _ids, _path_id, _text, decode_model, to_unix_ms

_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")


def _duration(argument: str, value: Any) -> str:
    if isinstance(value, bool):
        raise InvalidArgument(argument, f"must be seconds or a duration such as '10s', got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise InvalidArgument(argument, f"must not be negative, got {value!r}")
        return f"{value:g}s"
    return _text(argument, value)


def _count(argument: str, value: Any, minimum: int = 0) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument(argument, f"must be an integer of at least {minimum}, got {value!r}")
    return str(value)


def message_headers(*, method: str | None = None, headers: Mapping[str, str] | None = None,
                    content_type: str | None = None, delay: Any = None, not_before: datetime | int | None = None,
                    retries: int | None = None, retry_delay: str | None = None, timeout: Any = None,
                    callback: str | None = None, failure_callback: str | None = None,
                    deduplication_id: str | None = None, content_based_deduplication: bool = False,
                    flow_control_key: str | None = None, flow_control_value: str | None = None,
                    label: str | None = None, redact: Sequence[str] = ()) -> dict[str, str]:
    """A message's options as request headers, each sent only when given. ``headers`` are forwarded to
    the destination; ``not_before`` is a datetime (naive = UTC) or Unix ms, sent in seconds; ``redact``
    names ``body``, ``header`` or ``header[Name]``."""
    out: dict[str, str] = {}
    if method is not None:
        if method.upper() not in _METHODS:
            raise InvalidArgument("method", f"must be one of {', '.join(_METHODS)}, got {method!r}")
        out["Service-Method"] = method.upper()
    for name, value in (headers or {}).items():
        out[f"Service-Forward-{_text('headers', name)}"] = str(value)
    if content_type is not None:
        out["Content-Type"] = _text("content_type", content_type)
    if delay is not None:
        out["Service-Delay"] = _duration("delay", delay)
    if not_before is not None:
        out["Service-Not-Before"] = str(to_unix_ms("not_before", not_before) // 1000)
    if retries is not None:
        out["Service-Retries"] = _count("retries", retries)
    if timeout is not None:
        out["Service-Timeout"] = _duration("timeout", timeout)
    for name, value in (("Service-Retry-Delay", retry_delay), ("Service-Callback", callback),
                        ("Service-Failure-Callback", failure_callback),
                        ("Service-Deduplication-Id", deduplication_id), ("Service-Label", label),
                        ("Service-Flow-Control-Key", flow_control_key),
                        ("Service-Flow-Control-Value", flow_control_value)):
        if value is not None:
            out[name] = _text(name.removeprefix("Service-").lower().replace("-", "_"), value)
    if content_based_deduplication:
        out["Service-Content-Based-Deduplication"] = "true"
    if redact:
        out["Service-Redact-Fields"] = ",".join(_text("redact", r) for r in redact)
    return out


def _body(body: Any, headers: dict[str, str]) -> bytes:
    """Bytes and str go as they are; anything else as JSON (with its Content-Type, unless one was given)."""
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    headers.setdefault("Content-Type", "application/json")
    return json.dumps(body).encode()


def build_publish_request(body: Any = None, *, url: str | None = None, url_group: str | None = None,
                          queue: str | None = None, **options: Any) -> ApiRequest:
    """``POST /v2/publish/{url or group}`` (``/v2/enqueue/{queue}/...`` with ``queue``): one message.
    Give exactly one of ``url`` and ``url_group``; options as :func:`message_headers`."""
    if (url is None) == (url_group is None):
        raise InvalidArgument("url", "give exactly one of url and url_group")
    destination = _text("url", url) if url is not None else quote(_text("url_group", url_group), safe="")
    headers = message_headers(**options)
    content = _body(body, headers)
    path = f"/v2/publish/{destination}" if queue is None else f"/v2/enqueue/{_path_id('queue', queue)}/{destination}"
    return ApiRequest("POST", path, headers=headers, content=content)


def build_message_request(message_id: str) -> ApiRequest:
    return ApiRequest("GET", f"/v2/messages/{_path_id('message_id', message_id)}", idempotent=True)


def build_cancel_message_request(message_id: str) -> ApiRequest:
    return ApiRequest("DELETE", f"/v2/messages/{_path_id('message_id', message_id)}", idempotent=True)


def build_cancel_messages_request(message_ids: Sequence[str]) -> ApiRequest:
    return ApiRequest("DELETE", "/v2/messages", json={"messageIds": _ids("message_ids", message_ids)}, idempotent=True)


def build_queue_upsert_request(name: str, parallelism: int = 1, paused: bool = False) -> ApiRequest:
    _count("parallelism", parallelism, 1)
    return ApiRequest("POST", "/v2/queues", json={"queueName": _text("name", name), "parallelism": parallelism,
                                                  "paused": bool(paused)}, idempotent=True)


def build_queue_request(name: str | None = None) -> ApiRequest:
    """One queue, or every queue (no ``name``)."""
    return ApiRequest("GET", "/v2/queues" if name is None else f"/v2/queues/{_path_id('name', name)}", idempotent=True)


def build_queue_action_request(name: str, action: str) -> ApiRequest:
    """``pause``, ``resume`` or ``delete`` a queue."""
    if action == "delete":
        return ApiRequest("DELETE", f"/v2/queues/{_path_id('name', name)}", idempotent=True)
    if action not in ("pause", "resume"):
        raise InvalidArgument("action", f"must be pause, resume or delete, got {action!r}")
    return ApiRequest("POST", f"/v2/queues/{_path_id('name', name)}/{action}", idempotent=True)


def build_endpoints_request(group: str, endpoints: Sequence[str | Mapping[str, str]], *, remove: bool = False) -> ApiRequest:
    """Add (or ``remove``) endpoints of URL group ``group``: URLs, or ``{"url", "name"}`` objects."""
    items = [{"url": e} if isinstance(e, str) else dict(e) for e in endpoints]
    if not items:
        raise InvalidArgument("endpoints", "give at least one endpoint")
    return ApiRequest("DELETE" if remove else "POST", f"/v2/topics/{_path_id('group', group)}/endpoints",
                      json={"endpoints": items}, idempotent=True)


def build_url_group_request(name: str | None = None, *, delete: bool = False) -> ApiRequest:
    if name is None:
        return ApiRequest("GET", "/v2/topics", idempotent=True)
    return ApiRequest("DELETE" if delete else "GET", f"/v2/topics/{_path_id('name', name)}", idempotent=True)


def build_schedule_create_request(body: Any = None, *, destination: str, cron: str, schedule_id: str | None = None,
                                  queue: str | None = None, **options: Any) -> ApiRequest:
    """``POST /v2/schedules/{destination}``: publish ``body`` to ``destination`` (a URL or a URL group)
    on ``cron``; ``schedule_id`` replaces that schedule; options as :func:`message_headers`."""
    headers = message_headers(**options)
    headers["Service-Cron"] = _text("cron", cron)
    if schedule_id is not None:
        headers["Service-Schedule-Id"] = _text("schedule_id", schedule_id)
    if queue is not None:
        headers["Service-Queue-Name"] = _text("queue", queue)
    content = _body(body, headers)
    return ApiRequest("POST", f"/v2/schedules/{_text('destination', destination)}", headers=headers, content=content)


def build_schedule_request(schedule_id: str | None = None, action: str = "get") -> ApiRequest:
    """One schedule (``get``, ``delete``, ``pause``, ``resume``), or every schedule (no id)."""
    if schedule_id is None:
        return ApiRequest("GET", "/v2/schedules", idempotent=True)
    path = f"/v2/schedules/{_path_id('schedule_id', schedule_id)}"
    if action == "get":
        return ApiRequest("GET", path, idempotent=True)
    if action == "delete":
        return ApiRequest("DELETE", path, idempotent=True)
    if action not in ("pause", "resume"):
        raise InvalidArgument("action", f"must be get, delete, pause or resume, got {action!r}")
    return ApiRequest("PATCH", f"{path}/{action}", idempotent=True)


def build_signing_keys_request(rotate: bool = False) -> ApiRequest:
    return ApiRequest("POST", "/v2/keys/rotate") if rotate else ApiRequest("GET", "/v2/keys", idempotent=True)


def build_retry_dlq_request(dlq_id: str) -> ApiRequest:
    """Deliver the failed message of DLQ entry ``dlq_id`` again, as a new message."""
    return ApiRequest("POST", f"/v2/dlq/retry/{_path_id('dlq_id', dlq_id)}")


def decode_list(model: Any, body: Any, what: str) -> list[Any]:
    """A reply array of objects -> ``model`` each; ProtocolError when it is not one."""
    if not isinstance(body, list):
        raise ProtocolError(f"{what}: expected a JSON array, got {type(body).__name__}")
    return [decode_model(model, item, what) for item in body]


def decode_published(body: Any) -> Any:
    """A publish's reply: one :class:`~svckit.queue.models.Published`, or a list of them (a URL group)."""
    return decode_list(Published, body, "publish") if isinstance(body, list) else decode_model(Published, body, "publish")


def decode_schedule_id(body: Any) -> str:
    """``{"scheduleId": ...}`` -> the id."""
    value = body.get("scheduleId") if isinstance(body, Mapping) else None
    if not isinstance(value, str) or not value:
        raise ProtocolError(f"create schedule: expected {{'scheduleId': <id>}}, got {body!r}")
    return value
