"""Clients of the developer management interface (spec area C), HTTP Basic auth.

:mod:`svckit.account.protocol` builds the requests and decodes the replies (no I/O); :class:`Account`
and :class:`AsyncAccount` only send them, so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import httpx

from svckit._http import (
    DEFAULT_TIMEOUT,
    AsyncClientShell,
    AsyncTransport,
    BasicAuth,
    ClientShell,
    RetryPolicy,
    SyncTransport,
    Verify,
)
from svckit.account import protocol as p
from svckit.account.models import QueueAccount, QueueStats, UpgradePlan
from svckit.config import DotEnv, Settings


def _settings_args(settings: Settings) -> tuple[str, str, str]:
    url, email, key = settings.require("devapi_url", "devapi_email", "devapi_key")
    return url, email, key


@runtime_checkable
class QueueAccountAdmin(Protocol):
    """What the account dashboard needs of a client: :class:`Account` satisfies it, and so does any
    stand-in with these methods."""

    def queue_account(self) -> QueueAccount: ...
    def queue_stats(self, period: str = "1h") -> QueueStats: ...
    def rotate_queue_token(self) -> QueueAccount: ...
    def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str: ...


class Account(ClientShell):
    """Synchronous client of the developer management interface.

    >>> acct = Account.from_env()                       # doctest: +SKIP
    >>> acct.queue_account().max_retries                # doctest: +SKIP
    """

    def __init__(self, url: str, email: str, api_key: str, *, timeout: float | None = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, transport: httpx.BaseTransport | None = None,
                 verify: Verify = True) -> None:
        self.url = url.rstrip("/")
        self.email = email
        self._http = SyncTransport(self.url, BasicAuth(email, api_key), timeout=timeout, retry=retry,
                                   transport=transport, verify=verify)

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> Account:
        return cls(*_settings_args(settings), **settings.client_options(options))

    @classmethod
    def from_env(cls, *, dotenv: DotEnv = False, **options: Any) -> Account:
        """Build from SVC_DEVAPI_* (or the vendor's names; ``dotenv``: see Settings.from_env)."""
        return cls.from_settings(Settings.from_env(dotenv=dotenv), **options)

    def rename_search_index(self, id: str, name: str) -> str:
        """Rename search index ``id`` to ``name``; returns ``"OK"``."""
        return p.decode_ok(self._call(p.build_rename(id, name)), "rename")

    def queue_account(self) -> QueueAccount:
        """The queue account record (every D1 field)."""
        return p.decode_account(self._call(p.build_queue_account()), "queue account")

    def queue_stats(self, period: str = "1h") -> QueueStats:
        """The queue account's usage: messages per day this month, log events by state over ``period``
        (``1h``, ``3h``, ``12h``, ``1d``, ``3d``, ``7d``, ``30d``), the DLQ's size now."""
        return p.decode_stats(self._call(p.build_queue_stats(period)))

    def rotate_queue_token(self) -> QueueAccount:
        """Reset the queue token and password; the old ones stop working at once. Returns the new record."""
        return p.decode_account(self._call(p.build_rotate_token()), "rotate token")

    def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str:
        """Move the queue account to ``plan_name`` (``paid``, ``queue_enterprise_1m``,
        ``queue_enterprise_10m``; checked before any request). Returns ``"OK"``."""
        return p.decode_ok(self._call(p.build_upgrade(customer_id, plan_name)), "upgrade")

    def __repr__(self) -> str:
        return f"Account({self.url!r}, email={self.email!r})"


class AsyncAccount(AsyncClientShell):
    """Asynchronous twin of :class:`Account` (same methods, awaited)."""

    def __init__(self, url: str, email: str, api_key: str, *, timeout: float | None = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, transport: httpx.AsyncBaseTransport | None = None,
                 verify: Verify = True) -> None:
        self.url = url.rstrip("/")
        self.email = email
        self._http = AsyncTransport(self.url, BasicAuth(email, api_key), timeout=timeout, retry=retry,
                                    transport=transport, verify=verify)

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> AsyncAccount:
        return cls(*_settings_args(settings), **settings.client_options(options))

    @classmethod
    def from_env(cls, *, dotenv: DotEnv = False, **options: Any) -> AsyncAccount:
        """Build from SVC_DEVAPI_* (or the vendor's names; ``dotenv``: see Settings.from_env)."""
        return cls.from_settings(Settings.from_env(dotenv=dotenv), **options)

    async def rename_search_index(self, id: str, name: str) -> str:
        return p.decode_ok(await self._call(p.build_rename(id, name)), "rename")

    async def queue_account(self) -> QueueAccount:
        return p.decode_account(await self._call(p.build_queue_account()), "queue account")

    async def queue_stats(self, period: str = "1h") -> QueueStats:
        return p.decode_stats(await self._call(p.build_queue_stats(period)))

    async def rotate_queue_token(self) -> QueueAccount:
        return p.decode_account(await self._call(p.build_rotate_token()), "rotate token")

    async def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str:
        return p.decode_ok(await self._call(p.build_upgrade(customer_id, plan_name)), "upgrade")

    def __repr__(self) -> str:
        return f"AsyncAccount({self.url!r}, email={self.email!r})"
