"""Models of what the account holds, as the vendor's developer API lists it (``/v2/redis/databases``,
``/v2/vector/index``, ``/v2/search``, ``/v2/qstash/users``) with their usage, and the
:class:`AccountResources` bundle the account client reads them into in two round trips.

Field names are the vendor's wire names (already snake_case). Every field but the id has a default:
the vendor adds fields over time and leaves some out (a database read with ``?credentials=hide`` has
no tokens), and a notebook must not break on either. Tokens are :class:`pydantic.SecretStr`, so a
``repr`` never shows them. A limit of ``-1`` (or none given) means no limit, as the vendor writes it:
:func:`limit_of` reads it as ``None``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from svckit.account.models import QueueAccount, QueueStats, TimePoint, _open_enum

__all__ = [
    "AccountResources",
    "Database",
    "DatabaseStats",
    "IndexType",
    "SearchIndex",
    "VectorIndex",
    "VectorStats",
    "limit_of",
    "rest_url",
]


def rest_url(endpoint: str) -> str:
    """The REST URL of an ``endpoint``: the vendor's is a host name (its URL is ``https://`` + host),
    the sandbox's the whole URL, scheme included (its areas share one host under path prefixes)."""
    if not endpoint:
        return ""
    return endpoint.rstrip("/") if "://" in endpoint else f"https://{endpoint.rstrip('/')}"


def limit_of(value: Any) -> int | None:
    """A limit field as a bound: ``None`` where the record gives none or ``-1`` (no limit)."""
    if value is None or isinstance(value, bool):
        return None
    number = int(value)
    return number if number >= 0 else None


class _Resource(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    creation_time: int = 0
    customer_id: str = ""
    region: str = ""
    type: str = ""


class Database(_Resource):
    """A key-value database (the vendor's ``Database``, with the REST tokens its CLI reads).

    ``rest_token`` and ``read_only_rest_token`` are None when read with ``hide_credentials=True``.
    The ``db_*`` limits are -1 where none applies (:func:`limit_of`)."""

    database_id: str
    database_name: str = ""
    primary_region: str = ""
    port: int | None = None
    tls: bool = True
    state: str = ""
    endpoint: str = ""
    rest_token: SecretStr | None = None
    read_only_rest_token: SecretStr | None = None
    eviction: bool = False
    db_max_request_size: int = -1
    db_request_limit: int = -1
    db_max_entry_size: int = -1
    db_memory_threshold: int = -1
    db_disk_threshold: int = -1
    db_max_clients: int = -1
    db_max_commands_per_second: int = -1

    @property
    def id(self) -> str:
        return self.database_id

    @property
    def name(self) -> str:
        return self.database_name

    @property
    def rest_url(self) -> str:
        """The REST URL to build a :class:`svckit.kv.KV` on (:func:`rest_url`)."""
        return rest_url(self.endpoint)

    @property
    def storage_limit(self) -> int | None:
        """The data size bound in bytes: the disk threshold, else the memory one; None if neither."""
        return limit_of(self.db_disk_threshold) or limit_of(self.db_memory_threshold)


class DatabaseStats(BaseModel):
    """A database's usage (the part of the vendor's ``DatabaseStats`` the sandbox records):
    ``daily_net_commands`` (commands today, UTC: what ``db_request_limit`` counts), ``current_storage``
    (bytes), ``keyspace`` (keys over time: the sandbox gives one point, now)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    daily_net_commands: int = 0
    current_storage: int = 0
    keyspace: list[TimePoint] = []
    dailyrequests: list[TimePoint] = []
    days: list[str] = []

    @property
    def keys(self) -> int | None:
        """Keys now: the last point of ``keyspace`` (None when the service gives no such series)."""
        return int(self.keyspace[-1].y) if self.keyspace else None


class IndexType(str, Enum):
    DENSE = "DENSE"
    SPARSE = "SPARSE"
    HYBRID = "HYBRID"


class _Index(_Resource):
    """What a vector index and a search index record alike: a REST endpoint, its tokens, the vendor's
    daily limits (-1 where none is enforced)."""

    id: str
    name: str = ""
    endpoint: str = ""
    token: SecretStr | None = None
    read_only_token: SecretStr | None = None
    max_vector_count: int = -1
    max_daily_queries: int = -1
    max_daily_updates: int = -1

    @property
    def url(self) -> str:
        """The REST URL to build a client on (:func:`rest_url`)."""
        return rest_url(self.endpoint)


class VectorIndex(_Index):
    """A vector index (the vendor's ``VectorIndex``). ``max_*`` limits are -1 where none is enforced;
    ``embedding_model`` is absent (None) for a sparse index and one made without a model."""

    similarity_function: str = ""
    dimension_count: int = 0
    embedding_model: str | None = None
    sparse_embedding_model: str | None = None
    index_type: IndexType | str = _open_enum(IndexType.DENSE)
    max_writes_per_second: int = -1
    max_query_per_second: int = -1
    max_reads_per_request: int = -1
    max_writes_per_request: int = -1
    max_total_metadata_size: int = -1


class VectorStats(BaseModel):
    """A vector index's usage (the vendor's ``VectorStats``): vectors now and waiting to be indexed,
    queries and updates today (UTC), ``storage_usage`` in bytes."""

    model_config = ConfigDict(extra="allow", frozen=True)

    current_vector_count: int = 0
    pending_index_count: int = 0
    daily_query_count: int = 0
    daily_update_count: int = 0
    storage_usage: int = 0
    vector_count: list[TimePoint] = []
    days: list[str] = []


class SearchIndex(_Index):
    """A search index (the vendor's ``SearchIndex``); the sandbox serves no search data API, so its
    ``endpoint`` and tokens are empty."""


class AccountResources(BaseModel):
    """Everything the account holds and its usage, as :meth:`svckit.account.Account.resources` reads
    it. A stats dict misses the id of a resource whose stats could not be read; ``errors`` says why,
    by resource id (or by list: ``databases``, ``vector_indexes``, ``search_indexes``,
    ``queue_accounts``, for a list that could not be read)."""

    model_config = ConfigDict(frozen=True)

    databases: list[Database] = []
    vector_indexes: list[VectorIndex] = []
    search_indexes: list[SearchIndex] = []
    queue_accounts: list[QueueAccount] = []
    database_stats: dict[str, DatabaseStats] = {}
    vector_stats: dict[str, VectorStats] = {}
    queue_stats: dict[str, QueueStats] = {}
    errors: dict[str, str] = Field(default_factory=dict)
