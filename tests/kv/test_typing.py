"""Static types: one helper definition gives precise sync and async return types (checked by mypy).

Peer complaint: async return types typed as unions (with an awaitable). Here ``await akv.get(k)``
must be exactly ``str | None`` and ``kv.get(k)`` the same, ``decode=False`` clients get bytes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SNIPPET = textwrap.dedent(
    """
    from svckit.kv import KV, AsyncKV

    async def main() -> None:
        kv = KV("http://127.0.0.1:1", "t")
        reveal_type(kv.get("k"))
        reveal_type(kv.hgetall("h"))
        reveal_type(kv.scan(0))
        reveal_type(kv.pipeline().set("a", "1").incr("n"))
        kb = KV("http://127.0.0.1:1", "t", decode=False)
        reveal_type(kb.get("k"))
        akv = AsyncKV("http://127.0.0.1:1", "t")
        reveal_type(await akv.get("k"))
        reveal_type(await akv.incr("n"))
        reveal_type(await akv.smembers("s"))
        reveal_type(akv.multi_exec().get("k"))
        akb = AsyncKV.from_env(decode=False)
        reveal_type(await akb.get("k"))
        reveal_type(await akv.pipeline().exec())
        kv.incrby("n", "not a number")
    """
)

EXPECTED = [
    'Revealed type is "str | None"',
    'Revealed type is "dict[str, str]"',
    'Revealed type is "tuple[int, list[str]]"',
    'Revealed type is "svckit.kv.client.Pipeline"',
    'Revealed type is "bytes | None"',
    'Revealed type is "str | None"',
    'Revealed type is "int"',
    'Revealed type is "set[str]"',
    'Revealed type is "svckit.kv.client.AsyncTransaction"',
    'Revealed type is "bytes | None"',
    'Revealed type is "list[Any]"',
]


def test_mypy_sees_precise_sync_and_async_types(tmp_path: Path) -> None:
    source = tmp_path / "use_kv.py"
    source.write_text(SNIPPET)
    package = Path(__file__).resolve().parents[2] / "svckit" / "kv"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
         "--cache-dir", str(tmp_path / ".mypy_cache"), str(source), str(package)],
        capture_output=True, text=True, check=False, cwd=package.parents[1],
    )
    revealed = [line.split("note: ", 1)[1] for line in result.stdout.splitlines() if "Revealed type" in line]
    assert revealed == EXPECTED, result.stdout
    assert "Awaitable" not in result.stdout and "Coroutine" not in "\n".join(revealed)
    # The helper's parameter types are checked too.
    assert 'Argument 2 has incompatible type "str"; expected "int"' in result.stdout
    # svckit/kv itself type-checks (one mypy run for both: each run costs ~20 s).
    own_errors = [line for line in result.stdout.splitlines() if "svckit/kv/" in line and "error" in line]
    assert own_errors == [] and result.stdout.count("error:") == 1, result.stdout
