"""``process_gone``, which the kill tests wait on before they look at what the sandbox answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import eventually, process_gone

# the main thread ends on its own (pthread_exit) while another thread of the process still runs
MAIN_THREAD_ENDS_FIRST = ("import ctypes, threading, time\n"
                          "threading.Thread(target=time.sleep, args=(60,)).start()\n"
                          "ctypes.CDLL(None).pthread_exit(None)\n")


def test_a_process_whose_main_thread_is_a_zombie_while_another_thread_runs_has_not_exited():
    child = subprocess.Popen([sys.executable, "-c", MAIN_THREAD_ENDS_FIRST])
    try:
        eventually(lambda: "State:\tZ" in Path(f"/proc/{child.pid}/status").read_text(),
                   "the child's main thread ended", 10)
        assert child.poll() is None  # its parent cannot reap it yet: a thread of it still runs
        assert not process_gone(child.pid)
        child.kill()
        eventually(lambda: process_gone(child.pid), "the killed child exited", 10)
        assert child.wait(timeout=10) == -9
    finally:
        child.kill()
        child.wait()
