"""Clients of the developer management interface (spec area C), HTTP Basic auth.

:mod:`svckit.account.protocol` builds the requests and decodes the replies (no I/O); :class:`Account`
and :class:`AsyncAccount` only send them, so the two cannot drift apart. The reads of what the account
holds (databases, vector and search indexes, queue accounts, their usage) are the vendor's developer
API paths; ``resources()`` reads them all in two round trips (:mod:`svckit.account.inventory`).
``kv_client`` / ``vector_client`` hand a database or index on to its own area's client, imported
when called: the account client does not depend on them otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from svckit._client import AsyncClient, ClientBase, ClientOptions, SyncClient
from svckit._http import BasicAuth
from svckit._inflight import InFlight, agather
from svckit.account import protocol as p
from svckit.account.inventory import MAX_SIDE_BY_SIDE, Call, ResourcesRead
from svckit.account.models import QueueAccount, QueueStats, UpgradePlan
from svckit.account.resources import (
    AccountResources,
    Database,
    DatabaseStats,
    SearchIndex,
    VectorIndex,
    VectorStats,
)
from svckit.errors import InvalidArgument, SvcError

if TYPE_CHECKING:
    from typing import Unpack

    from svckit.kv import KV, AsyncKV
    from svckit.vector import AsyncVector, Vector


@runtime_checkable
class QueueAccountAdmin(Protocol):
    """What the account dashboard needs of a client: :class:`Account` satisfies it, and so does any
    stand-in with these methods."""

    def queue_account(self) -> QueueAccount: ...
    def queue_stats(self, period: str = "1h") -> QueueStats: ...
    def rotate_queue_token(self) -> QueueAccount: ...
    def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str: ...


def _token(secret: Any, argument: str, what: str) -> str:
    value = secret.get_secret_value() if secret is not None else ""
    if not value:
        raise InvalidArgument(argument, f"{what} has no token here (read with hide_credentials=True, or the "
                                        "service gives none): read it again without hide_credentials")
    return value


def _peer(database: Database, read_only: bool) -> tuple[str, str]:
    token = database.read_only_rest_token if read_only else database.rest_token
    return database.rest_url, _token(token, "database", f"database {database.database_id!r}")


class _AccountBase(ClientBase):
    """What Account and AsyncAccount share (:mod:`svckit._client`): the URL, email and API key
    (SVC_DEVAPI_URL, SVC_DEVAPI_EMAIL, SVC_DEVAPI_KEY), and the options a client built from a record
    takes by default."""

    _settings_fields = ("devapi_url", "devapi_email", "devapi_key")

    def __init__(self, url: str, email: str, api_key: str, **options: Unpack[ClientOptions]) -> None:
        super().__init__(url, BasicAuth(email, api_key), **options)
        self.email = email

    def _options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` over this client's ``timeout`` and ``verify`` (an explicit one wins)."""
        return {"timeout": self.timeout, "verify": self.verify, **options}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r}, email={self.email!r})"


