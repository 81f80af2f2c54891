"""What the remote bench's jobs share: the context they run in, the job record, the runner, the table.

A job is one thing a notebook user does (scan every key, load 1,000 runs into the timeline), done
once with svckit (``ours``) and once the way the peer SDK's README shows (``peer``), both through
the latency proxy. Its cost is counted in round trips against its ``floor``: the fewest sequential
round trips the service's contract allows for that work (a cursor chain is sequential; requests
that do not depend on each other can overlap; one request may carry a page).

A job's round trips are what the distance added to it: (time through the proxy - time straight to
the sandbox) / RTT. The time straight to the sandbox is the work itself (the server's and the
client's CPU, which on this 2-core machine they share), run in the same session; subtracting it
leaves what the job pays for being far away, the thing its design decides.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

#: "never slower than the peer" allows this much: two runs of the same chain of requests differ by a
#: few percent on a shared 2-core machine (svckit's and the peer's SCAN walks trade places run to run)
NOISE = 1.05


@dataclass
class Ctx:
    """Where the jobs run: ``env`` (SVC_* through the latency proxy, and SVC_CA_FILE on https),
    ``direct`` (the same straight to the sandbox: seeding and checks pay no latency), the RTT the
    proxy adds, and what seeding left for the jobs (``data``)."""

    scheme: str
    rtt: float
    env: dict[str, str]
    direct: dict[str, str]
    data: dict[str, Any] = field(default_factory=dict)
    _clients: dict[str, Any] = field(default_factory=dict, repr=False)

    def ca_file(self) -> str | None:
        return self.env.get("SVC_CA_FILE")

    def connect(self) -> Any:
        """svckit's clients through the proxy (made once, so jobs run on warm connections)."""
        if "svckit" not in self._clients:
            import svckit

            self._clients["svckit"] = svckit.connect(self.env)
        return self._clients["svckit"]

    def connect_direct(self) -> Any:
        if "direct" not in self._clients:
            import svckit

            self._clients["direct"] = svckit.connect(self.direct)
        return self._clients["direct"]

    def peer(self, name: str, make: Callable[[], Any]) -> Any:
        """A peer SDK client, made once per context."""
        if name not in self._clients:
            self._clients[name] = make()
        return self._clients[name]


def through(env: dict[str, str], port: int) -> dict[str, str]:
    """``env`` with every *_URL pointing at the proxy's ``port`` on loopback instead of the sandbox."""
    out = dict(env)
    for name, value in env.items():
        if name.endswith("_URL") and value.startswith(("http://", "https://")):
            parts = urlsplit(value)
            out[name] = urlunsplit(parts._replace(netloc=f"{parts.hostname}:{port}"))
    return out


@dataclass(frozen=True)
class Job:
    area: str
    name: str
    ours: Callable[[Ctx], object]
    floor: Callable[[Ctx], int]
    peer: Callable[[Ctx], object] | None = None
    prepare: Callable[[Ctx], object] | None = None
    peer_note: str = ""


@dataclass
class Row:
    area: str
    job: str
    scheme: str
    floor: int
    rtt: float
    ours: float  # seconds through the proxy
    ours_local: float  # seconds straight to the sandbox
    peer: float | None = None
    peer_local: float | None = None
    peer_note: str = ""

    @property
    def ours_rt(self) -> float:
        return max(self.ours - self.ours_local, 0.0) / self.rtt

    @property
    def peer_rt(self) -> float | None:
        if self.peer is None or self.peer_local is None:
            return None
        return max(self.peer - self.peer_local, 0.0) / self.rtt

    @property
    def holds(self) -> bool:
        """The issue's bar: within 1.5x the floor in round trips, never slower than the peer (within
        :data:`NOISE`)."""
        return self.ours_rt <= 1.5 * max(self.floor, 1) and (self.peer is None or self.ours <= self.peer * NOISE)


def _timed(job: Job, fn: Callable[[Ctx], object], ctx: Ctx, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        if job.prepare is not None:
            job.prepare(ctx)
        start = time.perf_counter()
        fn(ctx)
        best = min(best, time.perf_counter() - start)
    return best


def run_jobs(remote: Ctx, local: Ctx, jobs: Sequence[Job], repeat: int, *, only: str | None = None,
             say: Callable[[str], None] = print) -> list[Row]:
    """Each job's best of ``repeat`` runs, svckit's and the peer's, through the proxy (``remote``)
    and straight to the sandbox (``local``), alternating which side goes first."""
    rows = []
    for i, job in enumerate(jobs):
        if only and only not in f"{job.area} {job.name}":
            continue
        sides = [("ours", job.ours), ("peer", job.peer)]
        times: dict[str, float | None] = {"peer": None, "peer_local": None}
        for side, fn in sides if i % 2 == 0 else sides[::-1]:
            if fn is not None:
                times[side] = _timed(job, fn, remote, repeat)
                times[f"{side}_local"] = _timed(job, fn, local, repeat)
        row = Row(job.area, job.name, remote.scheme, job.floor(remote), remote.rtt, times["ours"] or 0.0,
                  times["ours_local"] or 0.0, times["peer"], times["peer_local"], job.peer_note)
        peer = "" if row.peer_rt is None else f", peer {row.peer_rt:.1f} ({row.peer:.2f} s)"
        say(f"  {remote.scheme:5} {job.area:8} {job.name:36} floor {row.floor:4}, svckit {row.ours_rt:6.1f} "
            f"({row.ours:.2f} s, {row.ours_local:.2f} s local){peer}")
        rows.append(row)
    return rows


def table(rows: Sequence[Row]) -> str:
    out = [("| area | job | scheme | floor | svckit round trips | / floor | svckit s (local s) | peer round trips "
           "| peer s (local s) | svckit / peer, time | holds |"),
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        peer = "—" if r.peer_rt is None else f"{r.peer_rt:,.1f}"
        peer_s = "—" if r.peer is None else f"{r.peer:.2f} ({r.peer_local:.2f})"
        ratio = "—" if r.peer is None else f"{r.ours / r.peer:.2f}×"
        note = f" ({r.peer_note})" if r.peer_note else ""
        out.append(f"| {r.area} | {r.job} | {r.scheme} | {r.floor:,} | {r.ours_rt:,.1f} | "
                   f"{r.ours_rt / max(r.floor, 1):.2f}× | {r.ours:.2f} ({r.ours_local:.2f}) | {peer}{note} | {peer_s} "
                   f"| {ratio} | {'yes' if r.holds else '**no**'} |")
    return "\n".join(out)


def trust(ca_file: str | None) -> None:
    """Make the peer SDKs (httpx, requests) trust the sandbox's CA: SSL_CERT_FILE is what they read."""
    if ca_file:
        os.environ["SSL_CERT_FILE"] = ca_file
        os.environ["REQUESTS_CA_BUNDLE"] = ca_file
    else:
        os.environ.pop("SSL_CERT_FILE", None)
        os.environ.pop("REQUESTS_CA_BUNDLE", None)
