"""Every environment variable svckit reads goes through svckit.config.Settings (config.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import svckit
from svckit.config import Settings
from svckit.demo import can_open_browser

PACKAGE = Path(svckit.__file__).parent
#: (module, function) that may touch os.environ: Settings itself, and building a child process's
#: environment or handing the whole mapping on (neither reads a setting)
ALLOWED = {
    ("config.py", "from_env"),
    ("demo.py", "kernel_env"),  # a kernel's environment: ours minus stale SVC_*
    ("demo.py", "notebook_clients"),  # os.environ handed to Settings.from_env and the status line
}


def environment_reads() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]:
            for node in ast.walk(function):
                if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") \
                        and isinstance(node.value, ast.Name) and node.value.id == "os":
                    where = (str(path.relative_to(PACKAGE)), function.name)
                    if where not in ALLOWED:
                        found.append(f"{where[0]}:{node.lineno} in {where[1]}")
    return sorted(set(found))


def test_no_module_reads_the_environment_but_settings():
    assert environment_reads() == []


def test_the_local_variables_are_settings_and_the_redis_url_is_masked():
    settings = Settings.from_env({"SVC_REDIS_URL": "redis://app:hunter2@127.0.0.1:6379", "XDG_DATA_HOME": "/x",
                                  "DISPLAY": ":0"})
    assert (settings.redis_url, settings.xdg_data_home, settings.display) == (
        "redis://app:hunter2@127.0.0.1:6379", "/x", ":0")
    assert "hunter2" not in repr(settings)
    assert not settings.names_a_service and Settings.from_env({"QSTASH_TOKEN": "t"}).names_a_service


def test_a_display_lets_the_demo_open_a_browser(monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not can_open_browser()
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert can_open_browser()