class Account(_AccountBase, SyncClient):
    """Synchronous client of the developer management interface.

    >>> acct = Account.from_env()                       # doctest: +SKIP
    >>> acct.queue_account().max_retries                # doctest: +SKIP
    """

    def rename_search_index(self, id: str, name: str) -> str:
        """Rename search index ``id`` to ``name``; returns ``"OK"``."""
        return p.decode_ok(self._call(p.build_rename(id, name)), "rename")

    def databases(self) -> list[Database]:
        """Every key-value database of the account (``GET /redis/databases``)."""
        return p.decode_databases(self._call(p.build_databases()))

    def database(self, id: str, *, hide_credentials: bool = False) -> Database:
        """Database ``id``; with ``hide_credentials`` the service leaves its tokens out (they are None)."""
        return p.decode_database(self._call(p.build_database(id, hide_credentials)), hide_credentials)

    def database_stats(self, id: str) -> DatabaseStats:
        """Database ``id``'s usage: commands today (UTC), storage in bytes, keys."""
        return p.decode_database_stats(self._call(p.build_database_stats(id)))

    def vector_indexes(self) -> list[VectorIndex]:
        """Every vector index of the account (``GET /vector/index``)."""
        return p.decode_vector_indexes(self._call(p.build_vector_indexes()))

    def vector_index(self, id: str) -> VectorIndex:
        return p.decode_vector_index(self._call(p.build_vector_index(id)))

    def vector_index_stats(self, id: str, period: str = "1h") -> VectorStats:
        """Vector index ``id``'s usage: vectors, queries and updates today (UTC), storage in bytes."""
        return p.decode_vector_stats(self._call(p.build_vector_stats(id, period)))

    def search_indexes(self) -> list[SearchIndex]:
        """Every search index of the account (``GET /search``)."""
        return p.decode_search_indexes(self._call(p.build_search_indexes()))

    def search_index(self, id: str) -> SearchIndex:
        return p.decode_search_index(self._call(p.build_search_index(id)))

    def queue_accounts(self) -> list[QueueAccount]:
        """Every queue account (``GET /qstash/users``, the vendor's path)."""
        return p.decode_queue_accounts(self._call(p.build_queue_accounts()))

    def queue_account(self, id: str | None = None) -> QueueAccount:
        """The queue account record (every D1 field): the spec's ``GET /queue/user`` without ``id``,
        the vendor's ``GET /qstash/user/{id}`` with one."""
        return p.decode_account(self._call(p.build_queue_account(id)), "queue account")

    def queue_stats(self, period: str = "1h", id: str | None = None) -> QueueStats:
        """The queue account's usage: messages per day this month, log events by state over ``period``
        (``1h``, ``3h``, ``12h``, ``1d``, ``3d``, ``7d``, ``30d``), the DLQ's size now
        (``GET /qstash/stats``, or the vendor's ``/qstash/stats/{id}`` given ``id``)."""
        return p.decode_stats(self._call(p.build_queue_stats(period, id)))

    def rotate_queue_token(self, id: str | None = None) -> QueueAccount:
        """Reset the queue token and password; the old ones stop working at once. Returns the new record.
        Without ``id`` the spec's path, with one the vendor's ``POST /qstash/rotate-token/{id}``."""
        return p.decode_account(self._call(p.build_rotate_token(id)), "rotate token")

    def set_queue_plan(self, id: str, plan_name: str) -> str:
        """Move queue account ``id`` to ``plan_name``: the vendor's names (``paid``, ``qstash_fixed_1m``,
        ``qstash_fixed_10m``, ``qstash_fixed_100m``) or the spec's (``queue_enterprise_1m`` ...), checked
        before any request (``POST /qstash/set-plan/{id}``). Returns ``"OK"``."""
        return p.decode_ok(self._call(p.build_set_plan(id, plan_name)), "set plan")

    def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str:
        """Move the queue account to ``plan_name`` (``paid``, ``queue_enterprise_1m``,
        ``queue_enterprise_10m``; checked before any request). Returns ``"OK"``."""
        return p.decode_ok(self._call(p.build_upgrade(customer_id, plan_name)), "upgrade")

    def resources(self, period: str = "1h") -> AccountResources:
        """Everything the account holds with its usage, in two round trips: the four lists side by
        side, then every resource's stats side by side (``period`` for the vector and queue stats).
        A list or stats request that fails is told in ``errors``; the rest is kept. A service without
        the vendor's ``/qstash/users`` (404) still gives its queue account, through the spec's
        ``GET /queue/user``, in the same two round trips. Raises only when nothing could be read."""
        read = ResourcesRead(period)
        read.take_lists(self._side_by_side(read.lists()))
        read.take_stats(self._side_by_side(read.stats()))
        return read.result()

    def kv_client(self, database: Database, *, read_only: bool = False, **options: Any) -> KV[Any]:
        """A :class:`svckit.kv.KV` on ``database``'s REST URL and token (its read-only token with
        ``read_only``), with this client's ``timeout`` and ``verify`` unless ``options`` name them."""
        from svckit.kv import KV

        url, token = _peer(database, read_only)
        return KV(url, token, readonly=read_only, **self._options(options))

    def vector_client(self, index: VectorIndex, **options: Any) -> Vector:
        """A :class:`svckit.vector.Vector` on ``index``'s URL and token, with this client's ``timeout``
        and ``verify`` unless ``options`` name them."""
        from svckit.vector import Vector

        return Vector(index.url, _token(index.token, "index", f"vector index {index.id!r}"), **self._options(options))

    def _attempt(self, call: Call) -> Any:
        try:
            return call.decode(self._call(call.request))
        except SvcError as error:  # told in ``errors``; nothing readable at all raises (ResourcesRead.result)
            return error

    def _side_by_side(self, calls: list[Call]) -> list[Any]:
        if not calls:
            return []
        with InFlight(min(len(calls), MAX_SIDE_BY_SIDE)) as flight:
            futures = [flight.submit(self._attempt, call) for call in calls]
        return [future.result() for future in futures]


