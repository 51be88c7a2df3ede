"""Experiment specifications (YAML): which nevermiss command, program, fixed flags, sweep
variables, repetitions. Validated before anything runs; an error names the field and value.

    name: rate-sweep
    command: bench              # bench | bench-component | bench-p4rt | bench-learn | sim-sweep
    args: {mode: latency, scenario: add-on-miss, m: "2^14"}
    sweep: {rates: [1, 10, 100]}
    repetitions: 2

Every point is one run of the binary with `args` plus one value of each sweep variable as
`--NAME VALUE` flags (a list value is joined with commas; `true` is a bare flag; `false` omits it).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import SpecError

Scalar = Union[bool, int, float, str]
Value = Union[Scalar, list[Scalar]]

#: Each command: its nevermiss subcommand words and the flags through which the lab collects
#: the outputs into a point's directory (`{dir}` is replaced).
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "bench": (
        ["bench"],
        ["--json", "{dir}/out.json", "--hdr-dir", "{dir}/hdr", "--samples", "{dir}/samples.csv", "-q"],
    ),
    "bench-component": (
        ["bench", "component"],
        ["--json", "{dir}/out.json", "--hdr-dir", "{dir}/hdr", "-q"],
    ),
    "bench-p4rt": (["bench", "p4rt"], ["--json", "{dir}/out.json", "--hdr-dir", "{dir}/hdr", "-q"]),
    "bench-learn": (["bench", "learn"], ["--json", "{dir}/out.json", "--hdr-dir", "{dir}/hdr", "-q"]),
    "sim-sweep": (["sim", "sweep"], ["--out", "{dir}/sim", "-q"]),
}

FLAG = re.compile(r"^[a-z][a-z0-9-]*$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class Spec(BaseModel):
    """A validated experiment specification."""

    model_config = ConfigDict(extra="forbid")

    name: str
    command: Literal["bench", "bench-component", "bench-p4rt", "bench-learn", "sim-sweep"]
    description: str = ""
    #: The program (a path relative to the spec file or the working directory): the positional
    #: PROGRAM of bench-component, `--program` of bench.
    program: str | None = None
    args: dict[str, Value] = Field(default_factory=dict)
    sweep: dict[str, list[Scalar]] = Field(default_factory=dict)
    repetitions: int = Field(default=1, ge=1, le=1000)
    timeout_s: float = Field(default=3600.0, gt=0)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME.match(v):
            raise ValueError(f"`{v}` is not a file-safe name (letters, digits, _ . -)")
        return v

    @field_validator("args", "sweep")
    @classmethod
    def _flags(cls, v: dict[str, object]) -> dict[str, object]:
        for k in v:
            if not FLAG.match(k):
                raise ValueError(f"`{k}` is not a flag name (lower case, digits, -)")
        return v

    @field_validator("sweep")
    @classmethod
    def _nonempty(cls, v: dict[str, list[Scalar]]) -> dict[str, list[Scalar]]:
        for k, vals in v.items():
            if not vals:
                raise ValueError(f"sweep variable `{k}` has no values")
        return v

    def points(self) -> list["Point"]:
        """Every point: the cartesian product of the sweep values × repetitions, in spec order."""
        keys = list(self.sweep)
        out = []
        for combo in itertools.product(*(self.sweep[k] for k in keys)):
            values = dict(zip(keys, combo))
            for rep in range(self.repetitions):
                out.append(Point(values, rep))
        return out


@dataclass(frozen=True)
class Point:
    """One run: a value per sweep variable and the repetition index."""

    values: dict[str, Scalar]
    rep: int

    @property
    def id(self) -> str:
        """A stable, file-safe id from the values (the same point keeps its id on resume)."""
        parts = [f"{k}={_safe(v)}" for k, v in self.values.items()]
        parts.append(f"rep{self.rep}")
        return "_".join(parts)


def _safe(v: Scalar) -> str:
    return re.sub(r"[^A-Za-z0-9.^=+-]", "-", str(v))


def flag_args(values: dict[str, Value]) -> list[str]:
    """`{name: value}` as command-line flags (see the module documentation)."""
    out: list[str] = []
    for k, v in values.items():
        if v is True:
            out.append(f"--{k}")
        elif v is False:
            continue
        elif isinstance(v, list):
            out += [f"--{k}", ",".join(str(x) for x in v)]
        else:
            out += [f"--{k}", str(v)]
    return out


def _where(loc: tuple[object, ...]) -> str:
    return ".".join(str(x) for x in loc) or "(top level)"


def load(path: Path) -> Spec:
    """Reads and validates a spec file; `SpecError` naming the file, the field and the value."""
    try:
        text = path.read_text()
    except OSError as e:
        raise SpecError(f"{path}: {e.strerror or e}") from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise SpecError(f"{path}{at}: not valid YAML: {getattr(e, 'problem', e)}") from e
    return parse(data, str(path))


def parse(data: object, source: str = "spec") -> Spec:
    """Validates already-parsed YAML data."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a spec is a mapping (name, command, args, sweep, ...)")
    try:
        return Spec.model_validate(data)
    except ValidationError as e:
        msgs = []
        for err in e.errors():
            field = _where(err["loc"])
            got = err.get("input")
            shown = "" if isinstance(got, dict) else f" (got {got!r})"
            msgs.append(f"field `{field}`: {err['msg']}{shown}")
        raise SpecError(f"{source}: " + "; ".join(msgs)) from None


def help_flags(help_text: str) -> set[str]:
    """The long flags a `--help` text lists."""
    return set(re.findall(r"--([a-z][a-z0-9-]*)", help_text))


def check_flags(spec: Spec, known: set[str]) -> None:
    """Every flag of `args` and `sweep` is one the command knows, and none is one the lab sets."""
    reserved = {f.lstrip("-") for f in COMMANDS[spec.command][1] if f.startswith("--")}
    for section in ("args", "sweep"):
        for k in getattr(spec, section):
            if k in reserved:
                raise SpecError(f"field `{section}.{k}`: the lab sets --{k} itself")
            if k not in known:
                cmd = " ".join(COMMANDS[spec.command][0])
                raise SpecError(f"field `{section}.{k}`: `nevermiss {cmd}` has no flag --{k}")
    dup = set(spec.args) & set(spec.sweep)
    if dup:
        raise SpecError(f"field `sweep.{sorted(dup)[0]}`: also fixed in `args`")
