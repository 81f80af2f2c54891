"""``frame_of``, which tests use to see that a reader thread is blocked on its read: it must not hang
the process when a garbage collection with finalizers falls inside it (python/cpython#106883 on 3.11)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: garbage whose finalizers let go of the GIL (as a socket's close does), collections as often as
#: possible, threads starting and ending beside it: on CPython 3.11 a bare sys._current_frames() in
#: this loop hangs within a second or two
PRESSURE = """
import gc, threading, time
from tests.conftest import frame_of

class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        time.sleep(0)

stop = False
def churn():
    while not stop:
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
for _ in range(2):
    threading.Thread(target=churn, daemon=True).start()
gc.set_threshold(1)
main = threading.main_thread()
deadline = time.monotonic() + 3
while time.monotonic() < deadline:
    for _ in range(50):
        Cycle()
    assert frame_of(main) is not None
stop = True
print("done")
"""


def test_frame_of_survives_collections_with_finalizers_beside_starting_threads():
    child = subprocess.run([sys.executable, "-c", PRESSURE], cwd=REPO, capture_output=True, text=True, timeout=60,
                           check=False)
    assert child.returncode == 0 and child.stdout.strip() == "done", child.stderr[-2000:]
