"""Fixtures of the notebook experience tests: a real sandbox on loopback (key-value + account areas
for the widget tests; every area for notebook execution and the browser), and its clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from svckit.sandbox import Sandbox

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "test-output"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    """Key-value and account areas with the demo data (module scope: each test module gets a fresh one)."""
    with Sandbox(tmp_path_factory.mktemp("sandbox"), areas=["kv", "account"], seed="demo") as sb:
        yield sb


@pytest.fixture(scope="module")
def clients(sandbox: Sandbox):
    with sandbox.connect() as c:
        yield c


@pytest.fixture
def kv(clients):
    return clients.kv


@pytest.fixture
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT
