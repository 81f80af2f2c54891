"""A Redis Cluster of ``redis-server`` processes on loopback ports, for the tests that put the
key-value gateway in front of one. Every sandbox gets a cluster of its own (:func:`local_cluster`):
``redis_cluster`` in tests/conftest.py (the key-value suites), the widgets' demo cluster, the gateway's
cluster tests (which FLUSHALL it) and the failover tests. A cluster shared by two sandboxes would
carry one's keys into the other's counts.

Each node listens on 127.0.0.1 only, on a free port and a free cluster-bus port; ``redis-cli --cluster
create`` assigns the slots and the replicas. No password: nothing but loopback reaches it, and the
tests' processes are its only clients.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from tests.conftest import eventually, process_gone, require_binary

#: how long a silent master takes to be marked failed: Redis's default. A Lua script that runs past the
#: gateway's 5 s timeout silences its master that long, and a shorter timeout makes the cluster fail
#: for the tests that come after it (tests/sandbox/kv/test_scripts.py)
NODE_TIMEOUT_MS = 15_000
#: the failover tests' own clusters: a killed master is failed over within seconds
FAILOVER_NODE_TIMEOUT_MS = 1000


def free_ports(n: int) -> list[int]:
    """``n`` distinct free loopback ports (the sockets are held until all are chosen)."""
    socks = []
    try:
        for _ in range(n):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


class LocalCluster:
    """``masters`` masters with ``replicas`` replicas each, in ``root`` (one directory per node)."""

    def __init__(self, root: Path, masters: int = 3, replicas: int = 0, node_timeout_ms: int = NODE_TIMEOUT_MS) -> None:
        self.root, self.masters_wanted, self.replicas_wanted = root, masters, replicas
        self.node_timeout_ms = node_timeout_ms
        self.binary = require_binary("redis-server")
        self.cli = require_binary("redis-cli")
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        """A redis-py URL of one node: the gateway finds the others."""
        return f"redis://127.0.0.1:{next(iter(self.procs))}"

    def start(self) -> LocalCluster:
        count = self.masters_wanted * (1 + self.replicas_wanted)
        ports = free_ports(2 * count)
        for port, bus in zip(ports[:count], ports[count:]):
            folder = self.root / str(port)
            folder.mkdir(parents=True)
            self.procs[port] = subprocess.Popen(
                [self.binary, "--port", str(port), "--cluster-port", str(bus), "--bind", "127.0.0.1",
                 "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                 "--cluster-node-timeout", str(self.node_timeout_ms), "--save", "", "--appendonly", "no",
                 "--dir", str(folder), "--logfile", str(folder / "redis.log"), "--daemonize", "no"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for port in self.procs:
            self._wait(lambda port=port: self.client(port).ping(), f"node {port} to answer")
        create = subprocess.run(
            [self.cli, "--cluster", "create", *(f"127.0.0.1:{port}" for port in self.procs),
             "--cluster-replicas", str(self.replicas_wanted), "--cluster-yes"],
            capture_output=True, text=True, timeout=60, check=False)
        if create.returncode != 0:
            self.stop()
            raise RuntimeError(f"redis-cli --cluster create failed: {create.stdout[-2000:]}{create.stderr[-2000:]}")
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until every live node says the cluster is ok, knows the masters wanted, and every replica
        has its master's data."""
        def ready() -> bool:
            for port in self.live():
                client = self.client(port)
                if client.info("cluster").get("cluster_enabled") != 1 or \
                        b"cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
                    return False
                replication = client.info("replication")
                if replication["role"] == "slave" and replication.get("master_link_status") != "up":
                    return False
            return len(self.masters()) == self.masters_wanted
        self._wait(ready, "the cluster to be ready", timeout)

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)

    def live(self) -> list[int]:
        return [port for port, proc in self.procs.items() if proc.poll() is None]

    def masters(self) -> list[int]:
        """Ports of the masters that serve slots, as a live node sees them."""
        nodes = self.client(self.live()[0]).execute_command("CLUSTER", "NODES").decode()
        out = []
        for line in nodes.splitlines():
            parts = line.split()
            if "master" in parts[2] and "fail" not in parts[2] and len(parts) > 8:
                out.append(int(parts[1].split("@")[0].rsplit(":", 1)[1]))
        return sorted(out)

    def keys_of(self, port: int) -> set[str]:
        """The keys one node holds, asked of the node itself."""
        return {key.decode() for key in self.client(port).scan_iter(count=1000)}

    def wait_replicated(self, timeout: float = 30.0) -> None:
        """Until every replica has read all of its master's writes (their replication offsets meet)."""
        def caught_up() -> bool:
            for port in self.masters():
                info = self.client(port).info("replication")
                offsets = [info[f"slave{i}"]["offset"] for i in range(info["connected_slaves"])]
                if any(offset != info["master_repl_offset"] for offset in offsets):
                    return False
            return True
        self._wait(caught_up, "the replicas to catch up with their masters", timeout)

    def kill(self, port: int) -> None:
        """SIGKILL one node, and wait until it has exited."""
        proc = self.procs[port]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert process_gone(proc.pid)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    @staticmethod
    def _wait(check: Callable[[], object], what: str, timeout: float = 30.0) -> None:
        """:func:`eventually`, a node that does not answer (yet) counting as not there."""
        def probe() -> object:
            try:
                return check()
            except redis.RedisError:
                return False
        eventually(probe, what, timeout)


@contextmanager
def local_cluster(root: Path, **options: int) -> Iterator[LocalCluster]:
    """A started :class:`LocalCluster` in ``root``, stopped on exit (``options``: its constructor's)."""
    cluster = LocalCluster(root, **options).start()
    try:
        yield cluster
    finally:
        cluster.stop()
