"""The ``svckit`` command: ``sandbox``, ``demo`` and ``doctor`` (:data:`DESCRIPTION`, what ``--help`` says).

No secret needs to be on its command line, where every local user reads it (``ps``,
/proc/PID/cmdline): an external Redis's URL, which carries its password, comes from the
environment (:data:`REDIS_URL_VARIABLE`) or a file (``--redis-url-file``); ``--redis-url`` still
works, and warns when the URL it is given holds a password.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, get_args
from urllib.parse import urlsplit

from svckit.sandbox.options import SandboxOptions

DESCRIPTION = ("Explore and operate key-value, vector, account and workflow services from Jupyter. "
               "'svckit demo' starts the embedded sandbox with demo data and JupyterLab on the tour; "
               "'svckit sandbox' serves all four interfaces on loopback; 'svckit doctor' checks the install.")
#: the environment variable an external Redis's URL is read from when no --redis-url(-file) is given
REDIS_URL_VARIABLE = "SVC_REDIS_URL"


def data_home() -> Path:
    """Where the sandbox and the demo keep their state: ``$XDG_DATA_HOME/svckit`` (the XDG base
    directory rule: an absolute path, else ignored), by default ``~/.local/share/svckit``. Read when
    a command runs, not at import."""
    from svckit.config import Settings

    base = Settings.from_env().xdg_data_home or ""
    return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share") / "svckit"


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: loopback). Anything else serves every area, bearer "
                             "tokens included, over plain HTTP to whoever can reach that address (warned on start)")
    parser.add_argument("--port", type=int, default=8765, help="port; 0 picks a free one (default 8765)")
    parser.add_argument("--tls", action="store_true",
                        help="serve https, with a certificate from a local CA made at start; SVC_CA_FILE "
                             "names the CA certificate the clients trust")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="state directory kept across restarts (default ~/.local/share/svckit/sandbox, "
                             "or svckit/sandbox under $XDG_DATA_HOME)")
    parser.add_argument("--backend", choices=get_args(SandboxOptions.model_fields["backend"].annotation), default="auto",
                        help=f"key-value backend: auto = an external Redis ({REDIS_URL_VARIABLE}, --redis-url-file "
                             "or --redis-url), else redis-server on PATH, else fakeredis")
    url = parser.add_mutually_exclusive_group()
    url.add_argument("--redis-url-file", metavar="FILE", type=Path, default=None,
                     help="use the external Redis (or any node of a Redis Cluster) whose URL, "
                          "redis://user:password@host:port, is the first line of FILE; without it, "
                          f"the URL in the environment variable {REDIS_URL_VARIABLE}, if set")
    url.add_argument("--redis-url", metavar="URL", default=None,
                     help=f"the same, the URL given here; one with a password shows in the process list to "
                          f"every local user (warned about): prefer {REDIS_URL_VARIABLE} or --redis-url-file")
    parser.add_argument("--redis-cluster", action="store_true",
                        help=f"the external Redis ({REDIS_URL_VARIABLE}, --redis-url-file or --redis-url) is a node of a "
                             "Redis Cluster (found out by itself otherwise)")
    parser.add_argument("--seed", choices=["demo"], default=None, help="load a data set on start")
    parser.add_argument("--embedding-model", type=Path, default=None,
                        help="a sentence-transformers model directory for the vector area "
                             "(default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--demo-limit", type=int, default=None,
                        help="with --seed demo: load only the first N documents into the vector indexes")
    parser.add_argument("--areas", default=None,
                        help="comma-separated areas to serve (kv,vector,account,queue); default: all")
    parser.add_argument("--allow-destination", metavar="HOST", action="append", default=[],
                        help="the queue area delivers messages only to loopback (localhost, 127.0.0.0/8, ::1); "
                             "also deliver to HOST (repeat it for several)")
    parser.add_argument("--allowed-host", metavar="NAME", action="append", default=[],
                        help="the sandbox answers only requests whose Host header is 127.0.0.1, localhost, ::1 "
                             "or --host (so a web page cannot reach it by DNS rebinding); also answer NAME "
                             "(repeat it for several; * for any)")


def _areas_option(args: argparse.Namespace) -> dict[str, Any]:
    """``--areas kv,queue`` -> ``areas=("kv", "queue")``; absent -> the Sandbox default (all)."""
    names = [name.strip() for name in (getattr(args, "areas", None) or "").split(",") if name.strip()]
    return {"areas": tuple(names)} if names else {}


def redis_url_of(args: argparse.Namespace) -> str | None:
    """The external Redis's URL: ``--redis-url``, else the first line of ``--redis-url-file``, else
    :data:`REDIS_URL_VARIABLE` (read when a command runs); None for none. A ``--redis-url`` that
    holds a password is warned about on stderr (without the password)."""
    url = getattr(args, "redis_url", None)
    if url:
        if urlsplit(url).password:
            from svckit.sandbox.logs import LOG

            LOG.warning("--redis-url holds a password, which every local user can read in the process list "
                        "(ps); give the URL in the environment variable %s or in a file (--redis-url-file FILE, "
                        "mode 0600) instead", REDIS_URL_VARIABLE)
        return url
    path = getattr(args, "redis_url_file", None)
    if path is not None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SystemExit(f"svckit: --redis-url-file {path}: {exc.strerror or exc}") from None
        if not lines or not lines[0].strip():
            raise SystemExit(f"svckit: --redis-url-file {path}: its first line should be the Redis URL; it is empty")
        return lines[0].strip()
    from svckit.config import Settings

    return Settings.from_env().redis_url


def sandbox_from_args(args: argparse.Namespace, **extra: Any):  # -> Sandbox
    from svckit.sandbox import Sandbox

    return Sandbox(
        args.data_dir or data_home() / "sandbox",
        host=args.host,
        port=args.port,
        seed=args.seed,
        backend=args.backend,
        redis_url=redis_url_of(args),
        redis_cluster=args.redis_cluster,
        embedding_model=args.embedding_model,
        demo_limit=args.demo_limit,
        tls=args.tls,
        allow_destinations=tuple(getattr(args, "allow_destination", None) or ()),
        allowed_hosts=tuple(getattr(args, "allowed_host", None) or ()),
        **_areas_option(args),
        **extra,
    )


def env_lines(env: dict[str, str], names: str = "svc") -> list[tuple[str, str]]:
    """The ``NAME=value`` pairs ``svckit sandbox --env NAMES`` prints for the sandbox's SVC_* ``env``:
    ``svc`` as they are; ``vendor`` under the vendor's names (:func:`svckit.config.vendor_env`; a
    setting without one keeps its SVC name), and with the CA (``--tls``) also as NODE_EXTRA_CA_CERTS,
    which the vendor's Node SDKs (Node itself) trust."""
    if names == "svc":
        return list(env.items())
    from svckit.config import vendor_env

    lines = []
    for name, value in vendor_env(env).items():
        lines.append((name, value))
        if name == "SVC_CA_FILE":
            lines.append(("NODE_EXTRA_CA_CERTS", value))
    return lines


