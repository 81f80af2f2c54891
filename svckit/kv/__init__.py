"""Key-value client (area A of the spec): ``KV`` (sync) and ``AsyncKV`` over one sans-I/O core.

::

    from svckit.kv import KV
    with KV.from_env() as kv:
        kv.set("a", "1")
        results = kv.pipeline().incr("a").get("missing").exec()   # [2, None]

Modules: :mod:`~svckit.kv.protocol` (requests and replies, no I/O), :mod:`~svckit.kv.resp2` (RESP2
parser and encoder), :mod:`~svckit.kv.commands` (typed helpers, written once for every client
shape), :mod:`~svckit.kv.client` (the clients, pipelines, transactions and event streams).
"""

from svckit._http import RetryPolicy
from svckit.errors import CommandError, TransactionDiscarded
from svckit.kv.client import (
    KV,
    AsyncKV,
    AsyncMonitor,
    AsyncPipeline,
    AsyncSubscription,
    AsyncTransaction,
    Monitor,
    Pipeline,
    Subscription,
    Transaction,
)
from svckit.kv.commands import Cmd, Commands
from svckit.kv.protocol import Message, MonitorEvent

__all__ = [
    "KV",
    "AsyncKV",
    "AsyncMonitor",
    "AsyncPipeline",
    "AsyncSubscription",
    "AsyncTransaction",
    "Cmd",
    "CommandError",
    "Commands",
    "Message",
    "Monitor",
    "MonitorEvent",
    "Pipeline",
    "RetryPolicy",
    "Subscription",
    "Transaction",
    "TransactionDiscarded",
]
