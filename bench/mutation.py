"""Mutation testing of svckit's core rules (issue 27): do the tests notice when a rule changes?

Run it from the repository root, in the project's venv with the bench extra (``pip install -e ".[all,dev,bench]"``,
which brings mutmut 3)::

    python bench/mutation.py                     # every target, one worker (minutes per target)
    python bench/mutation.py --target masking    # one target
    python bench/mutation.py --target retry --show   # ... and print the diff of every survivor
    python bench/mutation.py --list              # the targets, their functions and their tests
    python bench/mutation.py --report            # the table of the last runs again, running nothing

What it measures: for each target (a rule of :data:`TARGETS`: its files, the functions in them that
hold the rule, and the fast unit tests that exercise it) mutmut makes every small change it knows to
those functions (an operator, a constant, a condition, a returned value, a dropped argument ...)
and runs the target's tests against each changed copy. A mutant the tests fail on is *killed*; one
they all pass on *survived*: the rule could change that way and nobody would know. The table gives
per target the mutants, killed, survived, the equivalent ones (listed in :data:`EQUIVALENT`, each
with why no behaviour can differ) and the score ``killed / (mutants - equivalent)``, beside the
plain ``killed / mutants``. A mutant whose tests time out counts as killed (the change was
noticed: the tests hang); one no test reaches counts as survived.

How: each target gets a work folder ``bench/.mutation/<target>/`` (gitignored, wiped at the start
of its run) holding a copy of ``svckit/``, ``tests/`` and ``pyproject.toml`` with a ``[tool.mutmut]``
section added, so the repository's own files are never changed; mutmut copies that again into
``mutants/`` there, mutates the target's files and runs pytest in it, with ``mutants/`` first on
``sys.path`` (ahead of the editable install, which Python's path finder only reaches after it).
mutmut skips decorated functions; a target may name module-level functions whose decorator is taken
off in the copy and applied by an assignment after the function instead (``keys_frame =
_readable(keys_frame)``: the same function), so frames' ``@_readable`` builders are mutated too.
Only the named functions' mutants are run (mutmut's name filter); the rest of a file is not.

One worker by default (``--workers N`` for more): the machine runs other work. Not run in CI.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / ".mutation"


@dataclass(frozen=True)
class Target:
    """A rule: ``functions`` maps a file to the functions that hold it ("name" at module level,
    "Class.method"; ``None``: every function of the file); ``tests`` the pytest paths that exercise it;
    ``undecorate`` module-level functions of those files whose decorator is moved after them."""

    what: str
    functions: dict[str, list[str] | None]
    tests: list[str]
    undecorate: dict[str, list[str]] = field(default_factory=dict)


TARGETS: dict[str, Target] = {
    "masking": Target(
        "secret masking: mask(), the redaction that puts its *** into messages, the reprs built on it",
        {"svckit/errors.py": ["mask"], "svckit/_http.py": ["redact", "_TransportBase.redact"],
         "svckit/config.py": ["Settings.__repr__"], "svckit/sandbox/area.py": ["Credentials.__repr__"]},
        ["tests/test_mask_rules.py", "tests/test_http.py", "tests/test_error_tree.py"],
    ),
    "retry": Target(
        "the retry policy: whether to retry, how long to wait, Retry-After",
        {"svckit/_http.py": ["RetryPolicy.__post_init__", "RetryPolicy.delay", "RetryPolicy.may_retry",
                             "retry_after", "certificate_rejected", "_TransportBase._after_attempt",
                             "_TransportBase._stream_retry"]},
        ["tests/test_retry_rules.py", "tests/test_http.py"],
    ),
    "keyspace": Target(
        "the keyspace walk and the one cursor loop: KeyScan and its resume state, walk_keys / scan_keys "
        "(sync and async), Pages and its shells",
        {"svckit/kv/keyspace.py": ["KeyScan.__post_init__", "KeyScan.next_call", "KeyScan.step", "KeyScan.feed",
                                   "KeyScan.walked", "KeyScan.wants_more", "_scan_of", "_Walk.__init__",
                                   "_Walk.goes_on", "_Walk.request", "_Walk.take", "walk_keys", "awalk_keys",
                                   "scan_keys", "ascan_keys"],
         "svckit/_cursor.py": ["Pages.__init__", "Pages.complete", "Pages.goes_on", "Pages.take", "Pages.cut",
                               "follow", "afollow"]},
        ["tests/kv/test_keyscan_rules.py", "tests/kv/test_walk.py", "tests/test_cursor.py"],
    ),
    "frames": Target(
        "frames: the one column-spec builder and its converters, keys_frame's conversions (ttl s -> ms -> "
        "ttl_s, expires, ints), a stream id's parts, how a limit reads",
        {"svckit/frames/_columns.py": ["Column.value", "Column.array", "build", "units", "utc", "category",
                                       "is_error"],
         "svckit/frames/kv.py": ["_ttl_ms", "_ttl_s", "_int", "keys_frame", "_stream_id_parts"],
         "svckit/display.py": ["format_limit"]},
        ["tests/frames/test_frame_rules.py", "tests/frames/test_frames.py", "tests/frames/test_columns.py"],
    ),
    "sandbox-kv": Target(
        "the sandbox's key-value rules: the Read Only token's commands, the refused commands, transactions",
        {"svckit/sandbox/kv/commands.py": ["refusal"],
         "svckit/sandbox/kv/gateway.py": ["Gateway.check", "Gateway.run_transaction", "Gateway.take_quota"]},
        ["tests/sandbox/kv/test_transaction_rules.py"],
    ),
    "sandbox-dlq": Target(
        "the sandbox's DLQ resume / restart rules and their overrides (Service-* headers)",
        {"svckit/sandbox/workflow/runner.py": ["WorkflowRunner.resume", "WorkflowRunner.restart",
                                               "WorkflowRunner.resume_many", "WorkflowRunner.restart_many",
                                               "WorkflowRunner._from_dlq"],
         "svckit/sandbox/queue.py": ["_run_options", "_str_header"],
         "svckit/sandbox/queue_reads.py": ["int_param"]},
        ["tests/sandbox/queue/test_resume_rules.py", "tests/sandbox/queue/test_message_size.py"],
    ),
    "filter": Target(
        "the vector metadata filter: tokenizer, parser, compiled evaluation (the whole module)",
        {"svckit/core/filter.py": None},
        ["tests/core/test_filter_rules.py", "tests/core/test_filter.py",
         "tests/core/test_filter_compiled.py"],
    ),
    "envelope": Target(
        "the key-value envelope decoder: values, RESP2, replies, batches, errors",
        {"svckit/kv/protocol.py": ["decode_value", "decode_resp2_value", "decode_reply", "decode_batch",
                                   "_envelope", "command_error"]},
        ["tests/kv/test_envelope_rules.py", "tests/kv/test_protocol.py"],
    ),
}

#: Mutants no test can kill because no behaviour differs, each with why. Names are mutmut's (module,
#: mangled function, number): they hold for the source at the commit RESULTS.md names.
EQUIVALENT: dict[str, str] = {
    "svckit._http.x_retry_after__mutmut_4":
        'headers.get("RETRY-AFTER") for "retry-after": httpx.Headers are case-insensitive, the same header',
    "svckit.frames.kv.x__ttl_ms__mutmut_25":
        "ttl >= 0 made always true: a negative ttl becomes ttl * 1000 ms, still negative, so NA as before",
    "svckit.frames.kv.x__ttl_ms__mutmut_34":
        "ttl > 0 for ttl >= 0: a ttl of 0 takes the other branch, int(0) = 0 ms, as 0 * 1000",
    "svckit.frames.kv.x__ttl_ms__mutmut_35": "ttl >= 1 for ttl >= 0: the same as mutant 34 (0 s is 0 ms either way)",
    "svckit.display.x_format_limit__mutmut_38":
        "tz=None for tz='UTC': an epoch Timestamp without a zone is UTC's wall time, the same text",
    "svckit.display.x_format_limit__mutmut_41": "tz dropped: as mutant 38",
    "svckit.display.x_format_limit__mutmut_46": "tz='utc' for 'UTC': pandas reads the same zone",
    "svckit.frames._columns.x_utc__mutmut_5":
        "errors='coerce' dropped: every caller passes ints or None (validated model fields, parsed stream ids), "
        "which to_numeric takes without coercing",
    **{f"svckit.frames._columns.x_utc__mutmut_{n}": "the Series without dtype=object: ints stay int64 and ints "
       "with None become float64 either way (to_numeric makes float64 of an object Series with None too)"
       for n in (7, 9)},
    **{f"svckit.frames._columns.x_category__mutmut_{n}": "getattr(v, 'value') made a no-op: the states are str "
       "enums, equal to and hashing as their values, so the categorical holds the same strings" for n in (2, 8, 9)},
    # -- the sandbox's key-value rules
    **{f"svckit.sandbox.kv.commands.x_refusal__mutmut_{n}": "'ERR empty command' is never sent: an empty command "
       "is refused before (the gateway's 'ERR empty command: send ...', budget.command_row's non-empty rows)"
       for n in (2, 3, 4)},
    "svckit.sandbox.kv.commands.x_refusal__mutmut_13": 'decode("UTF-8") for "utf-8": codec names ignore case',
    "svckit.sandbox.kv.gateway.x\u01c1Gateway\u01c1check__mutmut_18": 'decode("UTF-8"): as commands mutant 13',
    **{f"svckit.sandbox.kv.gateway.x\u01c1Gateway\u01c1run_transaction__mutmut_{n}": "the decode of argv[:2] in "
       "'cannot run inside a transaction': those words are always ACL RESTTOKEN, ACL <subcommand> or CONFIG SET "
       "(what runs_aside picks), ASCII, so the codec and error handler never matter" for n in (19, 21, 22, 23)},
    **{f"svckit.sandbox.kv.gateway.x\u01c1Gateway\u01c1run_transaction__mutmut_{n}": "b'multi' / b'exec' sent to "
       "Redis for MULTI / EXEC: Redis reads command names in any case" for n in (40, 43)},
    **{f"svckit.sandbox.kv.gateway.x\u01c1Gateway\u01c1run_transaction__mutmut_{n}": "the EXEC-answered-nil "
       "branch's text: EXEC answers nil only after a failed WATCH, and WATCH is refused by the command table"
       for n in (66, 67, 68, 69)},
    # -- the sandbox's DLQ rules
    # (the runner's equivalents were found for svckit/sandbox/runner.py, gone since the runner serves its
    # workflows over the delivery engine: a new run of this target finds and lists its own)
    "svckit.sandbox.queue_reads.x_int_param__mutmut_12": "value >= INT64_MAX for > when no maximum is given: "
        "the maximum becomes INT64_MAX, which the value is then not over, so INT64_MAX passes either way",
    # -- the envelope decoder
    **{f"svckit.kv.protocol.{name}": 'encode / decode with "UTF-8" for "utf-8": codec names ignore case'
       for name in ("x__envelope__mutmut_25", "x_decode_resp2_value__mutmut_16", "x_decode_resp2_value__mutmut_8",
                    "x_decode_value__mutmut_14", "x_decode_value__mutmut_22", "x_decode_value__mutmut_29")},
    **{f"svckit.kv.protocol.x_decode_batch__mutmut_{n}": "'multi' / 'pipeline' for 'MULTI' / 'PIPELINE': "
       "command_name() upper-cases the name every message and .command shows" for n in (13, 15, 39, 53, 55)},
    **{f"svckit.kv.protocol.x_decode_batch__mutmut_{n}": "the plain fast path turned off: decode_value of a "
       "JSON result with decode=True and no base64 returns it unchanged" for n in (59, 76)},
    **{f"svckit.kv.protocol.x_decode_value__mutmut_{n}": "the 'OK' shortcut changed: 'OK' is not strict base64 "
       "(two characters), so it falls back to itself anyway" for n in (3, 4)},
    "svckit.kv.protocol.x__envelope__mutmut_8": "reply = '' for None after a parse error: both are not an ErrorReply",
}

#: mutmut's exit codes: what counts as killed (a timeout too: the change was noticed)
KILLED = {1, 3, 36, -24, 24, 152, 255}
SURVIVED = {0, 5, 33}


def mangled(function: str) -> str:
    """mutmut's name of a function: ``x_name``, or ``xǁClassǁmethod`` for a method."""
    cls, _, name = function.rpartition(".")
    return f"x\u01c1{cls}\u01c1{name}" if cls else f"x_{name}"


