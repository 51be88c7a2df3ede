"""Shared fixtures: the nevermiss binary (tests that need it skip when it is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nevermiss_lab import binary
from nevermiss_lab.errors import LabError


@pytest.fixture(scope="session")
def nm() -> Path:
    try:
        return binary.find_binary()
    except LabError as e:
        pytest.skip(str(e))
