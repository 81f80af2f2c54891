"""A Redis Cluster (or Valkey's) behind the key-value gateway.

redis-py's cluster client keeps what routing needs, and the gateway adds no routing rule of its own:
which master owns which slot (CLUSTER SLOTS, read again after a failover), the keys of each command
(COMMAND, and COMMAND GETKEYS where keys move), and where a command without keys goes and how its
replies combine, from the request and response policies Redis publishes in its command tips (DBSIZE:
every master, summed; FLUSHALL: every master, all must succeed; SCRIPT LOAD: every node). The
gateway sends the commands itself, on a pool per node of the token's Redis user, with the same
one-write batch and status-keeping reader as on one Redis (:func:`.resp.send_batch`):

- A command goes to the master of its keys' slot. Keys in several slots: ``CROSSSLOT``, as Redis
  Cluster answers; a hash tag (``{user:1}:a``, ``{user:1}:b``) keeps keys in one slot.
- A pipeline is split by node and each node's part sent as one batch, all at once, the replies put
  back in order. A command that reaches every master runs between the parts before and after it.
- A transaction runs on the node of its one slot; keys in several slots, or a command that reaches
  every master, discard it with an error that says why.
- SCAN walks the masters one after the other behind one cursor, which clients pass back unchanged:
  ``cursor = master's cursor * masters + master's index`` (masters in the order of their slots, which a
  failover keeps).
- Redis keeps ACL users per node and its tips say nothing of ACL: changes go to every node, replicas
  included, so a user works on whichever node serves its keys, before and after a failover.
- ``MOVED`` (the slot has another master now): the topology is read again and the command sent there
  (it had not run). ``ASK`` (a slot being migrated): sent once to the node named, after ASKING.
- A master that cannot be reached, or CLUSTERDOWN / TRYAGAIN for a whole request (a failover under
  way): nothing ran, the topology is read again, and the gateway answers 503 with Retry-After.

What differs from one Redis is in the README ("On a Redis Cluster").
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Union
from urllib.parse import unquote, urlsplit

from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import ConnectionPool
from redis.commands.metadata import CommandMetadata, RequestPolicy, ResponsePolicy
from redis.exceptions import (
    BusyLoadingError,
    MovedError,
    RedisClusterException,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
)
from redis.exceptions import ConnectionError as RedisConnectionError

from svckit.sandbox.kv.backends import ExternalRedis
from svckit.sandbox.kv.resp import (
    MAX_CONNECTIONS,
    POOL_WAIT,
    SOCKET_TIMEOUT,
    NotRun,
    Status,
    error_text,
    send_batch,
    tcp_pool,
)

log = logging.getLogger(__name__)

#: Redis Cluster's own answer to keys in several slots
CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot"
CROSSSLOT_IN_TRANSACTION = (f"{CROSSSLOT}: a transaction on a Redis Cluster runs on one master, so every key "
                            "it touches must hash to one slot; a hash tag keeps keys together ({user:1}:a, {user:1}:b)")
EVERY_MASTER_IN_TRANSACTION = ("ERR {name} cannot run inside a transaction on a Redis Cluster: it reaches every "
                               "master, and a transaction runs on one; send it on its own")
#: error replies that mean the command did not run because the cluster is between two topologies
NOT_SERVED = ("CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN")
#: the topology is read again at most this often (seconds), however many requests find it stale
REFRESH_EVERY = 0.1
#: ACL subcommands that change a node's users: sent to every node
ACL_CHANGES = frozenset({"setuser", "deluser", "save", "load"})

Pool = Union[ConnectionPool, "ClusterPool"]
Special = Callable[[], Awaitable[Any]]


def is_cluster(url: str) -> bool:
    """Whether the Redis at ``url`` runs in cluster mode (INFO cluster); False when it cannot be asked."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        return bool(client.info("cluster").get("cluster_enabled"))
    except RedisError:
        return False
    finally:
        client.close()


