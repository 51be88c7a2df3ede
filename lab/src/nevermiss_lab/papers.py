"""The papers' published figures, kept as data (lab/src/nevermiss_lab/data/paperNNN.yaml) with the
section each comes from."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml


@cache
def published(paper: str) -> dict[str, Any]:
    """The published figures of paper `000`, `001`, `003` or `004`."""
    text = resources.files("nevermiss_lab").joinpath(f"data/paper{paper}.yaml").read_text()
    data: dict[str, Any] = yaml.safe_load(text)
    return data
