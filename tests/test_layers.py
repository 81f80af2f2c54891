"""The layers of docs/architecture.md, held by the import-linter contracts in pyproject.toml
([tool.importlinter]), and what importing a package loads.

- clients and widgets never import the sandbox or the local index (one seam: ``svckit.vector.LocalVector``);
- the sandbox and the local index never import a client, the transport or a widget;
- ``svckit.core`` is below both and does no I/O;
- area packages import lazily (PEP 562): ``import svckit.queue.models`` loads no HTTP stack, and the
  sandbox loads no aiohttp;
- importing svckit's packages puts no ``None`` into ``sys.modules``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the svckit package under ``root`` with ``root``'s pyproject.toml."""
    if not LINT.exists():
        pytest.skip("import-linter is not installed: pip install -e '.[dev]'")
    return subprocess.run([str(LINT), "--no-cache", "--no-logo"], cwd=root, capture_output=True, text=True,
                          check=False, env={"PATH": str(LINT.parent), "PYTHONPATH": str(root)}, timeout=120)


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=120)


def test_the_layer_contracts_hold():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "stray", "broken"),
    [
        ("svckit/vector/explain.py", "from svckit.localindex import LocalIndex", "Clients and widgets"),
        ("svckit/widgets/_common.py", "from svckit.sandbox import Sandbox", "Clients and widgets"),
        ("svckit/sandbox/health.py", "from svckit.kv.client import KV", "The service side"),
        ("svckit/core/fusion.py", "import httpx", "The core"),
    ],
)
def test_a_stray_import_breaks_the_contract(tmp_path, module, stray, broken):
    """The same contracts over a copy of svckit with one import across a boundary, inside a function
    (the contracts see those too): lint-imports fails and names the contract and the import."""
    skip = shutil.ignore_patterns("__pycache__", "*.ipynb")
    shutil.copytree(ROOT / "svckit", tmp_path / "svckit", ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / module
    path.write_text(path.read_text() + f"\n\ndef _stray():\n    {stray}\n")
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{broken}" in result.stdout and "BROKEN" in result.stdout
    assert module.removesuffix(".py").replace("/", ".") in result.stdout


def test_importing_models_loads_no_http_stack():
    code = (
        "import sys\n"
        # the models and what the sandbox imports from the client packages
        "import svckit.queue.models, svckit.vector.models, svckit.account.models, svckit.account.plans\n"
        "import svckit.kv.redact, svckit.core.wire\n"
        "loaded = sorted(m for m in ('httpx', 'aiohttp', 'urllib3', 'svckit._http', 'svckit._pools',\n"
        "    'svckit.queue.client', 'svckit.vector.client') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr


def test_the_lazy_packages_keep_their_public_names():
    code = (
        "import svckit.kv, svckit.vector, svckit.queue, svckit.account\n"
        "from pathlib import Path\n"
        "from svckit._lazy import exports_of\n"
        "for package in (svckit.kv, svckit.vector, svckit.queue, svckit.account):\n"
        "    assert set(package.__all__) == set(exports_of(Path(package.__file__).read_text())), package\n"
        "    for name in package.__all__:\n"
        "        assert getattr(package, name) is not None, (package.__name__, name)\n"
        "    assert set(package.__all__) <= set(dir(package))\n"
        "from svckit.queue import Queue\n"
        "from svckit.queue.client import Queue as Same\n"
        "assert Queue is Same\n"
        "try:\n"
        "    svckit.kv.Nope\n"
        "except AttributeError as exc:\n"
        "    assert \"module 'svckit.kv' has no attribute 'Nope'\" in str(exc)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr


def test_the_sandbox_loads_no_aiohttp():
    pytest.importorskip("starlette")
    code = (
        "import sys\n"
        "import svckit.sandbox, svckit.sandbox.workflow.runner\n"
        "assert 'aiohttp' not in sys.modules\n"
        "assert not [m for m in sys.modules if m.endswith('.client') and m.startswith('svckit.')]\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr


def test_no_package_puts_none_into_sys_modules():
    code = (
        "import importlib, sys\n"
        "before = {name for name, module in sys.modules.items() if module is None}\n"
        "for name in ('svckit', 'svckit.kv', 'svckit.vector', 'svckit.account', 'svckit.queue',\n"
        "             'svckit.core', 'svckit.frames', 'svckit.widgets', 'svckit.sandbox', 'svckit.localindex'):\n"
        "    package = importlib.import_module(name)\n"
        "    for public in getattr(package, '__all__', ()):\n"
        "        getattr(package, public)\n"
        "import svckit._http, svckit._pools\n"
        "added = {name for name, module in sys.modules.items() if module is None} - before\n"
        "assert not added, sorted(added)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
