"""Key-value client (area A of the spec): ``KV`` (sync) and ``AsyncKV`` over one sans-I/O core.

::

    from svckit.kv import KV
    with KV.from_env() as kv:
        kv.set("a", "1")
        results = kv.pipeline().incr("a").get("missing").exec()   # [2, None]

Modules: :mod:`~svckit.kv.protocol` (requests and replies, no I/O), :mod:`~svckit.kv.resp2` (RESP2
parser and encoder), :mod:`~svckit.kv.commands` (typed helpers, written once for every client
shape), :mod:`~svckit.kv.client` (the clients, pipelines, transactions and event streams),
:mod:`~svckit.kv.keyspace` (bounded scans, key descriptions and paged value reading for both clients).
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
from svckit.kv.keyspace import (
    KeyInfo,
    KeyScan,
    ValuePage,
    adescribe_keys,
    aread_page,
    ascan_keys,
    describe_keys,
    read_page,
    scan_keys,
)
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
    "KeyInfo",
    "KeyScan",
    "Message",
    "Monitor",
    "MonitorEvent",
    "Pipeline",
    "RetryPolicy",
    "Subscription",
    "Transaction",
    "TransactionDiscarded",
    "ValuePage",
    "adescribe_keys",
    "aread_page",
    "ascan_keys",
    "describe_keys",
    "read_page",
    "scan_keys",
]
