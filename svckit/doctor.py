"""``svckit doctor``: is everything svckit needs installed? Answers in seconds, naming the package.

Three checks, each of which has caught a real broken install:

1. every requirement that svckit's own metadata declares (for the extras asked for) is installed at a
   version its specifier allows;
2. every module of the package imports;
3. every widget builds once, offline (no request is made). This is the check that finds a package
   nobody declared: it found plotly >= 6 building ``go.FigureWidget`` on ``anywidget`` without
   depending on it, an install that imported fine and failed the first time a chart was drawn.

``svckit doctor --sandbox URL`` also reads a running sandbox's ``GET /health`` (svckit/sandbox/health.py):
each area's checks (Redis answers and takes writes, the vector index is ready, SQLite takes writes),
printed one per line, a failed one with what it found.

The test suite runs the same checks before any test (tests/conftest.py), so a missing dependency
stops CI at once with its name instead of failing dozens of tests minutes later.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata

DISTRIBUTION = "svckit"
#: the extras a full install has (``pip install svckit[all]``), and the ones ``all`` stands for
ALL_EXTRAS = ("sandbox", "local", "notebook")
#: the extras of the checkout that runs the tests (``pip install -e ".[all,dev]"``)
TEST_EXTRAS = (*ALL_EXTRAS, "dev")
#: modules that need an extra, by name prefix; everything else needs only the core dependencies
MODULE_EXTRAS = {"svckit.sandbox": "sandbox", "svckit.localindex": "local", "svckit.core.glob": "local",
                 "svckit.core.filter": "local", "svckit.export": "notebook"}


def known_extras() -> list[str]:
    """The extras svckit's installed metadata declares (``Provides-Extra``), sorted."""
    return sorted(set(metadata.metadata(DISTRIBUTION).get_all("Provides-Extra") or []))


def resolve_extras(names: Iterable[str]) -> list[str]:
    """``names`` with ``all`` written out as :data:`ALL_EXTRAS`, each once; ValueError naming the
    known extras when one is not an extra of svckit (a typo must not pass as "nothing missing")."""
    known = known_extras()
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"unknown extra{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"svckit's extras are: {', '.join(known)}")
    out: list[str] = []
    for name in names:
        for extra in ALL_EXTRAS if name == "all" else (name,):
            if extra not in out:
                out.append(extra)
    return out


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the install: what failed, the package to install, and the error."""

    what: str
    package: str | None
    detail: str

    def __str__(self) -> str:
        fix = f" -> install {self.package!r}" if self.package else ""
        return f"{self.what}: {self.detail}{fix}"


def _requirements(extras: Iterable[str]) -> list[tuple[str, str, str | None]]:
    """(distribution, specifier, extra) for the core requirements and those of ``extras``."""
    wanted = set(extras)
    out = []
    for line in metadata.requires(DISTRIBUTION) or []:
        spec, _, marker = line.partition(";")
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        name = extra.group(1) if extra else None
        if name is not None and name not in wanted:
            continue
        if name is None and marker.strip() and not _marker_applies(marker):
            continue
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)", spec)
        if match and match.group(1).lower() != DISTRIBUTION:  # svckit[...] inside "all"
            out.append((match.group(1), match.group(3).strip(), name))
    return out


def _marker_applies(marker: str) -> bool:
    try:
        from packaging.markers import Marker
    except ImportError:  # pragma: no cover - packaging comes with pip's toolchain and plotly
        return True
    return Marker(marker.strip()).evaluate()


def _version_ok(version: str, specifier: str) -> bool:
    if not specifier:
        return True
    try:
        from packaging.specifiers import SpecifierSet
    except ImportError:  # pragma: no cover
        return True
    return SpecifierSet(specifier).contains(version, prereleases=True)


def check_requirements(extras: Iterable[str] = ALL_EXTRAS) -> list[Problem]:
    problems = []
    for dist, specifier, extra in _requirements(extras):
        where = f"svckit[{extra}]" if extra else "svckit"
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            problems.append(Problem(f"{where} requires {dist}{specifier}", dist, "not installed"))
            continue
        if not _version_ok(version, specifier):
            problems.append(Problem(f"{where} requires {dist}{specifier}", f"{dist}{specifier}",
                                    f"version {version} is installed"))
    return problems


def _missing_package(exc: BaseException) -> str | None:
    """The package an import error asks for: the module's top-level name, or the name in a
    library's own "please install X" message."""
    name = getattr(exc, "name", None)
    if name:
        return name.split(".")[0]
    said = re.search(r"install (?:the )?[`'\"]?([A-Za-z0-9_.\-]+)", str(exc))
    return said.group(1) if said else None


