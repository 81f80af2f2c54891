"""Key-value client (area A of the spec): ``KV`` (sync) and ``AsyncKV`` over one sans-I/O core.

::

    from svckit.kv import KV
    with KV.from_env() as kv:
        kv.set("a", "1")
        results = kv.pipeline().incr("a").get("missing").exec()   # [2, None]

Modules: :mod:`~svckit.kv.protocol` (requests and replies, no I/O), :mod:`~svckit.kv.resp2` (RESP2
parser and encoder), :mod:`~svckit.kv.commands` (typed helpers, written once for every client
shape), :mod:`~svckit.kv.client` (the clients, pipelines, transactions and event streams),
:mod:`~svckit.kv.keyspace` (the one keyspace walk, key descriptions and the one value reader for
both clients), :mod:`~svckit.kv.bulk` (dry runs and bulk delete / TTL / export under a pattern),
:mod:`~svckit.kv.formats` (JSON, hex, base64, gzip, msgpack views of values; ``format_bytes``),
:mod:`~svckit.kv.analysis` (memory and keys per prefix, sampled with stated error or complete; its
estimates in :mod:`~svckit.kv.estimates`),
:mod:`~svckit.kv.profiler` (commands/s, command mix and hot keys from the monitor stream).

Long runs (walks, bulk actions, the analysis) share one progress and cancel protocol:
``progress=True`` (a tqdm bar), ``False`` or a hook called with a :class:`Progress`, and ``cancel``
(a ``threading.Event`` or a callable), see :mod:`svckit._progress`.

Every public name is imported on first use (PEP 562, :mod:`svckit._lazy`): importing ``svckit.kv.models``
loads no client, transport or HTTP library.
"""

from typing import TYPE_CHECKING

from svckit._lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each imported on first use (svckit/_lazy.py)
    from svckit._http import RetryPolicy
    from svckit._progress import Progress
    from svckit.errors import CommandError, TransactionDiscarded
    from svckit.kv.analysis import (
        KeyspaceAnalysis,
        KeyspaceReport,
        analyze_keyspace,
    )
    from svckit.kv.bulk import (
        BulkPlan,
        BulkSummary,
        bulk_delete,
        bulk_expire,
        bulk_export,
        bulk_persist,
        pattern_for_prefix,
        plan_bulk,
        read_export,
        run_bulk,
    )
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
    from svckit.kv.formats import Formatted, available_encodings, format_bytes, format_value
    from svckit.kv.keyspace import (
        KeyInfo,
        KeyScan,
        ValuePage,
        adescribe_keys,
        aread_page,
        ascan_keys,
        awalk_keys,
        describe_keys,
        queue_read,
        read_page,
        scan_keys,
        walk_keys,
    )
    from svckit.kv.profiler import MonitorProfile, ProfileSnapshot, SpaceSaving, command_keys, profile_monitor
    from svckit.kv.protocol import Message, MonitorEvent

__getattr__, __dir__ = lazy_exports(__name__, __file__)

__all__ = [
    "KV",
    "AsyncKV",
    "AsyncMonitor",
    "AsyncPipeline",
    "AsyncSubscription",
    "AsyncTransaction",
    "BulkPlan",
    "BulkSummary",
    "Cmd",
    "CommandError",
    "Commands",
    "Formatted",
    "KeyInfo",
    "KeyScan",
    "KeyspaceAnalysis",
    "KeyspaceReport",
    "Message",
    "Monitor",
    "MonitorEvent",
    "MonitorProfile",
    "Pipeline",
    "ProfileSnapshot",
    "Progress",
    "RetryPolicy",
    "SpaceSaving",
    "Subscription",
    "Transaction",
    "TransactionDiscarded",
    "ValuePage",
    "adescribe_keys",
    "analyze_keyspace",
    "aread_page",
    "ascan_keys",
    "available_encodings",
    "awalk_keys",
    "bulk_delete",
    "bulk_expire",
    "bulk_export",
    "bulk_persist",
    "command_keys",
    "describe_keys",
    "format_bytes",
    "format_value",
    "pattern_for_prefix",
    "plan_bulk",
    "profile_monitor",
    "queue_read",
    "read_export",
    "read_page",
    "run_bulk",
    "scan_keys",
    "walk_keys",
]