class AsyncAccount(_AccountBase, AsyncClient):
    """Asynchronous twin of :class:`Account` (same methods, awaited)."""

    async def rename_search_index(self, id: str, name: str) -> str:
        return p.decode_ok(await self._call(p.build_rename(id, name)), "rename")

    async def databases(self) -> list[Database]:
        return p.decode_databases(await self._call(p.build_databases()))

    async def database(self, id: str, *, hide_credentials: bool = False) -> Database:
        return p.decode_database(await self._call(p.build_database(id, hide_credentials)), hide_credentials)

    async def database_stats(self, id: str) -> DatabaseStats:
        return p.decode_database_stats(await self._call(p.build_database_stats(id)))

    async def vector_indexes(self) -> list[VectorIndex]:
        return p.decode_vector_indexes(await self._call(p.build_vector_indexes()))

    async def vector_index(self, id: str) -> VectorIndex:
        return p.decode_vector_index(await self._call(p.build_vector_index(id)))

    async def vector_index_stats(self, id: str, period: str = "1h") -> VectorStats:
        return p.decode_vector_stats(await self._call(p.build_vector_stats(id, period)))

    async def search_indexes(self) -> list[SearchIndex]:
        return p.decode_search_indexes(await self._call(p.build_search_indexes()))

    async def search_index(self, id: str) -> SearchIndex:
        return p.decode_search_index(await self._call(p.build_search_index(id)))

    async def queue_accounts(self) -> list[QueueAccount]:
        return p.decode_queue_accounts(await self._call(p.build_queue_accounts()))

    async def queue_account(self, id: str | None = None) -> QueueAccount:
        return p.decode_account(await self._call(p.build_queue_account(id)), "queue account")

    async def queue_stats(self, period: str = "1h", id: str | None = None) -> QueueStats:
        return p.decode_stats(await self._call(p.build_queue_stats(period, id)))

    async def rotate_queue_token(self, id: str | None = None) -> QueueAccount:
        return p.decode_account(await self._call(p.build_rotate_token(id)), "rotate token")

    async def set_queue_plan(self, id: str, plan_name: str) -> str:
        return p.decode_ok(await self._call(p.build_set_plan(id, plan_name)), "set plan")

    async def upgrade_queue_plan(self, customer_id: str, plan_name: str | UpgradePlan) -> str:
        return p.decode_ok(await self._call(p.build_upgrade(customer_id, plan_name)), "upgrade")

    async def resources(self, period: str = "1h") -> AccountResources:
        read = ResourcesRead(period)
        read.take_lists(await self._side_by_side(read.lists()))
        read.take_stats(await self._side_by_side(read.stats()))
        return read.result()

    def kv_client(self, database: Database, *, read_only: bool = False, **options: Any) -> AsyncKV[Any]:
        """A :class:`svckit.kv.AsyncKV` on ``database`` (see :meth:`Account.kv_client`)."""
        from svckit.kv import AsyncKV

        url, token = _peer(database, read_only)
        return AsyncKV(url, token, readonly=read_only, **self._options(options))

    def vector_client(self, index: VectorIndex, **options: Any) -> AsyncVector:
        """A :class:`svckit.vector.AsyncVector` on ``index`` (see :meth:`Account.vector_client`)."""
        from svckit.vector import AsyncVector

        return AsyncVector(index.url, _token(index.token, "index", f"vector index {index.id!r}"),
                           **self._options(options))

    async def _attempt(self, call: Call) -> Any:
        try:
            return call.decode(await self._call(call.request))
        except SvcError as error:
            return error

    async def _side_by_side(self, calls: list[Call]) -> list[Any]:
        return await agather([self._attempt(call) for call in calls], limit=MAX_SIDE_BY_SIDE) if calls else []