def module_of(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def patterns(target: Target) -> list[str]:
    """mutmut's name filter for the target's functions."""
    out = []
    for path, functions in target.functions.items():
        module = module_of(path)
        if functions is None:
            out.append(f"{module}.*")
        else:
            out += [f"{module}.{mangled(f)}__mutmut_*" for f in functions]
    return out


def undecorate(source: str, names: list[str]) -> str:
    """The module with the decorators of the module-level functions ``names`` taken off and applied
    after each function by assignment (innermost first, as Python applies them): the same objects."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (first decorator line, def line, end line, assignment)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names and node.decorator_list:
            applied = node.name
            for deco in reversed(node.decorator_list):
                applied = f"{ast.get_source_segment(source, deco)}({applied})"
            first = min(d.lineno for d in node.decorator_list)
            edits.append((first, node.lineno, node.end_lineno or node.lineno, f"{node.name} = {applied}\n"))
    missing = set(names) - {e[3].split(" =")[0] for e in edits}
    if missing:
        raise SystemExit(f"undecorate: no decorated module-level function {sorted(missing)}")
    for first, def_line, end, assignment in sorted(edits, reverse=True):
        lines[end:end] = [assignment]
        del lines[first - 1:def_line - 1]
    return "".join(lines)


def prepare(name: str, target: Target) -> Path:
    """A fresh work folder for the target: svckit/, tests/ and pyproject.toml with mutmut's section."""
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc")
    shutil.copytree(ROOT / "svckit", work / "svckit", ignore=skip)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=skip)
    for path, names in target.undecorate.items():
        copy = work / path
        copy.write_text(undecorate(copy.read_text(), names))
    only = [f'"{p}"' for p in target.functions]
    tests = ", ".join(f'"{t}"' for t in target.tests)
    config = (f"\n\n[tool.mutmut]\nsource_paths = [\"svckit\"]\nonly_mutate = [{', '.join(only)}]\n"
              f"pytest_add_cli_args_test_selection = [{tests}]\n"
              # -n 0: mutmut runs pytest in its own process (forking per mutant), not on xdist workers
              f"pytest_add_cli_args = [\"-p\", \"no:cacheprovider\", \"-o\", \"timeout=120\", \"-n\", \"0\"]\n"
              f"use_git_change_detection = false\n")
    (work / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + config)
    return work


