"""What a notebook is connected to, said at its top: ``notebook_clients()`` displays it.

A notebook is saved, shared and run again against other services, so its first output tells a reader
which service its numbers came from: the embedded sandbox (and where its data lives: the kernel's own,
or the one ``svckit demo`` started) or the service that the SVC_* variables or the vendor's own names
point at, area by area, with the variable each address came from. It never shows a credential: an
address is its scheme, host and port only (a user name, password or token in a URL's user part, path
or query stays out), a token or key is ``***`` plus at most its last four characters
(:func:`svckit.errors.mask`). The HTML form is an output the saved notebook keeps; the text form is
what a script prints and what viewers without HTML show.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from svckit.config import VARIABLES, VENDOR_VARIABLES, Settings
from svckit.errors import mask

#: set by ``svckit demo`` in its kernels' environment (:func:`svckit.demo.kernel_env`): the data
#: directory of the sandbox the SVC_* variables point at, so a notebook can say it is that sandbox
DEMO_SANDBOX_VARIABLE = "SVCKIT_DEMO_SANDBOX"

#: area label, the variable of its address, its credentials as (label, variable, secret)
AREAS: tuple[tuple[str, str, tuple[tuple[str, str, bool], ...]], ...] = (
    ("Key-value", "SVC_KV_URL", (("token", "SVC_KV_TOKEN", True), ("read-only token", "SVC_KV_READONLY_TOKEN", True))),
    ("Vector", "SVC_VECTOR_URL", (("token", "SVC_VECTOR_TOKEN", True),)),
    ("Account (developer API)", "SVC_DEVAPI_URL", (("e-mail", "SVC_DEVAPI_EMAIL", False), ("key", "SVC_DEVAPI_KEY", True))),
    ("Queue", "SVC_QUEUE_URL", (("token", "SVC_QUEUE_TOKEN", True),
                                ("signing key", "SVC_QUEUE_CURRENT_SIGNING_KEY", True))),
)

_STYLE = "border-left:3px solid #2e7d32;padding:2px 8px;font-size:13px;line-height:1.5"
_CELL = "text-align:left;padding:1px 12px 1px 0;vertical-align:top"


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def address(url: str) -> str:
    """``url`` as scheme, host and port: no user info, path, query or fragment (where a credential
    could be), ``http://127.0.0.1:4242`` for ``http://user:pw@127.0.0.1:4242/kv?token=...``."""
    parts = urlsplit(url)
    if not parts.hostname:
        return "(not a URL)"
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def source_of(env: Mapping[str, str], name: str) -> str | None:
    """The variable of ``env`` that gives SVC_* ``name`` its value (itself, or a vendor name), as
    :func:`svckit.config.lookup` chooses it."""
    return next((n for n in (name, *VENDOR_VARIABLES.get(name, ())) if env.get(n)), None)


@dataclass(frozen=True)
class AreaRow:
    area: str
    address: str  # scheme://host:port, or "not set"
    source: str  # the variable it came from, or "" (the kernel's sandbox, or not set)
    credentials: str  # "token ***abcd, read-only token ***wxyz"

    @property
    def url_set(self) -> bool:
        return self.address != "not set"


