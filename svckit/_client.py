"""One base for every client, as httpx has its ``BaseClient``: written once, the two kinds differ only
in their transport.

Each area (kv, vector, account, queue) writes one base of its own over :class:`ClientBase`: its
credentials, how they are checked, and where :meth:`~ClientBase.from_settings` finds them. Its
synchronous client adds :class:`SyncClient` (a :class:`~svckit._http.SyncTransport`; ``close()`` and
``with``), its asynchronous client :class:`AsyncClient` (an :class:`~svckit._http.AsyncTransport`;
``aclose()`` and ``async with``). So ``Vector`` is ``_VectorBase`` + ``SyncClient`` and ``AsyncVector``
is ``_VectorBase`` + ``AsyncClient``; nothing else about building one differs.

The options every client takes (:class:`ClientOptions`) are named here once: ``timeout`` (seconds,
:data:`~svckit._http.DEFAULT_TIMEOUT` unless given; None waits as long as it takes), ``retry`` (a
:class:`RetryPolicy`), ``transport`` (a transport of httpx to send through instead of
svckit's pools: a sync one for a sync client, an async one for an async client) and ``verify``
(httpx's: True, a CA bundle path, an ``ssl.SSLContext``, or False).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

import httpx

from svckit._http import (
    DEFAULT_TIMEOUT,
    ApiRequest,
    AsyncTransport,
    Auth,
    RetryPolicy,
    SyncTransport,
    Verify,
    decode_json_reply,
)
from svckit.config import DotEnv, Settings

if TYPE_CHECKING:
    from typing import Self


class ClientOptions(TypedDict, total=False):
    """The keyword options of every client's constructor (and of ``from_settings`` / ``from_env``)."""

    timeout: float | None
    retry: RetryPolicy | None
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None
    verify: Verify


class ClientBase:
    """What every client holds: its URL, ``timeout`` and ``verify``, one transport built from
    :class:`ClientOptions`, and the two ways to build it from configuration."""

    #: SyncTransport or AsyncTransport: set by SyncClient / AsyncClient, the only difference between them
    _transport_class: ClassVar[type[SyncTransport | AsyncTransport]]
    #: the Settings fields of the constructor's positional arguments, in order (``from_settings``)
    _settings_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, url: str, auth: Auth, *, timeout: float | None = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None,
                 transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None,
                 verify: Verify = True) -> None:
        self.url = url.rstrip("/")
        self.timeout, self.verify = timeout, verify  # what a client built from this one takes by default
        self._http: Any = self._transport_class(self.url, auth, timeout=timeout, retry=retry,
                                                transport=transport, verify=verify)

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> Self:
        """Build from ``settings`` (SVC_CA_FILE as ``verify=`` unless ``options`` name one:
        :meth:`Settings.client_options`); ``options`` as the constructor's."""
        build: Callable[..., Self] = cls  # an area's constructor takes its credentials in this order
        return build(*settings.require(*cls._settings_fields), **settings.client_options(options))

    @classmethod
    def from_env(cls, *, dotenv: DotEnv = False, **options: Any) -> Self:
        """Build from the area's SVC_* variables (or the vendor's names for them); ``options`` as
        :meth:`from_settings`'s; ``dotenv``: see :meth:`Settings.from_env`."""
        return cls.from_settings(Settings.from_env(dotenv=dotenv), **options)


class SyncClient(ClientBase):
    """The synchronous kind: a :class:`~svckit._http.SyncTransport`, ``close()`` and ``with``."""

    _transport_class = SyncTransport
    _http: SyncTransport

    def _call(self, request: ApiRequest, what: str | None = None) -> Any:
        """Send a request of a JSON interface (account, queue) and decode its reply."""
        return decode_json_reply(self._http.send(request), what or f"{request.method} {request.path}",
                                 self._http.redact)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(ClientBase):
    """The asyncio kind: an :class:`~svckit._http.AsyncTransport`, ``aclose()`` and ``async with``."""

    _transport_class = AsyncTransport
    _http: AsyncTransport

    async def _call(self, request: ApiRequest, what: str | None = None) -> Any:
        return decode_json_reply(await self._http.send(request), what or f"{request.method} {request.path}",
                                 self._http.redact)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