def mutmut() -> str:
    found = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or shutil.which("mutmut")
    if found is None:
        raise SystemExit("mutmut is not installed: pip install 'mutmut>=3.8'")
    return found


def results(work: Path, target: Target) -> dict[str, int | None]:
    """Exit code of every mutant of the target's functions, from mutmut's .meta files."""
    wanted = patterns(target)
    codes: dict[str, int | None] = {}
    for path in target.functions:
        meta = work / "mutants" / f"{path}.meta"
        if meta.exists():
            for key, code in json.loads(meta.read_text())["exit_code_by_key"].items():
                if any(fnmatch(key, p) for p in wanted):
                    codes[key] = code
    return codes


@dataclass
class Score:
    name: str
    total: int = 0
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # not run, suspicious, segfault
    seconds: float = 0.0

    @property
    def score(self) -> float:
        counted = self.total - len(self.equivalent)
        return self.killed / counted if counted else 1.0

    def row(self) -> str:
        return (f"| {self.name} | {self.total} | {self.killed} | {len(self.survived)} | {len(self.equivalent)} | "
                f"{self.score:.1%} | {self.killed}/{self.total} = {self.killed / max(self.total, 1):.1%} | "
                f"{self.seconds:.0f} |")


def score(name: str, codes: dict[str, int | None]) -> Score:
    s = Score(name, total=len(codes))
    for key, code in sorted(codes.items()):
        if key in EQUIVALENT:
            s.equivalent.append(key)
        elif code in KILLED:
            s.killed += 1
        elif code in SURVIVED:
            s.survived.append(key)
        else:
            s.other.append(f"{key} (exit {code})")
    return s