@dataclass(frozen=True)
class ConnectionStatus:
    """What the clients of a notebook talk to; ``str()`` is the text, ``_repr_html_`` the HTML."""

    headline: str  # text, one line
    headline_html: str
    rows: tuple[AreaRow, ...]
    log: str = ""  # the kernel's sandbox's start-up log, folded in the HTML

    def __str__(self) -> str:
        lines = [self.headline]
        for row in self.rows:
            source = f" ({row.source})" if row.source else ""
            creds = f"; {row.credentials}" if row.credentials else ""
            lines.append(f"  {row.area}: {row.address}{source}{creds}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        e = html.escape
        sources = any(r.source for r in self.rows)  # none for the kernel's own sandbox: no column
        head = "".join(f'<th style="{_CELL}">{h}</th>'
                       for h in ("Area", "Address", *(("From",) if sources else ()), "Credentials"))
        body = "".join(
            f'<tr><td style="{_CELL}">{e(r.area)}</td><td style="{_CELL}">{_code(r.address) if r.url_set else "not set"}</td>'
            + (f'<td style="{_CELL}">{f"<code>{e(r.source)}</code>" if r.source else "—"}</td>' if sources else "")
            + f'<td style="{_CELL}">{e(r.credentials) or "—"}</td></tr>' for r in self.rows)
        log = (f"<details><summary>start-up log</summary><pre>{e(self.log)}</pre></details>" if self.log else "")
        return (f'<div class="svc-connection" style="{_STYLE}">{self.headline_html}'
                f'<table class="svc-connection-areas" style="border-collapse:collapse;margin:2px 0">'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{log}</div>")

    def show(self) -> None:
        """Display it in IPython (as HTML, kept by a saved notebook), print it elsewhere."""
        from svckit.display import ipython_shell

        if ipython_shell() is not None:
            from IPython.display import display

            display({"text/html": self._repr_html_(), "text/plain": str(self)}, raw=True)
        else:
            print(self)


def _rows(settings: Settings, env: Mapping[str, str] | None) -> tuple[AreaRow, ...]:
    attr = VARIABLES
    rows = []
    for area, url_name, creds in AREAS:
        url = getattr(settings, attr[url_name])
        shown = []
        for label, name, secret in creds:
            value = getattr(settings, attr[name])
            if value:
                shown.append(f"{label} {mask(value) if secret else value}")
        source = (source_of(env, url_name) or "") if env is not None and url else ""
        rows.append(AreaRow(area, address(url) if url else "not set", source, ", ".join(shown)))
    return tuple(rows)


def from_variables(settings: Settings, env: Mapping[str, str]) -> ConnectionStatus:
    """The service the variables of ``env`` name (SVC_* or the vendor's), and the embedded sandbox's
    data directory when ``svckit demo`` passed them."""
    rows = _rows(settings, env)
    sources = {r.source for r in rows if r.source}
    kinds = ("the SVC_* variables" if all(s.startswith("SVC_") for s in sources)
             else "the vendor's variables" if not any(s.startswith("SVC_") for s in sources)
             else "the SVC_* and the vendor's variables")
    demo_dir = env.get(DEMO_SANDBOX_VARIABLE)
    if demo_dir:
        text = f"Connected to the embedded sandbox that svckit demo started (data in {demo_dir}), through {kinds}."
        markup = (f"<b>Connected to the embedded sandbox</b> that <code>svckit demo</code> started (data in "
                  f"<code>{html.escape(demo_dir)}</code>), through {html.escape(kinds)}.")
    else:
        text = f"Connected to the service named by {kinds}."
        markup = f"<b>Connected to the service</b> named by {html.escape(kinds)}."
    return ConnectionStatus(text, markup, rows)


def from_sandbox(sandbox: Any, log: str = "") -> ConnectionStatus:
    """The kernel's own embedded sandbox: where it runs, where its data is, what it holds, how to stop it."""
    holds = "; ".join(sandbox.holds().values())
    seed = f"{sandbox.seed} data" if sandbox.seed else "no seed data"
    data_dir = str(Path(sandbox.data_dir))
    text = (f"No SVC_* variables set: started a local sandbox at {sandbox.url} with {seed} ({holds}), data in "
            f"{data_dir}. It stops with the kernel, or now with svckit.demo.stop_local_sandbox().")
    e = html.escape
    markup = (
        f'<div class="svc-sandbox-status"><b>Local sandbox</b> at <code>{e(sandbox.url)}</code> with {e(seed)}: '
        f"{e(holds)}.<br>No <code>SVC_*</code> variables are set, so this kernel runs its own embedded sandbox, "
        f"data in <code>{e(data_dir)}</code>; it stops with the kernel, or now with "
        "<code>svckit.demo.stop_local_sandbox()</code>.</div>")
    return ConnectionStatus(text, markup, _rows(sandbox.settings, None), log)


def instead_of_hosted(status: ConnectionStatus) -> ConnectionStatus:
    """``status`` of the kernel's sandbox, saying why it is used although variables name a service:
    the notebook serves an app the service must call, and a hosted service cannot reach this kernel."""
    why = ("The SVC_* variables name a hosted service, which cannot call an app served from this kernel: "
           "this notebook runs against the kernel's own sandbox instead.")
    return ConnectionStatus(f"{why} {status.headline}", f"<div><b>{html.escape(why)}</b></div>{status.headline_html}",
                            status.rows, status.log)
