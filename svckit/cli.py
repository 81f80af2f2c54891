"""The ``svckit`` command: ``svckit sandbox`` serves the four interfaces on loopback."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_DATA_DIR = Path.home() / ".local" / "share" / "svckit" / "sandbox"


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=8765, help="port; 0 picks a free one (default 8765)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help=f"state directory kept across restarts (default {DEFAULT_DATA_DIR})")
    parser.add_argument("--backend", choices=["auto", "redis", "fakeredis", "external"], default="auto",
                        help="key-value backend: auto = --redis-url, else redis-server on PATH, else fakeredis")
    parser.add_argument("--redis-url", default=None, help="use this external Redis for the key-value area")
    parser.add_argument("--seed", choices=["demo"], default=None, help="load a data set on start")


def sandbox_from_args(args: argparse.Namespace, **extra: object):  # -> Sandbox
    from svckit.sandbox import Sandbox

    return Sandbox(
        args.data_dir or DEFAULT_DATA_DIR,
        host=args.host,
        port=args.port,
        seed=args.seed,
        backend=args.backend,
        redis_url=args.redis_url,
        **extra,
    )


def cmd_sandbox(args: argparse.Namespace) -> int:
    sandbox = sandbox_from_args(args)

    def ready(sb) -> None:  # noqa: ANN001
        for name, value in sb.env.items():
            print(f"{name}={value}")
        sys.stdout.flush()
        print(f"[svckit sandbox] serving {sb.url} (data in {sb.data_dir}); Ctrl-C stops", file=sys.stderr)

    sandbox.serve_forever(on_ready=ready)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svckit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sandbox", help="serve all four interfaces on loopback and print the SVC_* variables")
    add_sandbox_options(p)
    p.set_defaults(func=cmd_sandbox)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
