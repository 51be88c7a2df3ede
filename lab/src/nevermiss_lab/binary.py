"""Finding and running the `nevermiss` binary.

The lab never re-implements the switch: every measurement is a run of the binary, whose outputs
(JSON, CSV, HdrHistogram logs) the lab reads. The binary is, in this order: the `binary` argument,
`$NEVERMISS_BIN`, `target/release/nevermiss` of the repository this package sits in, `nevermiss` on
`$PATH`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .errors import LabError, PointFailed


def repo_root() -> Path | None:
    """The nevermiss repository this package is part of (lab/src/nevermiss_lab → ../../..), if any."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "Cargo.toml").is_file() and (parent / "lab").is_dir():
            return parent
    return None


def find_binary(binary: str | os.PathLike[str] | None = None) -> Path:
    """The nevermiss binary to run; a `LabError` saying where it looked if there is none."""
    tried: list[str] = []
    candidates: list[str | os.PathLike[str]] = []
    if binary is not None:
        candidates.append(binary)
    elif os.environ.get("NEVERMISS_BIN"):
        candidates.append(os.environ["NEVERMISS_BIN"])
    else:
        root = repo_root()
        if root is not None:
            candidates.append(root / "target" / "release" / "nevermiss")
        on_path = shutil.which("nevermiss")
        if on_path:
            candidates.append(on_path)
    for c in candidates:
        p = Path(c)
        tried.append(str(p))
        if p.is_file() and os.access(p, os.X_OK):
            return p.resolve()
    where = ", ".join(tried) if tried else "$NEVERMISS_BIN, target/release/nevermiss, $PATH"
    raise LabError(
        f"the nevermiss binary was not found (looked at: {where}); build it with "
        "`cargo build --release -p nevermiss` or set NEVERMISS_BIN"
    )


def version(binary: Path) -> str:
    """`nevermiss --version` of the binary (stored with every result)."""
    try:
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as e:
        raise LabError(f"cannot run {binary}: {e}") from e
    return out.stdout.strip() or out.stderr.strip() or "unknown"


def run(
    args: list[str],
    *,
    binary: Path | None = None,
    timeout: float | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Runs `nevermiss ARGS`; a `PointFailed` naming the command, exit code and the end of stderr
    if it does not exit 0 or does not finish within `timeout` seconds."""
    exe = binary if binary is not None else find_binary()
    cmd = [str(exe), *args]
    shown = " ".join(["nevermiss", *args])
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False
        )
    except subprocess.TimeoutExpired as e:
        raise PointFailed(f"`{shown}` did not finish within {timeout} s") from e
    except OSError as e:
        raise PointFailed(f"cannot run `{shown}`: {e}") from e
    if out.returncode != 0:
        tail = "\n".join(out.stderr.strip().splitlines()[-5:])
        raise PointFailed(
            f"`{shown}` exited with {out.returncode}: {tail or '(no stderr)'}",
            exit_code=out.returncode,
            stderr=out.stderr,
        )
    return out
