"""Kill: SIGKILL the sandbox under write load, restart it on the same data directory, count survivors.

    python bench/kill_bench.py [--rounds 3] [--seconds 4] [--writers 8]

Each round:
1. start ``svckit sandbox --port 0 --data-dir D --backend redis --seed demo --areas kv,account,queue``
   (real redis-server child, ``appendonly yes``, ``appendfsync everysec``: see svckit/sandbox/kv/backends.py);
2. drive writes from ``--writers`` async clients: ``INCR`` of a per-writer counter and ``SET`` of unique
   keys to unique values, recording every acknowledged one; meanwhile trigger workflow runs and
   rotate the queue token once (SQLite writes in flight at the kill);
3. SIGKILL the sandbox process (mode ``sandbox``), or the sandbox and its redis-server child at the
   same instant (mode ``both``, the harder case: nothing gets a chance to flush);
4. check whether the redis-server child died with its parent (the KV area asks Linux for
   PR_SET_PDEATHSIG); kill any leftover explicitly so it cannot hold the data directory;
5. ``PRAGMA integrity_check`` of state.sqlite3, then restart on D and compare: every acknowledged SET
   has its value, every counter is at least its acknowledged INCRs (and at most the INCRs sent), every
   acknowledged workflow trigger has its run, every run that had finished before the kill is
   unchanged, the DLQ kept its entries, the rotated token is the one that works.

Prints a table; exits 1 if any acknowledged write was lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from svckit.kv import AsyncKV

ORDER_URL = "https://shop.example.com/api/workflows/order"


# -- the sandbox process ----------------------------------------------------------------------------
def start_sandbox(data_dir: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "svckit.cli", "sandbox", "--port", "0", "--data-dir", str(data_dir),
           "--backend", "redis", "--seed", "demo", "--areas", "kv,account,queue"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                            start_new_session=True)
    values: dict[str, str] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        name, _, value = line.strip().partition("=")
        values[name] = value
        if name == "SVC_QUEUE_TOKEN":
            break
    else:
        raise RuntimeError("the sandbox exited before printing its SVC_* variables")
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe drained
    return proc, values


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of the live processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append((int(entry.name), name))
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def redis_pid_of(data_dir: Path) -> int | None:
    """The redis-server whose working directory is this data directory (found by its cwd, so it is
    found even after its parent died and it was re-parented)."""
    target = (data_dir / "redis").resolve()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == "redis-server" and Path(os.readlink(entry / "cwd")) == target:
                return int(entry.name)
        except OSError:
            continue
    return None


# -- load -------------------------------------------------------------------------------------------
@dataclass
class Acked:
    sets: dict[str, str] = field(default_factory=dict)
    incr_acked: dict[str, int] = field(default_factory=dict)
    incr_sent: dict[str, int] = field(default_factory=dict)
    runs: list[tuple[str, int]] = field(default_factory=list)
    rotated_token: str | None = None
    errors: int = 0


async def writer(kv: AsyncKV[str], name: str, stop: asyncio.Event, acked: Acked) -> None:
    counter = f"kill:{name}:counter"  # name carries the round, so counters start at 0 each round
    acked.incr_acked[counter] = acked.incr_sent[counter] = 0
    seq = 0
    while not stop.is_set():
        seq += 1
        try:
            if seq % 2:
                acked.incr_sent[counter] += 1
                count = await kv.incr(counter)
                acked.incr_acked[counter] = max(acked.incr_acked[counter], count)
            else:
                key, text = f"kill:{name}:{seq}", f"{name}:{seq}:{time.time_ns()}"
                await kv.set(key, text)
                acked.sets[key] = text
        except Exception:  # noqa: BLE001 - the kill cuts requests off: those are unacknowledged
            acked.errors += 1
            if stop.is_set():
                return
            await asyncio.sleep(0.01)


def queue_activity(env: dict[str, str], stop: threading.Event, acked: Acked) -> None:
    """Trigger order workflows (SQLite writes) and rotate the queue token once, while the KV load runs."""
    devapi = httpx.BasicAuth(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])
    token = env["SVC_QUEUE_TOKEN"]
    with httpx.Client(timeout=10) as http:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                if n == 5:
                    record = http.post(env["SVC_DEVAPI_URL"] + "/queue/user/rotatetoken", auth=devapi).json()
                    token = acked.rotated_token = record["token"]
                    continue
                r = http.post(f"{env['SVC_QUEUE_URL']}/v2/trigger/{ORDER_URL}", headers={"Authorization": f"Bearer {token}"},
                              json={"id": n, "email": "load@example.com", "items": [{"sku": "X", "qty": 1, "price": 1.0}]})
                if r.status_code == 200:
                    handle = r.json()
                    acked.runs.append((handle["workflowRunId"], handle["workflowCreatedAt"]))
            except httpx.HTTPError:
                if stop.is_set():
                    return
            time.sleep(0.05)


def sqlite_state(data_dir: Path) -> dict[str, Any]:
    db = sqlite3.connect(f"file:{data_dir / 'state.sqlite3'}?mode=ro", uri=True)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        runs = {(r[0], r[1]): (r[2], r[3]) for r in db.execute(
            "SELECT r.run_id, r.created_at, r.state, COUNT(s.seq) FROM runs r LEFT JOIN steps s ON s.run_seq = r.seq "
            "GROUP BY r.seq")}
        dlq = {r[0] for r in db.execute("SELECT dlq_id FROM dlq")}
        account = json.loads(db.execute("SELECT record FROM queue_account").fetchone()[0])
    finally:
        db.close()
    return {"integrity": integrity, "runs": runs, "dlq": dlq, "account": account}


# -- one round --------------------------------------------------------------------------------------
@dataclass
class Round:
    mode: str
    acked_sets: int = 0
    lost_sets: int = 0
    acked_incrs: int = 0
    lost_incrs: int = 0
    over_incrs: int = 0
    acked_runs: int = 0
    lost_runs: int = 0
    finished_runs: int = 0
    changed_runs: int = 0
    dlq_before: int = 0
    dlq_lost: int = 0
    integrity: str = ""
    rotated_token_ok: bool = False
    redis_died_with_parent: bool = False
    leftovers_killed: int = 0
    errors_at_kill: int = 0


def run_round(data_dir: Path, mode: str, writers: int, seconds: float) -> Round:
    result = Round(mode)
    proc, env = start_sandbox(data_dir)
    redis_pid = redis_pid_of(data_dir)
    before = sqlite_state(data_dir)
    acked = Acked()
    stop_queue = threading.Event()
    queue_thread = threading.Thread(target=queue_activity, args=(env, stop_queue, acked), daemon=True)

    async def drive() -> None:
        clients = [AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"], timeout=5) for _ in range(writers)]
        stop = asyncio.Event()
        tag = data_dir.name + str(time.time_ns())
        tasks = [asyncio.create_task(writer(kv, f"{tag}:w{i}", stop, acked)) for i, kv in enumerate(clients)]
        queue_thread.start()
        await asyncio.sleep(seconds)
        # the kill, with requests in flight
        if mode == "both" and redis_pid is not None:
            os.kill(redis_pid, signal.SIGKILL)
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        stop.set()
        stop_queue.set()
        await asyncio.gather(*tasks)
        for kv in clients:
            await kv.aclose()

    asyncio.run(drive())
    queue_thread.join(timeout=15)
    proc.wait(timeout=10)
    result.errors_at_kill = acked.errors
    # did the redis-server child die with its parent?
    deadline = time.monotonic() + 5
    while redis_pid is not None and alive(redis_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    result.redis_died_with_parent = redis_pid is not None and not alive(redis_pid)
    leftover = redis_pid_of(data_dir)
    while leftover is not None:
        os.kill(leftover, signal.SIGKILL)
        result.leftovers_killed += 1
        time.sleep(0.2)
        leftover = redis_pid_of(data_dir)

    after_kill = sqlite_state(data_dir)
    result.integrity = after_kill["integrity"]

    proc, env2 = start_sandbox(data_dir)
    try:
        after = sqlite_state(data_dir)
        result.integrity += f" / {after['integrity']}"
        with httpx.Client(timeout=30) as http:
            auth = {"Authorization": f"Bearer {env2['SVC_KV_TOKEN']}"}
            keys = list(acked.sets)
            values: list[Any] = []
            for i in range(0, len(keys), 500):
                rows = [["GET", k] for k in keys[i : i + 500]]
                values += [e.get("result") for e in http.post(env2["SVC_KV_URL"] + "/pipeline", headers=auth, json=rows).json()]
            result.acked_sets = len(keys)
            result.lost_sets = sum(v != acked.sets[k] for k, v in zip(keys, values))
            for counter, n in acked.incr_acked.items():
                value = int(http.get(f"{env2['SVC_KV_URL']}/GET/{counter}", headers=auth).json()["result"] or 0)
                result.acked_incrs += n
                result.lost_incrs += max(0, n - value)
                result.over_incrs += value > acked.incr_sent[counter]
            # SQLite: acknowledged runs exist; runs finished before the kill are unchanged; DLQ kept
            result.acked_runs = len(acked.runs)
            result.lost_runs = sum(run not in after["runs"] for run in acked.runs)
            finished = {k: v for k, v in after_kill["runs"].items() if v[0] != "RUN_STARTED"}
            result.finished_runs = len(finished)
            result.changed_runs = sum(after["runs"].get(k) != v for k, v in finished.items())
            result.dlq_before = len(before["dlq"])
            result.dlq_lost = len(before["dlq"] - after["dlq"])
            expected_token = acked.rotated_token or before["account"]["token"]
            logs = http.get(env2["SVC_QUEUE_URL"] + "/v2/workflows/logs", headers={"Authorization": f"Bearer {expected_token}"})
            result.rotated_token_ok = (logs.status_code == 200 and env2["SVC_QUEUE_TOKEN"] == expected_token
                                       and after["account"]["token"] == expected_token)
    finally:
        redis_pid = redis_pid_of(data_dir)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        if redis_pid is not None and alive(redis_pid):
            time.sleep(1)
            if alive(redis_pid):
                os.kill(redis_pid, signal.SIGKILL)
    return result


def appendfsync_policy() -> str:
    from svckit.sandbox.kv.backends import APPENDFSYNC

    return APPENDFSYNC


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per mode (default 3)")
    parser.add_argument("--seconds", type=float, default=4.0, help="write load before the kill (default 4)")
    parser.add_argument("--writers", type=int, default=8, help="concurrent async writers (default 8)")
    parser.add_argument("--modes", nargs="+", default=["sandbox", "both"], choices=["sandbox", "both"])
    args = parser.parse_args()
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="svckit-kill-") as tmp:
        data_dir = Path(tmp) / "data"  # one data directory for every round: state accumulates
        for mode in args.modes:
            for _ in range(args.rounds):
                rounds.append(run_round(data_dir, mode, args.writers, args.seconds))
                r = rounds[-1]
                print(f"  round {len(rounds)} ({mode}): {r.acked_sets} SETs, {r.acked_incrs} INCRs acknowledged, "
                      f"{r.lost_sets + r.lost_incrs} lost", flush=True)
    print(f"\n# kill bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; "
          f"redis appendonly yes, appendfsync {appendfsync_policy()}; {args.writers} writers, "
          f"SIGKILL after {args.seconds:.0f} s of load\n")
    print("| round | killed | acked SET | lost | acked INCR | lost | INCR > sent | acked runs | lost "
          "| finished runs changed | DLQ lost | sqlite integrity (after kill / after restart) | rotated token kept "
          "| redis child died with parent | leftovers killed | requests cut by the kill |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rounds, 1):
        killed = "sandbox" if r.mode == "sandbox" else "sandbox + redis"
        died = "n/a (killed too)" if r.mode == "both" else ("yes" if r.redis_died_with_parent else "NO")
        print(f"| {i} | {killed} | {r.acked_sets:,} | {r.lost_sets} | {r.acked_incrs:,} | {r.lost_incrs} | "
              f"{r.over_incrs} | {r.acked_runs} | {r.lost_runs} | {r.changed_runs} of {r.finished_runs} | "
              f"{r.dlq_lost} of {r.dlq_before} | {r.integrity} | {'yes' if r.rotated_token_ok else 'NO'} | {died} | "
              f"{r.leftovers_killed} | {r.errors_at_kill} |")
    lost = sum(r.lost_sets + r.lost_incrs + r.over_incrs + r.lost_runs + r.changed_runs + r.dlq_lost for r in rounds)
    bad = [r for r in rounds if r.integrity != "ok / ok" or not r.rotated_token_ok
           or (r.mode == "sandbox" and not r.redis_died_with_parent)]
    print(f"\nresult: {'OK' if not lost and not bad else f'FAILED ({lost} lost, {len(bad)} rounds with other failures)'}")
    raise SystemExit(1 if lost or bad else 0)


if __name__ == "__main__":
    main()
