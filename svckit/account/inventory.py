"""Reading everything the account holds in two round trips, with no I/O here: the four lists side by
side, then every resource's stats side by side. :class:`ResourcesRead` says which requests each round
sends and puts their replies together; :meth:`svckit.account.Account.resources` and its async twin
only send them (``InFlight`` / ``agather``), so the two cannot drift apart.

A request that fails does not sink the rest: its error is kept in ``errors`` (by list name or by
resource id) and the rest is shown. A service without the vendor's per-instance queue paths (one
that serves only the spec's) still gives its queue account, through the spec's ``GET /queue/user``
and svckit's id-less ``GET /qstash/stats``, asked in the second round beside the other stats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from svckit._http import ApiRequest
from svckit.account import protocol as p
from svckit.account.resources import AccountResources
from svckit.errors import NotFound

__all__ = ["MAX_SIDE_BY_SIDE", "Call", "ResourcesRead"]

#: requests a round keeps in flight at once: every stats request of an account of up to this many
#: resources goes in one round trip (the connection pools keep 100 connections)
MAX_SIDE_BY_SIDE = 64

#: the lists of the first round, by the bundle's field
LISTS: dict[str, tuple[Callable[[], ApiRequest], Callable[[Any], Any]]] = {
    "databases": (p.build_databases, p.decode_databases),
    "vector_indexes": (p.build_vector_indexes, p.decode_vector_indexes),
    "search_indexes": (p.build_search_indexes, p.decode_search_indexes),
    "queue_accounts": (p.build_queue_accounts, p.decode_queue_accounts),
}

#: where the spec's id-less queue reads of the second round go (their id is only known from the reply)
_SPEC_ACCOUNT, _SPEC_STATS = ("queue_accounts", ""), ("queue_stats", "")


@dataclass(frozen=True)
class Call:
    """One request of a round: where its result goes (the bundle's field, and the resource id for a
    stats dict), what to send, how to read the reply."""

    key: tuple[str, str]
    request: ApiRequest
    decode: Callable[[Any], Any]


def failure(error: BaseException) -> str:
    """What ``errors`` says of a request that failed (the error's text holds no secret)."""
    return str(error) or type(error).__name__


class ResourcesRead:
    """The two rounds of :meth:`~svckit.account.Account.resources`: ``lists()``, ``take_lists(results)``,
    ``stats()``, ``take_stats(results)``, ``result()``; a result is a reply decoded or the error its
    request ended in."""

    def __init__(self, period: str = "1h") -> None:
        self.period = p.check_period(period)
        self._found: dict[str, list[Any]] = {name: [] for name in LISTS}
        self._stats: dict[str, dict[str, Any]] = {"database_stats": {}, "vector_stats": {}, "queue_stats": {}}
        self._errors: dict[str, str] = {}
        self._first_error: BaseException | None = None
        self._spec_queue = False  # the vendor's queue list answered 404: ask the spec's paths

    def lists(self) -> list[Call]:
        return [Call((name, ""), build(), decode) for name, (build, decode) in LISTS.items()]

    def take_lists(self, results: Sequence[Any]) -> None:
        for call, result in zip(self.lists(), results, strict=True):
            name = call.key[0]
            if isinstance(result, BaseException):
                self._fail(name, result)
                self._spec_queue = self._spec_queue or (name == "queue_accounts" and isinstance(result, NotFound))
            else:
                self._found[name] = result

    def stats(self) -> list[Call]:
        calls = [Call(("database_stats", db.database_id), p.build_database_stats(db.database_id),
                      p.decode_database_stats) for db in self._found["databases"]]
        calls += [Call(("vector_stats", ix.id), p.build_vector_stats(ix.id, self.period), p.decode_vector_stats)
                  for ix in self._found["vector_indexes"]]
        calls += [Call(("queue_stats", acct.id), p.build_queue_stats(self.period, acct.id), p.decode_stats)
                  for acct in self._found["queue_accounts"]]
        if self._spec_queue:
            calls += [Call(_SPEC_ACCOUNT, p.build_queue_account(), lambda body: p.decode_account(body, "queue account")),
                      Call(_SPEC_STATS, p.build_queue_stats(self.period), p.decode_stats)]
        return calls

    def take_stats(self, results: Sequence[Any]) -> None:
        spec_stats = None
        for call, result in zip(self.stats(), results, strict=True):
            field, resource_id = call.key
            if call.key == _SPEC_ACCOUNT:
                if isinstance(result, BaseException):
                    self._fail("queue_accounts", result)
                else:
                    self._found["queue_accounts"] = [result]
                    self._errors.pop("queue_accounts", None)  # the spec's path stood in for the vendor's
            elif isinstance(result, BaseException):
                self._fail(resource_id or "queue_stats", result)
            elif call.key == _SPEC_STATS:
                spec_stats = result
            else:
                self._stats[field][resource_id] = result
        if spec_stats is not None and self._found["queue_accounts"]:
            self._stats["queue_stats"][self._found["queue_accounts"][0].id] = spec_stats

    def result(self) -> AccountResources:
        """The bundle; raises the first error when nothing at all could be read (no list, no queue
        account): an account the service cannot show is an error, not an empty account."""
        if self._first_error is not None and not any(self._found.values()) and set(LISTS) <= set(self._errors):
            raise self._first_error
        return AccountResources.model_validate({**self._found, **self._stats, "errors": self._errors})

    def _fail(self, key: str, error: BaseException) -> None:
        self._errors[key] = failure(error)
        self._first_error = self._first_error or error