def cmd_sandbox(args: argparse.Namespace) -> int:
    # A process of its own: everything it creates is private, the redis child's files included (a
    # Sandbox in a notebook kernel leaves the kernel's umask alone and creates its files 0600 itself).
    os.umask(0o077)
    from svckit.sandbox.logs import LOG, to_stderr

    to_stderr()
    sandbox = sandbox_from_args(args)

    def ready(sb) -> None:
        for name, value in env_lines(sb.env, args.env):
            print(f"{name}={value}")
        sys.stdout.flush()
        LOG.info("serving %s (data in %s); Ctrl-C stops", sb.url, sb.data_dir)

    sandbox.serve_forever(on_ready=ready)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``svckit demo``: the sandbox with demo data plus JupyterLab on the tour, or (``--execute``) every
    notebook run headless against a fresh sandbox and written as HTML."""
    import shutil
    import tempfile

    from svckit import demo

    notebooks = demo.find_notebooks(args.notebooks)
    if not notebooks:
        print(f"svckit demo: no notebooks in {args.notebooks or demo.NOTEBOOKS_DIR}", file=sys.stderr)
        return 2
    fresh = None
    if args.execute and args.data_dir is None:
        fresh = Path(tempfile.mkdtemp(prefix="svckit-demo-data-"))  # a fresh sandbox for every run
        args.data_dir = fresh
    from svckit.sandbox.logs import to_stderr

    to_stderr()
    sandbox = sandbox_from_args(args)
    with demo.stopped_by_signals():  # Ctrl-C and SIGTERM stop it, whatever it inherited
        try:
            sandbox.start()
            env = demo.kernel_env(sandbox.env, sandbox.data_dir)
            print(f"[svckit demo] sandbox at {sandbox.url} (seed {args.seed or 'none'}; data in {sandbox.data_dir})",
                  file=sys.stderr)
            if args.execute:
                out = args.out or Path(tempfile.mkdtemp(prefix="svckit-demo-html-"))
                print(f"[svckit demo] running {len(notebooks)} notebook(s); HTML goes to {out}", flush=True)
                runs = []
                for nb in notebooks:
                    run = demo.execute_notebook(nb, out, env, timeout=args.timeout)
                    print(run.summary(), flush=True)
                    runs.append(run)
                failed = [r for r in runs if not r.ok]
                print(f"[svckit demo] {len(runs) - len(failed)} of {len(runs)} notebook(s) ran cleanly; HTML in {out}",
                      flush=True)
                return 1 if failed else 0
            workdir = args.workdir or data_home() / "notebooks"
            demo.copy_notebooks(workdir, args.notebooks)
            print(f"[svckit demo] starting JupyterLab in {workdir} on {demo.TOUR} (its log: "
                  f"{demo.lab_log_path(workdir)})", file=sys.stderr)
            return demo.run_lab(workdir, env, port=args.lab_port, no_browser=args.no_browser,
                                when_ready=lambda: _say_if_still_seeding(sandbox))
        finally:
            sandbox.stop()
            if fresh is not None:
                shutil.rmtree(fresh, ignore_errors=True)


def _extras_option(value: str) -> list[str]:
    """``--extras a,b``: the extras named, ``all`` written out; an unknown one is a usage error (exit 2)."""
    from svckit import doctor

    try:
        return doctor.resolve_extras([e.strip() for e in value.split(",") if e.strip()])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _say_if_still_seeding(sandbox: Any) -> None:
    """Once the URL is out: if the demo corpus is still being embedded (minutes on a CPU, the first
    time), say so; the sandbox logs a line when it is ready."""
    if not sandbox.wait_settled(timeout=2.0):
        print("[svckit demo] The vector demo data is still being embedded (a few minutes on a CPU, the first "
              "time; vector queries wait for it). A line here says when it is ready.", file=sys.stderr, flush=True)


def cmd_doctor(args: argparse.Namespace) -> int:
    """``svckit doctor``: requirements, imports and widgets checked, and with ``--sandbox URL`` a running
    sandbox's health; exit 1 naming what is missing or failing."""
    from svckit import doctor

    problems = doctor.check(args.extras)
    print(doctor.report(problems))
    healthy = True
    if args.sandbox:
        text, healthy = doctor.check_sandbox(args.sandbox)
        print(text)
    return 1 if problems or not healthy else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svckit", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sandbox", help="serve all four interfaces on loopback and print the SVC_* variables")
    add_sandbox_options(p)
    p.add_argument("--env", choices=["svc", "vendor"], default="svc",
                   help="the variable names printed: svc = SVC_* (default); vendor = the vendor's own "
                        "(UPSTASH_REDIS_REST_URL, QSTASH_TOKEN, ...: what its SDKs' from_env()/fromEnv() "
                        "read), SVC_* where the vendor has none, and NODE_EXTRA_CA_CERTS with --tls")
    p.set_defaults(func=cmd_sandbox)
    d = sub.add_parser("demo", help="the sandbox with demo data and JupyterLab on the tour notebook; "
                                    "--execute runs every notebook headless and writes HTML")
    add_sandbox_options(d)
    d.set_defaults(func=cmd_demo, seed="demo", port=0)
    d.add_argument("--execute", action="store_true", help="run every notebook headless; exit 1 if a cell fails")
    d.add_argument("--out", type=Path, default=None, help="folder for the HTML of --execute (default: a new temp folder)")
    d.add_argument("--notebooks", type=Path, default=None, help="folder of notebooks (default: the packaged demos)")
    d.add_argument("--timeout", type=int, default=600, help="seconds one cell may run (--execute)")
    d.add_argument("--workdir", type=Path, default=None,
                   help="folder JupyterLab opens; the demos are copied there once (default ~/.local/share/svckit/"
                        "notebooks, or svckit/notebooks under $XDG_DATA_HOME)")
    d.add_argument("--lab-port", type=int, default=None, help="JupyterLab port (default: its own choice)")
    d.add_argument("--no-browser", action="store_true", help="do not open a browser")
    c = sub.add_parser("doctor", help="check that everything svckit needs is installed (names what is missing)")
    c.add_argument("--extras", type=_extras_option, default="all",
                   help="comma-separated extras to check besides the core: sandbox, local, notebook, dev, "
                        "bench, or all (default: all = sandbox,local,notebook, what svckit[all] installs)")
    c.add_argument("--sandbox", metavar="URL", default=None,
                   help="also read the health of the sandbox running at URL (its base URL, e.g. "
                        "http://127.0.0.1:8080): Redis, the vector index, SQLite")
    c.set_defaults(func=cmd_doctor)
    return parser


def main(argv: list[str] | None = None) -> int:
    from svckit.errors import DataDirectoryInUse, UnsafePath

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (UnsafePath, DataDirectoryInUse) as exc:  # the message says why and what to do: no traceback
        print(f"svckit {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
