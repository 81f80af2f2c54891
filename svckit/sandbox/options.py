"""The sandbox's options: every keyword ``Sandbox(...)`` takes beyond its own (data_dir, port, host, seed,
areas, tls), typed, bounded and documented in one place.

:func:`parse_options` reads them once, when the :class:`~svckit.sandbox.server.Sandbox` is made: an unknown
name (a typo: ``kv_max_reqest_size``) or a bad value (``kv_max_streams=0``) is a :class:`SandboxOptionError`
naming the option, before anything starts. Each area reads the frozen :class:`SandboxOptions` from
``SandboxContext.options`` by attribute. ``None`` for any option means its default. ``svckit sandbox``
maps its command-line options onto the same names (svckit/cli.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MiB = 1024 * 1024
#: a count or size: a whole number above 0 (strict: not True, not "5", not 5.0)
PositiveInt = Annotated[int, Field(gt=0, strict=True)]
#: seconds, or another quantity above 0: finite
PositiveFloat = Annotated[float, Field(gt=0, strict=True, allow_inf_nan=False)]
#: a delay or scale that may be 0: finite
NonNegativeFloat = Annotated[float, Field(ge=0, strict=True, allow_inf_nan=False)]
#: what a type or bound error of a number says, by whether 0 is allowed
_NUMBER_ERRORS = {"greater_than", "greater_than_equal", "int_type", "float_type", "finite_number"}


class SandboxOptionError(ValueError):
    """A ``Sandbox(...)`` option that is unknown or has a value it cannot take."""


class SandboxOptions(BaseModel):
    """The options of one sandbox (see the module docstring); each field's docstring says what it sets."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    # -- the server (svckit/sandbox/limits.py, hosts.py) -----------------------------------
    header_timeout: PositiveFloat = 10.0
    """Seconds a client may take to send a request line and its headers."""
    body_timeout: PositiveFloat = 30.0
    """Seconds a client may take to send a request body once its headers are in."""
    max_header_bytes: PositiveInt = MiB
    """The largest request head (request line and headers) read, in bytes."""
    allowed_hosts: tuple[str, ...] = ()
    """Host names served besides loopback's and ``host`` (svckit/sandbox/hosts.py)."""

    # -- the key-value area (svckit/sandbox/kv/) ---------------------------------------------
    backend: Literal["auto", "redis", "fakeredis", "external"] = "auto"
    """What stores the keys: ``auto`` (an external Redis when ``redis_url`` is given, else a redis-server
    child when one is on PATH, else fakeredis), or one of them by name."""
    redis_url: str | None = Field(default=None, repr=False)
    """The external Redis (``redis://...``); left out of the repr, since it may carry a password."""
    redis_cluster: bool = False
    """``redis_url`` is one node of a Redis Cluster."""
    redis_server: str | None = None
    """The redis-server binary to start; None: the one on PATH."""
    kv_max_request_size: PositiveInt = 10 * MiB
    """Bytes of one request (its body, and each command with its path arguments)."""
    kv_daily_request_limit: PositiveInt = 10_000_000
    """Commands one database runs per UTC day."""
    kv_max_streams: PositiveInt = 256
    """Event streams (subscriptions and monitors) open at once in the whole sandbox; each subscription
    holds a Redis connection while it is open."""
    kv_max_streams_per_token: PositiveInt = 32
    """Event streams one token holds open at once (a notebook's explorer holds a few)."""
    kv_max_request_commands: PositiveInt = 100_000
    """Commands in one /pipeline or /multi-exec request (svckit/sandbox/kv/budget.py): far above what a
    job or an SDK's auto-pipelining sends at once (svckit's own pipelines hold at most a few thousand)."""
    kv_max_request_seconds: PositiveFloat = 30.0
    """Seconds one request's commands may take together (svckit/sandbox/kv/budget.py)."""
    kv_monitor_backlog_bytes: PositiveInt = 16 * MiB
    """Bytes one monitor reader may fall behind before it is cut off (svckit/sandbox/kv/events.py)."""
    kv_script_time_limit: PositiveFloat = 5.0
    """Seconds a script may run before SCRIPT KILL may stop it (svckit/sandbox/kv/runaway.py)."""

    # -- the vector area (svckit/sandbox/vector.py) ------------------------------------------
    embedding_model: str | Path | None = None
    """A sentence-transformers model directory; None: the packaged MiniLM."""
    demo_limit: PositiveInt | None = None
    """Records of the demo corpus the ``demo`` seed loads; None: all of them."""
    vector_threads_per_index: PositiveInt = 4
    """Worker threads one index answers on at once. Queries on one index take its lock in turn for their
    ranking, so more threads mostly wait; four let text be embedded (outside the lock) while another ranks."""
    vector_max_body_bytes: PositiveInt = 10 * MiB
    """The largest request body the vector area reads (413 beyond it)."""
    vector_max_top_k: PositiveInt | None = None
    """The index's ``max_top_k`` (:class:`svckit.localindex.limits.Limits`; None: its default)."""
    vector_max_batch: PositiveInt | None = None
    """The index's ``max_batch`` (None: the default of ``Limits``)."""
    vector_max_filter_length: PositiveInt | None = None
    """The index's ``max_filter_length`` (None: the default of ``Limits``)."""
    vector_max_filter_depth: PositiveInt | None = None
    """The index's ``max_filter_depth`` (None: the default of ``Limits``)."""
    vector_max_filter_terms: PositiveInt | None = None
    """The index's ``max_filter_terms`` (None: the default of ``Limits``)."""
    vector_max_resumable: PositiveInt | None = None
    """The index's ``max_resumable`` (None: the default of ``Limits``)."""
    vector_max_idle: PositiveInt | None = None
    """The index's ``max_idle`` in seconds (None: the default of ``Limits``)."""
    vector_max_query_seconds: PositiveFloat | None = None
    """The index's ``max_query_seconds`` (None: the default of ``Limits``)."""

    # -- the developer API and the queue (svckit/sandbox/devapi/, queue.py) --------------------
    devapi_max_body_bytes: PositiveInt = 64 * 1024
    """The largest request body the developer API reads (413 beyond it)."""
    queue_max_body_bytes: PositiveInt | None = None
    """The largest request body the queue reads; None: the account's ``max_message_size``."""
    queue_workers: PositiveInt = 16
    """Deliveries in flight at once."""
    queue_retry_delay: NonNegativeFloat = 0.05
    """Seconds the delivery loop waits before it looks for due messages again after a failure."""
    queue_backoff_scale: NonNegativeFloat = 1.0
    """Scales the retry backoff (1: the hosted service's, 12 s before the first retry; tests pass 0.001)."""
    allow_destinations: tuple[str, ...] = ()
    """Destinations the queue may deliver to besides loopback (svckit/sandbox/delivery/publish.py)."""

    def vector_limits(self) -> dict[str, Any]:
        """The vector index limits given, by ``Limits`` field name (``max_top_k``, ...)."""
        return {name.removeprefix("vector_"): value for name, value in self if value is not None
                and name.startswith("vector_max_") and name != "vector_max_body_bytes"}


