"""Shared test helpers. Each area's tests live in their own folder with their own conftest."""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = bool(os.environ.get("CI"))


def require_binary(name: str) -> str:
    """Path of a binary the test needs. Skips locally when it is missing; in CI a missing one fails
    (CI installs it, so its absence is a broken CI, not a reason to skip)."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is not installed, but CI must install it (.ci/run)")
        pytest.skip(f"{name} not installed")
    return path
