"""The queue area's own tests (workflow runner, restarts, demo runs) use the queue clients' fixtures."""

from tests.queue.conftest import queue, raw_queue, runner  # noqa: F401
