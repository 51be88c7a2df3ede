"""What produced a result: the nevermiss build (its `--version`: commit, dirty flag, rustc,
profile, features, engines), the lab's version (and its commit when it runs from a checkout), the
machine and the date. Every results folder's `meta.json` and every report records it, and every
figure's caption ends with its short form.

`set_current` fixes it for the run (`nevermiss-lab reproduce`, `table3`); a figure made without
it (a test calling a figure function) still gets the machine and date, and the build as unknown.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

from . import __version__
from . import binary as nmbin

_CURRENT: dict[str, Any] | None = None


def machine() -> dict[str, Any]:
    """A description of this machine, stored with every result."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "hostname": platform.node(),
        "cpus": os.cpu_count(),
        "cpus_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu,
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def parse_version(text: str) -> dict[str, str]:
    """`nevermiss --version` as fields: `version` (first line, after the name) and one entry
    per `key: value` line (`commit`, `rustc`, `profile`, `features`, `engines`)."""
    lines = text.strip().splitlines()
    out: dict[str, str] = {"text": text.strip()}
    if lines:
        out["version"] = lines[0].removeprefix("nevermiss").strip()
    for line in lines[1:]:
        key, sep, value = line.partition(": ")
        if sep:
            out[key.strip()] = value.strip()
    return out


def nevermiss_build(binary: Path) -> dict[str, str]:
    """The build of `binary`, from its `--version`."""
    return parse_version(nmbin.version(binary))


def lab_version() -> str:
    """`0.1.0`, and the commit of the checkout the lab runs from (with `-dirty` when the lab's
    files differ from it), if it runs from one."""
    root = nmbin.repo_root()
    if root is None:
        return __version__
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
        if head.returncode != 0:
            return __version__
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no",
                                "--", "lab"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return __version__
    mark = "-dirty" if dirty.stdout.strip() else ""
    return f"{__version__} (checkout {head.stdout.strip()[:12]}{mark})"


def collect(binary: Path | None) -> dict[str, Any]:
    """Build, lab, machine and date now."""
    return {
        "nevermiss": nevermiss_build(binary) if binary is not None else {"text": "unknown"},
        "binary": str(binary) if binary is not None else None,
        "lab": lab_version(),
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
    }


def set_current(binary: Path | None) -> dict[str, Any]:
    """Collects the provenance of this run and keeps it for the figures and reports."""
    global _CURRENT
    _CURRENT = collect(binary)
    return _CURRENT


def current() -> dict[str, Any]:
    """The run's provenance (`set_current`), else machine and date with the build unknown."""
    return _CURRENT if _CURRENT is not None else collect(None)


def build_line(prov: dict[str, Any]) -> str:
    """`nevermiss 0.1.0, commit 787cb50c12ab (dirty), release, features: none` or `build unknown`."""
    b = prov.get("nevermiss", {})
    if "version" not in b:
        return "nevermiss build unknown"
    commit = b.get("commit", "unknown")
    short = commit.split()[0].rstrip(",")[:12] if commit else "unknown"
    dirty = " (dirty)" if "dirty" in commit else ""
    profile = b.get("profile", "").split(",")[0]
    return f"nevermiss {b['version'].split()[0]}, commit {short}{dirty}, {profile}, features: {b.get('features', '?')}"


def machine_line(prov: dict[str, Any]) -> str:
    m = prov.get("machine", {})
    return f"{m.get('cpu_model') or 'unknown CPU'}, {m.get('cpus_available') or m.get('cpus')} CPUs"


def caption(held_fixed: str, prov: dict[str, Any] | None = None) -> str:
    """A figure's caption: what was held fixed, then machine, date and build."""
    p = prov if prov is not None else current()
    return f"{held_fixed}\n{machine_line(p)}; {p.get('date', '')}; {build_line(p)}"


def markdown(prov: dict[str, Any] | None = None) -> str:
    """The report section that names what produced it."""
    p = prov if prov is not None else current()
    b = p.get("nevermiss", {})
    lines = ["## Build, machine and date\n"]
    lines.append(f"- nevermiss: `{p.get('binary')}`")
    for line in b.get("text", "unknown").splitlines():
        lines.append(f"  - {line}")
    lines.append(f"- nevermiss-lab {p.get('lab')}")
    m = p.get("machine", {})
    lines.append(f"- machine: {machine_line(p)}, kernel {m.get('kernel')}, host `{m.get('hostname')}`")
    lines.append(f"- date: {p.get('date')}")
    return "\n".join(lines) + "\n"
