"""`nevermiss-lab`: run experiment specs, reproduce the papers, fit component models.

Every error is one line on stderr (`nevermiss-lab: error: ...`) and exit code 2; a sweep with
failed points exits 1 after the others finished (their outputs are kept)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .cluster import TaskExecutor

from . import binary as nmbin
from . import provenance
from .errors import LabError, PointFailed

PAPERS = ("000", "001", "002", "003", "004")


def _executor(args: argparse.Namespace) -> "TaskExecutor":
    """A Dask executor for --dask/--scheduler (a local cluster is started on first use and
    closed with the executor), else the in-process one."""
    from .cluster import open_executor

    return open_executor(args.scheduler, args.workers, local=not (args.scheduler or args.dask))


def cmd_run(args: argparse.Namespace) -> int:
    from . import spec as specmod
    from .runner import run_spec

    spec = specmod.load(Path(args.spec))
    with _executor(args) as ex:
        out = run_spec(
            spec,
            Path(args.results),
            spec_dir=Path(args.spec).resolve().parent,
            exe=nmbin.find_binary(args.binary),
            executor=ex,
            progress=not args.quiet,
        )
    print(f"results: {out}")
    return 0


def _reproducer(paper: str) -> Callable[..., Path]:
    if paper == "000":
        from .p000 import reproduce as r000

        return r000
    if paper == "001":
        from .p001 import reproduce as r001

        return r001
    if paper == "002":
        from .p002 import reproduce as r002

        return r002
    if paper == "003":
        from .p003 import reproduce as r003

        return r003
    from .p004 import reproduce as r004

    return r004


def cmd_reproduce(args: argparse.Namespace) -> int:
    fn = _reproducer(args.paper)
    exe = nmbin.find_binary(args.binary)
    prov = provenance.set_current(exe)
    out = Path(args.out) / args.paper
    out.mkdir(parents=True, exist_ok=True)
    with _executor(args) as ex:
        report = fn(out, args.quick, exe, executor=ex, progress=not args.quiet)
    stamp(report, prov)
    print(f"report: {report}")
    return 0


def stamp(report: Path, prov: dict[str, object]) -> None:
    """Ends a report with the section naming its build, machine and date (the one place every
    reproduction shares) and writes the same as `provenance.json` beside it."""
    import json

    text = report.read_text()
    if "## Build, machine and date" not in text:
        head, _, rest = text.partition("\n")
        line = (f"\n*{provenance.build_line(prov)}; {provenance.machine_line(prov)}; {prov.get('date')} "
                "(details at the end)*\n")
        report.write_text(head + "\n" + line + rest.rstrip("\n") + "\n\n" + provenance.markdown(prov))
    (report.parent / "provenance.json").write_text(json.dumps(prov, indent=1, default=str))


def cmd_version(exe_arg: str | None) -> str:
    """`nevermiss-lab --version`: the lab's version and the nevermiss build it would run."""
    lines = [f"nevermiss-lab {provenance.lab_version()}"]
    try:
        exe = nmbin.find_binary(exe_arg)
        lines.append(f"nevermiss binary: {exe}")
        lines += ["  " + line for line in nmbin.version(exe).splitlines()]
    except LabError as e:
        lines.append(f"nevermiss binary: none ({e})")
    return "\n".join(lines)


def cmd_table3(args: argparse.Namespace) -> int:
    """paper 000 Table III as measured here beside the paper (a few seconds), and one figure."""
    from .p000 import table3_quick

    exe = nmbin.find_binary(args.binary)
    provenance.set_current(exe)
    text, figure = table3_quick(exe, Path(args.out))
    print(text)
    print(f"figure: {figure}")
    return 0


def _run_flags(p: argparse.ArgumentParser) -> None:
    """Where the points run (read by `_executor`) and quiet, for `run` and `reproduce`."""
    p.add_argument("--dask", action="store_true", help="run the points on a local Dask cluster")
    p.add_argument("--scheduler", help="run the points on this Dask scheduler (tcp://HOST:PORT)")
    p.add_argument("--workers", type=int, help="local Dask workers (default: one per CPU)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nevermiss-lab", description=__doc__.splitlines()[0])
    p.add_argument("--binary", help="the nevermiss binary (default: $NEVERMISS_BIN, target/release/nevermiss, $PATH)")
    p.add_argument("--version", action="store_true",
                   help="print the lab's version and the nevermiss build it runs, and exit")
    sub = p.add_subparsers(dest="command")

    r = sub.add_parser("run", help="run an experiment spec (YAML) into a results folder; resumes")
    r.add_argument("spec")
    r.add_argument("--results", default="results", help="results folder (default: results/)")
    _run_flags(r)
    r.set_defaults(fn=cmd_run)

    rp = sub.add_parser("reproduce", help="regenerate a paper's tables and figures on this machine")
    rp.add_argument("paper", choices=PAPERS)
    rp.add_argument("--quick", action="store_true", help="a small run (under two minutes)")
    rp.add_argument("--out", default="reports", help="reports folder (default: reports/)")
    _run_flags(rp)
    rp.set_defaults(fn=cmd_reproduce)

    t = sub.add_parser("table3", help="paper 000 Table III measured here beside the paper (seconds)")
    t.add_argument("--out", default="reports/table3", help="where the figure goes")
    t.set_defaults(fn=cmd_table3)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.version:
        print(cmd_version(args.binary))
        return 0
    if args.command is None:
        p.error("a command is required: run, reproduce or table3")
    try:
        code: int = args.fn(args)
        return code
    except PointFailed as e:
        print(f"nevermiss-lab: error: {e}", file=sys.stderr)
        return 1
    except LabError as e:
        print(f"nevermiss-lab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nevermiss-lab: interrupted; finished points are kept, run again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