def run(name: str, target: Target, workers: int, show: bool, report: bool = False) -> Score:
    print(f"== {name}: {target.what}", flush=True)
    started = time.monotonic()
    work = WORK / name
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("MUTANT_UNDER_TEST", None)
    if not report:
        prepare(name, target)
        done = subprocess.run([mutmut(), "run", "--max-children", str(workers), *patterns(target)], cwd=work,
                              env=env, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        (work / "mutmut.log").write_text(done.stdout)
    codes = results(work, target)
    if not codes:
        print("" if report else done.stdout[-4000:])
        raise SystemExit(f"{name}: no mutant results in {work} (run it first, without --report)")
    s = score(name, codes)
    s.seconds = 0.0 if report else time.monotonic() - started
    for key in s.survived + s.other:
        print(f"   survived: {key}" if key in s.survived else f"   not decided: {key}")
        if show:
            diff = subprocess.run([mutmut(), "show", key.split(" ")[0]], cwd=work, env=env, text=True,
                                  check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
            print("      " + "\n      ".join(diff.strip().splitlines()[1:]))
    for key in s.equivalent:
        print(f"   equivalent: {key}: {EQUIVALENT[key]}")
    print(f"   {s.killed} of {s.total} killed, {len(s.equivalent)} equivalent: score {s.score:.1%} "
          f"({s.seconds:.0f} s)", flush=True)
    return s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", choices=sorted(TARGETS),
                        help="run this target only (repeatable); default: every target")
    parser.add_argument("--workers", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--show", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--list", action="store_true", help="list the targets, their functions and tests")
    parser.add_argument("--report", action="store_true",
                        help="print the table of the last run's results (bench/.mutation/), running nothing")
    args = parser.parse_args(argv)
    if args.list:
        for name, target in TARGETS.items():
            print(f"{name}: {target.what}")
            for path, functions in target.functions.items():
                print(f"    {path}: {', '.join(functions) if functions else '(every function)'}")
            print(f"    tests: {' '.join(target.tests)}")
        return 0
    scores = [run(name, TARGETS[name], args.workers, args.show, args.report) for name in (args.target or TARGETS)]
    print()
    print("| target | mutants | killed | survived | equivalent | score | killed / total | s |")
    print("|---|---|---|---|---|---|---|---|")
    for s in scores:
        print(s.row())
    return 0 if all(s.score >= 0.9 and not s.other for s in scores) else 1


if __name__ == "__main__":
    sys.exit(main())
