"""Clients of the developer management interface (spec area C), HTTP Basic auth.

:class:`_AccountCore` builds the requests and parses the replies (no I/O); :class:`Account` and
:class:`AsyncAccount` only send them, so the two cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from svckit._http import DEFAULT_TIMEOUT, ApiRequest, AsyncTransport, BasicAuth, RetryPolicy, SyncTransport
from svckit.account.models import QueueAccount, UpgradePlan
from svckit.account.plans import UPGRADE_PLAN_NAMES
from svckit.config import Settings
from svckit.errors import InvalidArgument, ProtocolError, error_for_status


def decode_reply(response: httpx.Response, what: str, redact: Any = str) -> Any:
    """The JSON body of a 2xx reply, or the matching APIError for an error status.

    Error bodies of areas C and D are ``{"error": "..."}`` (docs/errors.md); anything else is shown
    as text, redacted, so a misbehaving proxy cannot leak a secret into a traceback.
    """
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = None
        if response.status_code < 400:
            raise ProtocolError(f"{what}: reply is not JSON: {redact(response.text[:200])!r}") from None
    if response.status_code >= 400:
        message = body.get("error") if isinstance(body, dict) else None
        if not isinstance(message, str):
            message = redact(response.text[:200]) or response.reason_phrase
        raise error_for_status(response.status_code, redact(message), body, what=what)
    return body


def _non_empty(argument: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(argument, f"must be a non-empty string, got {value!r}")
    return value


class _AccountCore:
    """Requests and reply parsing of area C, shared by the sync and async clients."""

    @staticmethod
    def rename_request(index_id: str, name: str) -> ApiRequest:
        _non_empty("id", index_id)
        _non_empty("name", name)
        # Renaming to the same name twice has the same effect as once: safe to retry.
        return ApiRequest("POST", f"/search/{_quote(index_id)}/rename", json={"name": name}, idempotent=True)

    @staticmethod
    def queue_account_request() -> ApiRequest:
        return ApiRequest("GET", "/queue/user", idempotent=True)

    @staticmethod
    def rotate_request() -> ApiRequest:
        # Never repeated automatically: a second rotation would invalidate the token the first returned.
        return ApiRequest("POST", "/queue/user/rotatetoken")

    @staticmethod
    def upgrade_request(customer_id: str, plan_name: str | UpgradePlan) -> ApiRequest:
        _non_empty("customer_id", customer_id)
        plan = plan_name.value if isinstance(plan_name, UpgradePlan) else plan_name
        if plan not in UPGRADE_PLAN_NAMES:
            raise InvalidArgument("plan_name", f"must be one of {', '.join(UPGRADE_PLAN_NAMES)}, got {plan!r}")
        return ApiRequest("POST", "/queue-upgrade", json={"customer_id": customer_id, "plan_name": plan},
                          idempotent=True)

    @staticmethod
    def parse_ok(body: Any, what: str) -> str:
        if not isinstance(body, str):
            raise ProtocolError(f"{what}: expected the JSON string \"OK\", got {json.dumps(body)[:100]}")
        return body

    @staticmethod
    def parse_account(body: Any, what: str) -> QueueAccount:
        if not isinstance(body, Mapping):
            raise ProtocolError(f"{what}: expected a queue account object, got {type(body).__name__}")
        try:
            return QueueAccount.model_validate(body)
        except ValueError as exc:  # pydantic.ValidationError; never echo the input (it holds secrets)
            raise ProtocolError(f"{what}: queue account record does not match the spec: "
                                f"{_field_errors(exc)}") from None


def _quote(segment: str) -> str:
    from urllib.parse import quote

    return quote(segment, safe="")


def _field_errors(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if errors is None:
        return type(exc).__name__
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors(include_input=False))


def _settings_args(settings: Settings) -> tuple[str, str, str]:
    url, email, key = settings.require("devapi_url", "devapi_email", "devapi_key")
    return url, email, key


class Account:
    """Synchronous client of the developer management interface.

    >>> acct = Account.from_env()                       # doctest: +SKIP
    >>> acct.queue_account().max_retries                # doctest: +SKIP
    """

    def __init__(self, url: str, email: str, api_key: str, *, timeout: float | None = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self.email = email
        self._http = SyncTransport(self.url, BasicAuth(email, api_key), timeout=timeout, retry=retry,
                                   transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> Account:
        return cls(*_settings_args(settings), **options)

    @classmethod
    def from_env(cls, **options: Any) -> Account:
        return cls.from_settings(Settings.from_env(), **options)

    def _call(self, request: ApiRequest) -> Any:
        what = f"{request.method} {request.path}"
        return decode_reply(self._http.send(request), what, self._http.redact)

    def rename_search_index(self, id: str, name: str) -> str:
        """Rename search index ``id`` to ``name``; returns ``"OK"``."""
        return _AccountCore.parse_ok(self._call(_AccountCore.rename_request(id, name)), "rename")

    def queue_account(self) -> QueueAccount:
        """The queue account record (every D1 field)."""
        return _AccountCore.parse_account(self._call(_AccountCore.queue_account_request()), "queue account")

    def rotate_queue_token(self) -> QueueAccount:
        """Reset the queue token and password; the old ones stop working at once. Returns the new record."""
        return _AccountCore.parse_account(self._call(_AccountCore.rotate_request()), "rotate token")

    def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str:
        """Move the queue account to ``plan_name`` (``paid``, ``queue_enterprise_1m``,
        ``queue_enterprise_10m``; checked before any request). Returns ``"OK"``."""
        return _AccountCore.parse_ok(self._call(_AccountCore.upgrade_request(customer_id, plan_name)), "upgrade")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Account:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Account({self.url!r}, email={self.email!r})"


class AsyncAccount:
    """Asynchronous twin of :class:`Account` (same methods, awaited)."""

    def __init__(self, url: str, email: str, api_key: str, *, timeout: float | None = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self.email = email
        self._http = AsyncTransport(self.url, BasicAuth(email, api_key), timeout=timeout, retry=retry,
                                    transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> AsyncAccount:
        return cls(*_settings_args(settings), **options)

    @classmethod
    def from_env(cls, **options: Any) -> AsyncAccount:
        return cls.from_settings(Settings.from_env(), **options)

    async def _call(self, request: ApiRequest) -> Any:
        what = f"{request.method} {request.path}"
        return decode_reply(await self._http.send(request), what, self._http.redact)

    async def rename_search_index(self, id: str, name: str) -> str:
        return _AccountCore.parse_ok(await self._call(_AccountCore.rename_request(id, name)), "rename")

    async def queue_account(self) -> QueueAccount:
        return _AccountCore.parse_account(await self._call(_AccountCore.queue_account_request()),
                                          "queue account")

    async def rotate_queue_token(self) -> QueueAccount:
        return _AccountCore.parse_account(await self._call(_AccountCore.rotate_request()), "rotate token")

    async def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str:
        request = _AccountCore.upgrade_request(customer_id, plan_name)
        return _AccountCore.parse_ok(await self._call(request), "upgrade")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def close(self) -> None:
        await self.aclose()

    async def __aenter__(self) -> AsyncAccount:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncAccount({self.url!r}, email={self.email!r})"