def _first_error_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def check_imports(extras: Iterable[str] = ALL_EXTRAS) -> list[Problem]:
    import svckit

    wanted = set(extras)
    problems = []
    for info in pkgutil.walk_packages(svckit.__path__, prefix="svckit."):
        extra = next((e for prefix, e in MODULE_EXTRAS.items() if info.name == prefix or info.name.startswith(prefix + ".")), None)
        if extra is not None and extra not in wanted:
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, not raised
            problems.append(Problem(f"import {info.name}", _missing_package(exc), _first_error_line(exc)))
    return problems


def _widget_builders() -> dict[str, Callable[[], object]]:
    """Each public widget, built against clients that make no request (nothing is loaded)."""
    from svckit import widgets
    from svckit.kv import KV

    offline_kv = KV("http://127.0.0.1:9/kv", "doctor-offline-token")
    return {
        "KVExplorer": lambda: widgets.KVExplorer(offline_kv, autorefresh=False),
        "AccountDashboard": lambda: widgets.AccountDashboard(None, autorefresh=False),
        "VectorPlayground": lambda: widgets.VectorPlayground({}, autorun=False),
        "WorkflowTimeline": lambda: widgets.WorkflowTimeline(None, autoload=False),
        "KeyspaceReport": lambda: widgets.KeyspaceReport(offline_kv),
        "MonitorProfiler": lambda: widgets.MonitorProfiler(offline_kv),
        "Deliveries": lambda: widgets.Deliveries(None, autorefresh=False),
    }


def check_widgets() -> list[Problem]:
    from svckit import widgets

    problems = []
    builders = _widget_builders()
    for name in widgets.__all__:
        build = builders.get(name)
        if build is None:
            problems.append(Problem(f"build {name}", None, "svckit.doctor does not know how to build it"))
            continue
        try:
            build()
        except Exception as exc:  # noqa: BLE001
            last = traceback.extract_tb(exc.__traceback__)[-1]
            detail = f"{_first_error_line(exc)} (at {last.filename}:{last.lineno})"
            problems.append(Problem(f"build {name}", _missing_package(exc), detail))
    return problems


def check(extras: Sequence[str] = ALL_EXTRAS) -> list[Problem]:
    """Every problem of this install for ``extras`` (empty: all is well)."""
    problems = check_requirements(extras) + check_imports(extras)
    if not any(p.what.startswith("import svckit.widgets") for p in problems):
        problems += check_widgets()
    return problems


def report(problems: Sequence[Problem]) -> str:
    if not problems:
        return "svckit doctor: everything svckit needs is installed."
    packages = sorted({p.package for p in problems if p.package})
    lines = [f"svckit doctor: {len(problems)} problem(s) with this install"
             + (f"; missing or wrong: {', '.join(packages)}" if packages else "")]
    lines += [f"  - {p}" for p in problems]
    return "\n".join(lines)


def check_sandbox(url: str) -> tuple[str, bool]:
    """A running sandbox's health (``GET <url>/health``), as lines for a person, and whether every
    check passed. https is verified as the clients verify it (SVC_CA_FILE names the sandbox's CA)."""
    import httpx

    from svckit.config import Settings

    health = url.rstrip("/") + "/health"
    try:
        response = httpx.get(health, timeout=10, **Settings.from_env().client_options({}))
        body = response.json()
        areas = body["areas"]
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        return f"svckit doctor: no health report from {health}: {exc}", False
    lines = [f"svckit doctor: the sandbox at {url} is "
             + ("healthy" if body.get("ok") else "NOT healthy: a check below failed")]
    for area, checks in areas.items():
        for item in checks:
            mark = "ok  " if item["ok"] else "FAIL"
            lines.append(f"  {mark} {area:<7} {item['check']:<7} {item['detail']}")
    return "\n".join(lines), bool(body.get("ok"))