def parse_options(options: Mapping[str, Any]) -> SandboxOptions:
    """``options`` (the keywords ``Sandbox(...)`` was given) as :class:`SandboxOptions`; a
    :class:`SandboxOptionError` naming every unknown option (with the close match) and bad value."""
    try:
        return SandboxOptions(**{name: value for name, value in options.items() if value is not None})
    except ValidationError as exc:
        raise SandboxOptionError("; ".join(_explain(error) for error in exc.errors())) from None


def _explain(error: Any) -> str:
    name = str(error["loc"][0]) if error["loc"] else "?"
    if error["type"] == "extra_forbidden":
        close = difflib.get_close_matches(name, SandboxOptions.model_fields, n=1)
        hint = f"did you mean {close[0]}?" if close else f"the options are {', '.join(SandboxOptions.model_fields)}"
        return f"Sandbox option {name}: unknown; {hint}"
    if name == "redis_url":  # never the value: it may carry a password
        return f"Sandbox option {name}: {error['msg'].lower()}"
    if error["type"] in _NUMBER_ERRORS:
        zero = any(getattr(bound, "ge", None) == 0 for bound in SandboxOptions.model_fields[name].metadata)
        what = "a number, 0 or more" if zero else "a positive number"
        return f"Sandbox option {name}: must be {what}, got {error['input']!r}"
    return f"Sandbox option {name}: {error['msg'].lower()}, got {error['input']!r}"