class Topology:
    """redis-py's view of the cluster, as the gateway's Redis user sees it: nodes, slots, command
    keys and command tips."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.address = f"{parts.hostname}:{parts.port or 6379}"
        #: how a node's address becomes a URL: the scheme (``rediss``: TLS) and options of the one given
        self.node_url = f"{parts.scheme}://{{host}}:{{port}}/0" + (f"?{parts.query}" if parts.query else "")
        self.client = RedisCluster.from_url(
            url, protocol=2, require_full_coverage=False, socket_timeout=SOCKET_TIMEOUT,
            socket_connect_timeout=POOL_WAIT, encoding_errors="surrogateescape")
        self.policies: Mapping[str, CommandMetadata] = {}  # by command name (``script load``: a subcommand)
        self.shards: list[ClusterNode] = []  # the masters, in the order of their lowest slot
        self._read_at = 0.0
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        try:
            await self.client.initialize()
        except (RedisError, RedisClusterException) as exc:
            raise RuntimeError(f"the Redis at {self.address} cannot be reached as a Redis Cluster: {exc} "
                               "(is it a node of a cluster, with cluster-enabled yes?)") from exc
        # what this cluster's COMMAND says of each command (redis-py's own routing uses a static table)
        self.policies = (await self.client.commands_parser.get_commands_metadata_cache()).get("core", {})
        self._read_shards()

    async def refresh(self) -> None:
        """Read the topology again (a master is gone, or a slot moved), unless that was just done."""
        async with self._lock:
            if time.monotonic() - self._read_at < REFRESH_EVERY:
                return
            try:
                await self.client.aclose()
                await self.client.initialize()
            except (RedisError, RedisClusterException) as exc:  # no node answered: the next request tries again
                log.warning("Redis Cluster topology could not be read: %s", exc)
            else:
                self._read_shards()
            self._read_at = time.monotonic()

    async def moved(self, *redirects: str) -> None:
        """``MOVED <slot> <host:port>`` replies: each slot has another master now; redis-py notes them (a
        new node too), as its own client does on MOVED. The masters' order is read once for them all
        (a walk of the 16,384 slots)."""
        for redirect in redirects:
            try:
                await self.client.nodes_manager.move_slot(MovedError(redirect.split(" ", 1)[1]))
            except (KeyError, ValueError, RedisError, RedisClusterException):  # a slot it did not know: read it all
                await self.refresh()
        self._read_shards()

    def _read_shards(self) -> None:
        first: dict[str, tuple[int, ClusterNode]] = {}
        for slot, nodes in self.client.nodes_manager.slots_cache.items():
            if nodes and (nodes[0].name not in first or slot < first[nodes[0].name][0]):
                first[nodes[0].name] = (slot, nodes[0])
        self.shards = [node for _, node in sorted(first.values(), key=lambda item: item[0])]
        self._read_at = time.monotonic()

    async def close(self) -> None:
        await self.client.aclose()

    def describe(self) -> str:
        masters, nodes = len(self.shards), len(self.client.get_nodes())
        return (f"Redis Cluster at {self.address}: {masters} master{'s' * (masters != 1)}, "
                f"{nodes - masters} replica{'s' * (nodes - masters != 1)}")

    def fan_out(self, name: str, sub: str) -> tuple[list[ClusterNode], ResponsePolicy | None] | None:
        """The nodes a command without keys goes to, all of them, and how their replies combine; None
        for a command that goes to one node (its slot's, or the default node)."""
        if name == "acl" and sub in ACL_CHANGES:
            return self.client.get_nodes(), ResponsePolicy.ALL_SUCCEEDED
        policy = self.policies.get(f"{name} {sub}") or self.policies.get(name)
        if policy is None or policy.response_policy is ResponsePolicy.SPECIAL:
            return None  # INFO, MEMORY STATS, LATENCY ...: what one node says
        if policy.request_policy is RequestPolicy.ALL_SHARDS:
            return self.client.get_primaries(), policy.response_policy
        if policy.request_policy is RequestPolicy.ALL_NODES:
            return self.client.get_nodes(), policy.response_policy
        return None

    def reaches_every_master(self, name: str, sub: str) -> bool:
        """A command that must reach every master (or every node) to mean what it says, which a
        transaction, run on one master, cannot hold. PING asks all masters only to check them: in a
        transaction it answers for the transaction's master."""
        return name == "scan" or (name != "ping" and self.fan_out(name, sub) is not None)

    def named(self, name: str, sub: str) -> str:
        """``SCRIPT EXISTS`` where the subcommand has a policy of its own (or is an ACL change), else ``DBSIZE``."""
        return f"{name} {sub}" if f"{name} {sub}" in self.policies or name == "acl" else name

    async def node_of(self, argv: list[bytes]) -> ClusterNode | ResponseError:
        """The master of the command's keys, the default node for a command without keys (or one Redis
        will refuse), or the CROSSSLOT error."""
        try:
            return (await self.client.get_nodes_from_slot(*_texts(argv)))[0]
        except SlotNotCoveredError as exc:
            raise NotRun(str(exc)) from exc
        except RedisClusterException as exc:
            if "same key slot" in str(exc):
                return ResponseError(CROSSSLOT)
        except RedisConnectionError as exc:  # the node redis-py asks COMMAND GETKEYS of is gone
            await self.refresh()
            raise NotRun(str(exc)) from exc
        except RedisError:  # a command Redis does not know: it answers so itself
            pass
        return self.client.get_default_node()

    def master(self, slot: int | None) -> ClusterNode:
        """The master of ``slot``; the default node for None (a transaction without keys)."""
        if slot is None:
            return self.client.get_default_node()
        try:
            return self.client.nodes_manager.get_node_from_slot(slot)
        except SlotNotCoveredError as exc:
            raise NotRun(str(exc)) from exc

    async def slots_of(self, argv: list[bytes]) -> set[int]:
        try:
            keys = await self.client.commands_parser.get_keys(*_texts(argv))
        except RedisConnectionError as exc:
            await self.refresh()
            raise NotRun(str(exc)) from exc
        except RedisError:
            return set()
        return {self.client.keyslot(key) for key in keys or ()}


async def connection_for(pool: Pool, channel: bytes) -> Any:
    """A connection to subscribe to ``channel`` on (on a cluster: :meth:`ClusterPool.get_connection`)."""
    return await (pool.get_connection(channel) if isinstance(pool, ClusterPool) else pool.get_connection())


def _texts(argv: list[bytes]) -> list[str]:
    """The arguments as redis-py's command parser reads them (it looks up subcommands as text, and
    misses ``XGROUP CREATE`` in bytes); the topology's client encodes them back to the same bytes
    (surrogateescape), so a binary key hashes to its own slot."""
    return [arg.decode("utf-8", "surrogateescape") for arg in argv]


def merge(replies: list[Any], policy: ResponsePolicy | None) -> Any:
    """One reply from every node's, as Redis's response policy for the command says."""
    errors = [r for r in replies if isinstance(r, ResponseError)]
    if policy is ResponsePolicy.ONE_SUCCEEDED:
        fine = [r for r in replies if not isinstance(r, ResponseError)]
        return fine[0] if fine else errors[0]
    if errors:
        return errors[0]
    if policy is ResponsePolicy.AGG_SUM:
        return sum(replies)
    if policy is ResponsePolicy.AGG_MIN:
        return min(replies)
    if policy is ResponsePolicy.AGG_MAX:
        return max(replies)
    if policy in (ResponsePolicy.AGG_LOGICAL_AND, ResponsePolicy.AGG_LOGICAL_OR):
        every = policy is ResponsePolicy.AGG_LOGICAL_AND
        combine = all if every else any
        if all(isinstance(r, list) for r in replies):  # SCRIPT EXISTS: one flag per script
            return [int(combine(column)) for column in zip(*replies)]
        return int(combine(replies))
    if policy is ResponsePolicy.ALL_SUCCEEDED:
        return replies[0]
    # no policy: arrays are joined (KEYS, SLOWLOG GET), and of single values any one answers (RANDOMKEY)
    if all(isinstance(r, list) for r in replies):
        return [item for reply in replies for item in reply]
    present = [r for r in replies if r is not None]
    return random.choice(present) if present else None


class ClusterPool:
    """One Redis user's connections to the cluster (a pool per node, made on first use), and how a
    batch of commands goes through them. What the gateway's helpers ask of a pool
    (``get_connection``, ``release``, ``disconnect``) reaches the default node."""

    def __init__(self, topology: Topology, username: str | None = None, password: str | None = None) -> None:
        self.topology = topology
        if username is None:
            username, password = topology.username, topology.password
        self._credentials: dict[str, Any] = {"username": username, "password": password}
        self._pools: dict[str, ConnectionPool] = {}
        self._lent: dict[int, ConnectionPool] = {}
        self._max = MAX_CONNECTIONS

    # -- what a redis-py pool offers -----------------------------------------------------------
    @property
    def max_connections(self) -> int:
        return self._max

    @max_connections.setter
    def max_connections(self, value: int) -> None:
        self._max = value
        for pool in self._pools.values():
            pool.max_connections = value

    async def get_connection(self, channel: bytes | None = None) -> Any:
        """A connection to the default node, or (``channel``) to the master a PUBLISH to ``channel``
        goes to, so that its reply counts the gateway's subscribers (a cluster's PUBLISH reaches every
        node's subscribers, and counts only its own node's)."""
        node = self.topology.client.get_default_node()
        if channel is not None:
            node = await self.topology.node_of([b"PUBLISH", channel, b""])  # type: ignore[assignment]
        pool = self._pool(node)
        conn = await pool.get_connection()
        self._lent[id(conn)] = pool
        return conn

    async def release(self, conn: Any) -> None:
        await self._lent.pop(id(conn)).release(conn)

    async def disconnect(self, inuse_connections: bool = True) -> None:
        for pool in self._pools.values():
            await pool.disconnect(inuse_connections=inuse_connections)

    def _pool(self, node: ClusterNode) -> ConnectionPool:
        pool = self._pools.get(node.name)
        if pool is None:
            pool = tcp_pool(self.topology.node_url.format(host=node.host, port=node.port), **self._credentials)
            pool.max_connections = self._max
            self._pools[node.name] = pool
        return pool

    async def _on(self, node: ClusterNode, batch: list[list[bytes]]) -> list[Any]:
        """``batch`` as one write to ``node``; a node that cannot be reached has the topology read again."""
        try:
            return await send_batch(self._pool(node), batch)
        except NotRun:
            await self.topology.refresh()
            raise

    # -- commands -------------------------------------------------------------------------------
    async def send(self, batch: list[list[bytes]], *, atomic: bool = False) -> list[Any]:
        """The replies to ``batch`` in its order (errors as values); ``atomic``: ``[MULTI, ..., EXEC]``."""
        replies = await (self._transaction(batch) if atomic else self._pipeline(batch))
        if all(isinstance(r, ResponseError) and error_text(r).startswith(NOT_SERVED) for r in replies):
            await self.topology.refresh()
            raise NotRun(error_text(replies[0]))  # nothing ran: a failover under way
        return replies

    async def _pipeline(self, batch: list[list[bytes]]) -> list[Any]:
        replies: list[Any] = [None] * len(batch)
        part: dict[int, ClusterNode] = {}
        for i, argv in enumerate(batch):
            route = await self._route(argv)
            if isinstance(route, ClusterNode):
                part[i] = route
            elif isinstance(route, ResponseError):
                replies[i] = route
            else:  # it reaches every master: after what came before it, before what comes after
                await self._part(batch, part, replies)
                part = {}
                replies[i] = await route()
        await self._part(batch, part, replies)
        return replies

    async def _route(self, argv: list[bytes]) -> ClusterNode | ResponseError | Special:
        name = argv[0].decode("utf-8", "replace").lower()
        sub = argv[1].decode("utf-8", "replace").lower() if len(argv) > 1 else ""
        if name == "scan":
            return lambda: self._scan(argv)
        every = self.topology.fan_out(name, sub)
        if every is not None:
            return lambda: self._fan_out(argv, *every)
        return await self.topology.node_of(argv)

    async def _part(self, batch: list[list[bytes]], part: dict[int, ClusterNode], replies: list[Any],
                    redirects: int = 2) -> None:
        """The commands ``part`` names, one batch per node, all nodes at once; their replies into ``replies``."""
        if not part:
            return
        by_node: dict[str, tuple[ClusterNode, list[int]]] = {}
        for i, node in part.items():
            by_node.setdefault(node.name, (node, []))[1].append(i)
        groups = list(by_node.values())
        if len(groups) == 1:  # the common case, one node: awaited here, with no task to spawn
            node, rows = groups[0]
            results: list[Any] = [await self._on(node, [batch[i] for i in rows])]
        else:
            results = await asyncio.gather(*(self._on(node, [batch[i] for i in rows]) for node, rows in groups),
                                           return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed and (len(failed) == len(results) or not all(isinstance(r, NotRun) for r in failed)):
            raise failed[0]  # nothing ran (503); or a connection lost mid-way, or a refused login
        moved: list[int] = []
        for (_, rows), result in zip(groups, results):
            for n, i in enumerate(rows):
                if isinstance(result, BaseException):  # this master is gone; the other parts ran
                    replies[i] = ResponseError(f"TRYAGAIN this command did not run: {result}")
                    continue
                reply = result[n]
                replies[i] = reply
                if redirects and isinstance(reply, ResponseError) and error_text(reply).startswith("MOVED "):
                    moved.append(i)
        if moved:
            await self.topology.moved(*(error_text(replies[i]) for i in moved))
            again: dict[int, ClusterNode] = {}
            for i in moved:
                route = await self.topology.node_of(batch[i])
                if isinstance(route, ClusterNode):
                    again[i] = route
            await self._part(batch, again, replies, redirects - 1)
        for i, reply in enumerate(replies):
            if i in part and isinstance(reply, ResponseError) and error_text(reply).startswith("ASK "):
                replies[i] = await self._asked(batch[i], error_text(reply))

    async def _asked(self, argv: list[bytes], redirect: str) -> Any:
        """``ASK <slot> <host:port>``: the key is being migrated to that node, which serves it after ASKING."""
        host, _, port = redirect.split()[-1].rpartition(":")
        node = self.topology.client.get_node(host=host, port=int(port))
        if node is None:
            return ResponseError(f"TRYAGAIN the slot is being moved to {host}:{port}, a node not yet known")
        return (await self._on(node, [[b"ASKING"], argv]))[1]

    async def _fan_out(self, argv: list[bytes], nodes: list[ClusterNode], policy: ResponsePolicy | None) -> Any:
        results = await asyncio.gather(*(self._on(node, [argv]) for node in nodes), return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            if len(failed) == len(results) or not all(isinstance(r, NotRun) for r in failed):
                raise failed[0]
            raise RedisConnectionError(f"{failed[0]} (the command ran on {len(results) - len(failed)} of "
                                       f"{len(results)} nodes)")
        return merge([result[0] for result in results if isinstance(result, list)], policy)

    async def _scan(self, argv: list[bytes]) -> Any:
        shards = self.topology.shards
        count = len(shards)
        try:
            cursor = int(argv[1])
        except (IndexError, ValueError):
            cursor = -1
        if cursor < 0 or not shards:  # Redis answers what is wrong with the arguments
            return (await self._on(self.topology.client.get_default_node(), [argv]))[0]
        index, at = cursor % count, cursor // count
        [reply] = await self._on(shards[index], [[argv[0], str(at).encode(), *argv[2:]]])
        if not isinstance(reply, list):
            return reply
        following = int(reply[0])
        if following:
            cursor = following * count + index
        else:  # this master is done: the next one from its start, or the end of the walk
            cursor = index + 1 if index + 1 < count else 0
        return [str(cursor).encode(), reply[1]]

    async def _transaction(self, batch: list[list[bytes]]) -> list[Any]:
        """``[MULTI, ..., EXEC]`` on the master of its one slot; otherwise discarded as Redis discards a
        transaction with an error queued, the error saying why (the gateway shows the first)."""
        inner, slots = batch[1:-1], set()
        for n, argv in enumerate(inner):
            name = argv[0].decode("utf-8", "replace")
            sub = argv[1].decode("utf-8", "replace").lower() if len(argv) > 1 else ""
            why = None
            if self.topology.reaches_every_master(name.lower(), sub):
                why = EVERY_MASTER_IN_TRANSACTION.format(name=self.topology.named(name.lower(), sub).upper())
            else:
                slots |= await self.topology.slots_of(argv)
                if len(slots) > 1:
                    why = CROSSSLOT_IN_TRANSACTION
            if why is not None:
                queued: list[Any] = [Status(b"QUEUED")] * len(inner)
                queued[n] = ResponseError(why)
                return [Status(b"OK"), *queued, ResponseError("EXECABORT Transaction discarded because of "
                                                              "previous errors.")]
        slot = next(iter(slots), None)
        replies = await self._on(self.topology.master(slot), batch)
        moved = next((error_text(r) for r in replies[1:-1] if isinstance(r, ResponseError)
                      and error_text(r).startswith("MOVED ")), None)
        if moved is not None:  # discarded, not run: once more, on the slot's new master
            await self.topology.moved(moved)
            replies = await self._on(self.topology.master(slot), batch)
        return replies


class RedisClusterBackend(ExternalRedis):
    """An external Redis Cluster (``--redis-url`` of any of its nodes, found to be a cluster or named
    one with ``--redis-cluster``)."""

    name = "redis-cluster"

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.topology = Topology(url)

    def pool(self, username: str | None = None, password: str | None = None) -> ClusterPool:  # type: ignore[override]
        return ClusterPool(self.topology, username, password)

    async def start(self) -> None:
        await self.topology.start()

    async def stop(self) -> None:
        await self.topology.close()

    def describe(self) -> str:
        return f"external {self.topology.describe()}"

    def outage(self, exc: BaseException) -> tuple[str, int]:
        if isinstance(exc, BusyLoadingError):
            return super().outage(exc)
        why = (f"the Redis Cluster at {self._host()} cannot serve this now ({exc}): a master is unreachable or "
               "failing over to its replica; the gateway follows the cluster's new topology")
        return why, 1
