"""The documentation: the site builds, the README stays a front page, the repository stands alone.

1. ``mkdocs build --strict`` (material theme, ``mkdocs.yml`` at the root) passes: no broken link or
   anchor, no page outside the nav, no link to a file outside ``docs/``.
2. README.md is at most 200 lines and still starts with the two commands, demo then tests; the test
   command is the very line ``.ci/run`` runs.
3. No file of the repository names a path outside it (the design lives in docs/architecture.md).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"

DEMO_COMMAND = 'pip install torch==2.13.0 && pip install -e ".[all]" && svckit demo'
TEST_COMMAND = ('pip install torch==2.13.0 && pip install -e ".[all,dev]" && npm ci --prefix tests/compat/js '
                "&& python -m pytest")
TORCH_CPU_COMMAND = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
APT_COMMAND = ("sudo apt-get install redis-server chromium fonts-dejavu-core nodejs "
               "&& { command -v npm >/dev/null || sudo apt-get install npm; }")
README_MAX_LINES = 200
#: the commands must come first: within this many lines of the top of the README
README_COMMANDS_WITHIN = 40

#: paths outside the repository that no file may name (spelled in two parts so this file passes)
OUTSIDE_PATHS = ("../" + "shared", "DESIGN" + ".md")


def test_mkdocs_build_strict_passes(tmp_path: Path) -> None:
    # mkdocs is a dev dependency: a missing one fails here rather than skipping the check.
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"{exc.name} is not installed: the docs need mkdocs and mkdocs-material "
                    f'(pip install -e ".[dev]")')
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # material's end-of-life banner, not a build message
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, (
        f"mkdocs build --strict failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    assert (site / "index.html").is_file()
    assert (site / "architecture" / "index.html").is_file()


def _bash_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command) for every line of every ```bash block, in order."""
    out, in_bash = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_bash = not in_bash and line.strip() == "```bash"
        elif in_bash and line.strip():
            out.append((number, line.strip()))
    return out


def test_readme_is_a_front_page_that_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; at most {README_MAX_LINES}"

    commands = _bash_commands(text)
    # before them, only what a fresh machine needs first: the venv, PyTorch's CPU build for Linux
    # without a GPU (from PyTorch's own index: PyPI's Linux wheel is the CUDA build), system packages
    assert TORCH_CPU_COMMAND in [c for _, c in commands]
    installs = [(n, c) for n, c in commands if c.startswith("pip install") and c != TORCH_CPU_COMMAND]
    assert [c for _, c in installs[:2]] == [DEMO_COMMAND, TEST_COMMAND], (
        f"README.md's first two install commands must be the demo, then the test command:\n"
        f"{installs[:2]}")
    assert installs[1][0] <= README_COMMANDS_WITHIN, (
        f"the test command is on line {installs[1][0]}; keep both commands in the first "
        f"{README_COMMANDS_WITHIN} lines")

    # The system packages are installed by the line just before the test command, and .ci/run
    # installs the same. That line works with NodeSource's nodejs (which brings npm and conflicts
    # with Debian's npm package) and with Debian's (npm a package of its own): npm only where missing.
    ci = CI_RUN.read_text(encoding="utf-8")
    apt = [(n, c) for n, c in commands if "apt-get install" in c]
    assert [c for _, c in apt] == [APT_COMMAND] and apt[0][0] < installs[1][0], apt
    for package in ("redis-server", "chromium", "fonts-dejavu-core", "nodejs"):
        assert package in ci
    assert "command -v npm" in ci

    # .ci/run runs exactly the README's test command.
    ci_commands = [line.strip() for line in ci.splitlines() if line.strip().startswith("pip install")]
    assert ci_commands == [TEST_COMMAND], f".ci/run runs {ci_commands}, the README says {TEST_COMMAND!r}"

    assert "`***`" in text and "last four characters" in text, "README.md lost the note on secrets"


def _repository_files() -> list[Path]:
    """Tracked files, plus new ones not yet committed (git's ignore rules apply to those)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          cwd=ROOT, capture_output=True, check=True)
    names = sorted({n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n})
    return [ROOT / n for n in names]


def test_no_file_names_a_path_outside_the_repository() -> None:
    pattern = re.compile("|".join(re.escape(p) for p in OUTSIDE_PATHS))
    found = []
    for path in _repository_files():
        if path.is_symlink() or not path.is_file():  # a deleted file, or the notebooks/ link
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary
            continue
        text = data.decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, (
        "these lines name a path outside the repository (the design is docs/architecture.md):\n"
        + "\n".join(found))
