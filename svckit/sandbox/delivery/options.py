"""What a message asks for: the ``Upstash-*`` headers of a publish, an enqueue, a batch item or a
schedule, read into a :class:`MessageOptions` (sans I/O: a mapping of headers in, a value or an
:class:`OptionError` naming the header out).

Headers arrive here by their neutral names (``service-retries``: :mod:`svckit.sandbox.headers` renames
every ``upstash-*`` header before an area sees it), lower-cased, one value each. The SDKs differ in
small ways, all accepted: the JS SDK lower-cases every name and sends ``true`` where the Python SDK
sends ``True``; ``Upstash-Flow-Control-Value`` is ``"parallelism=1, rate=10, period=1m"`` or empty (a
key alone); ``Upstash-Redact-Fields`` is ``body``, ``header``, ``header[Name]`` (the docs also write
``headers``), comma-separated. Sources: qstash 3.4.0 ``message.py`` ``prepare_headers``, and
@upstash/qstash 2.12.0 ``processHeaders``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from svckit.sandbox.delivery.backoff import retry_delay_problem
from svckit.sandbox.delivery.destination import NAME

PREFIX = "service-"
FORWARD = PREFIX + "forward-"
#: headers never delivered to a destination, whatever a publisher forwards: they describe one
#: connection (hop by hop, RFC 9110 7.6.1) or are the delivery's own
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
                        "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length"})
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")
#: the configuration headers of a callback (``Upstash-Callback-Retries``); any other
#: ``Upstash-Callback-X`` (the Python SDK's ``callback_headers``) or ``-Forward-X`` is forwarded as X
CALLBACK_SETTINGS = ("timeout", "retries", "retry-delay", "delay", "method")

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


class OptionError(ValueError):
    """A header of a message that cannot be read: the message is refused (400) with this text."""


def duration(name: str, raw: str) -> float:
    """Seconds of a duration header: ``10s``, ``1m``, ``2h``, ``1d``, a sum such as ``1d10h30m``,
    ``1.5s`` (the JS SDK's timeout), or a bare number of seconds."""
    text = raw.strip()
    try:
        value = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise OptionError(f"{_header(name)}: not a duration, got {raw!r}; write a number and a unit "
                              "(ms, s, m, h, d), e.g. 10s, 1m, 1d10h30m") from None
        value = sum(float(n) * _UNITS[u] for n, u in parts)
    if value < 0 or math.isnan(value):
        raise OptionError(f"{_header(name)}: must not be negative, got {raw!r}")
    return value


def _header(name: str) -> str:
    """The vendor's spelling of a neutral header name, as the user wrote it in their SDK call."""
    return "Upstash-" + "-".join(w.capitalize() for w in name.removeprefix(PREFIX).split("-"))


def _int(headers: Mapping[str, str], name: str) -> int | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise OptionError(f"{_header(name)}: must be a whole number, got {raw!r}") from None
    if value < 0:
        raise OptionError(f"{_header(name)}: must not be negative, got {value}")
    return value


def _bool(headers: Mapping[str, str], name: str) -> bool:
    raw = headers.get(name)
    if raw is None:
        return False
    if raw.strip().lower() not in ("true", "false"):
        raise OptionError(f"{_header(name)}: must be true or false, got {raw!r}")
    return raw.strip().lower() == "true"


def _retry_delay(headers: Mapping[str, str], name: str) -> str | None:
    expression = headers.get(name)
    problem = None if expression is None else retry_delay_problem(expression)
    if problem is not None:
        raise OptionError(f"{_header(name)}: {problem}")
    return expression


def _method(headers: Mapping[str, str], name: str) -> str:
    method = (headers.get(name) or "POST").strip().upper()
    if method not in METHODS:
        raise OptionError(f"{_header(name)}: must be one of {', '.join(METHODS)}, got {method!r}")
    return method


@dataclass(frozen=True)
class FlowControl:
    """``Upstash-Flow-Control-Key`` and what its value sets: at most ``parallelism`` deliveries of the
    key at once, at most ``rate`` started per ``period`` seconds (None: no bound)."""

    key: str
    value: str = ""
    parallelism: int | None = None
    rate: int | None = None
    period: float = 1.0


def flow_control(headers: Mapping[str, str]) -> FlowControl | None:
    key = headers.get(PREFIX + "flow-control-key")
    value = headers.get(PREFIX + "flow-control-value", "")
    if key is None:
        if value.strip():
            raise OptionError("Upstash-Flow-Control-Value: give Upstash-Flow-Control-Key with it")
        return None
    return flow_control_of(key, value)


def flow_control_of(key: str, value: str | None) -> FlowControl:
    """A flow control key and its value (``parallelism=N, rate=N, period=DURATION``), as a message
    header gives them or as a message row keeps them."""
    value = value or ""
    if not key.strip():
        raise OptionError("Upstash-Flow-Control-Key: must not be empty")
    settings: dict[str, float | int] = {}
    for part in filter(None, (p.strip() for p in value.split(","))):
        name, sep, raw = (x.strip() for x in part.partition("="))
        if not sep or name not in ("parallelism", "rate", "period") or name in settings:
            raise OptionError(f"Upstash-Flow-Control-Value: {part!r} is not one of parallelism=N, rate=N, "
                              "period=DURATION (each at most once)")
        if name == "period":
            settings[name] = duration(PREFIX + "flow-control-value", raw)
            if not 0 < settings[name] <= 7 * 86400:
                raise OptionError(f"Upstash-Flow-Control-Value: period must be more than 0 and at most a week, got {raw!r}")
        else:
            if not raw.isdigit() or int(raw) < 1:
                raise OptionError(f"Upstash-Flow-Control-Value: {name} must be a whole number of at least 1, got {raw!r}")
            settings[name] = int(raw)
    return FlowControl(key, value, settings.get("parallelism"), settings.get("rate"),  # type: ignore[arg-type]
                       float(settings.get("period", 1.0)))


@dataclass(frozen=True)
class CallbackOptions:
    """How a callback (or failure callback) message is delivered: its own method, retries, delay,
    timeout and headers (``Upstash-Callback-Retries``, ``Upstash-Callback-Forward-X`` ...)."""

    url: str | None = None
    method: str = "POST"
    retries: int | None = None
    retry_delay: str | None = None
    delay: float = 0.0
    timeout: float | None = None
    headers: tuple[tuple[str, str], ...] = ()


def _callback(headers: Mapping[str, str], kind: str) -> CallbackOptions:
    base = PREFIX + kind
    forwarded = []
    for name, value in headers.items():
        rest = name.removeprefix(base + "-")
        if rest == name or rest in CALLBACK_SETTINGS:
            continue
        forwarded.append((rest.removeprefix("forward-"), value))
    retry_delay = _retry_delay(headers, base + "-retry-delay")
    delay = headers.get(base + "-delay")
    timeout = headers.get(base + "-timeout")
    return CallbackOptions(
        url=headers.get(base), method=_method(headers, base + "-method"), retries=_int(headers, base + "-retries"),
        retry_delay=retry_delay, delay=0.0 if delay is None else duration(base + "-delay", delay),
        timeout=None if timeout is None else duration(base + "-timeout", timeout),
        headers=tuple(p for p in forwarded if p[0] not in HOP_BY_HOP))


@dataclass(frozen=True)
class MessageOptions:
    """Everything a publish asks of its delivery, read from its headers (see :func:`read_options`).
    ``forward`` are the headers the destination gets, Content-Type among them; times in seconds;
    ``not_before`` is a Unix time (seconds) and wins over ``delay``."""

    method: str = "POST"
    forward: tuple[tuple[str, str], ...] = ()
    retries: int | None = None
    retry_delay: str | None = None
    delay: float = 0.0
    not_before: int | None = None
    timeout: float | None = None
    callback: CallbackOptions = field(default_factory=CallbackOptions)
    failure_callback: CallbackOptions = field(default_factory=CallbackOptions)
    deduplication_id: str | None = None
    content_based_deduplication: bool = False
    flow_control: FlowControl | None = None
    labels: tuple[str, ...] = ()
    redact: tuple[str, ...] = ()

    @property
    def label(self) -> str | None:
        return ",".join(self.labels) or None


def forwarded_headers(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The headers a message carries to its destination: ``Upstash-Forward-X: v`` as ``X: v`` and the
    Content-Type; hop-by-hop headers are dropped (a publisher cannot set a delivery's framing)."""
    out = []
    if "content-type" in headers:
        out.append(("content-type", headers["content-type"]))
    for name, value in headers.items():
        if name.startswith(FORWARD) and name[len(FORWARD):] and name[len(FORWARD):] not in HOP_BY_HOP:
            out.append((name[len(FORWARD):], value))
    return tuple(out)


def _labels(raw: str | None) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not raw.strip():
        raise OptionError("Upstash-Label: must not be empty")
    labels = tuple(p.strip() for p in raw.split(",") if p.strip())
    for label in labels:
        if not NAME.match(label):
            raise OptionError(f"Upstash-Label: {label!r} may hold only letters, digits, '.', '_' and '-' "
                              "(at most 256 of them)")
    return labels


def _redact(raw: str | None) -> tuple[str, ...]:
    if raw is None:
        return ()
    fields = []
    for part in filter(None, (p.strip() for p in raw.split(","))):
        match = re.fullmatch(r"(body|headers?)(?:\[([^\]]+)\])?", part)
        if match is None or (match.group(1) == "body" and match.group(2)):
            raise OptionError(f"Upstash-Redact-Fields: {part!r} is not body, header or header[Name]")
        fields.append("body" if match.group(1) == "body" else
                      f"header[{match.group(2)}]" if match.group(2) else "header")
    return tuple(dict.fromkeys(fields))


def read_options(headers: Mapping[str, str]) -> MessageOptions:
    """A message's options from its request headers (lower-case neutral names, see the module docstring)."""
    delay = headers.get(PREFIX + "delay")
    timeout = headers.get(PREFIX + "timeout")
    retry_delay = _retry_delay(headers, PREFIX + "retry-delay")
    dedup = headers.get(PREFIX + "deduplication-id")
    if dedup is not None and not dedup.strip():
        raise OptionError("Upstash-Deduplication-Id: must not be empty")
    seconds = None if timeout is None else duration(PREFIX + "timeout", timeout)
    if seconds == 0:
        raise OptionError("Upstash-Timeout: must be more than 0")
    return MessageOptions(
        method=_method(headers, PREFIX + "method"), forward=forwarded_headers(headers),
        retries=_int(headers, PREFIX + "retries"), retry_delay=retry_delay,
        delay=0.0 if delay is None else duration(PREFIX + "delay", delay),
        not_before=_int(headers, PREFIX + "not-before"), timeout=seconds,
        callback=_callback(headers, "callback"), failure_callback=_callback(headers, "failure-callback"),
        deduplication_id=dedup, content_based_deduplication=_bool(headers, PREFIX + "content-based-deduplication"),
        flow_control=flow_control(headers), labels=_labels(headers.get(PREFIX + "label")),
        redact=_redact(headers.get(PREFIX + "redact-fields")),
    )
