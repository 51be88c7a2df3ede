"""Scale-out on Dask distributed: the points of a spec or a reproduction run as Dask tasks.

Two executors share one interface (`TaskExecutor.map`): `InProcessExecutor` runs the tasks one after
another in this process (`--local`, and the reference the Dask run is compared with);
`DaskExecutor` runs them on a `distributed` cluster — a `LocalCluster` by default (one
single-threaded worker process per CPU unless `workers` is given) or an existing scheduler
(`tcp://HOST:PORT`). Both return one `TaskResult` per task, **in task order**, whatever order the
tasks finished in; a task that raises (`PointFailed` from the binary, or anything else) comes back as
a failed result carrying the message, never as an exception that stops the sweep.

**Benchmark pinning.** Every worker of a `LocalCluster` offers the resource `bench=1`, and a task
submitted with `bench=True` asks for `bench=1`, so at most one measurement runs on a worker at a time
(two measurements never share a worker). Workers of an external cluster must be started with
`dask worker tcp://HOST:PORT --nthreads 1 --resources bench=1`; a benchmark map on a cluster without
such workers is refused up front (a `LabError`) instead of waiting forever. Note that workers on the
same host still share its cores and caches: for clean timings start one worker per host.
Deterministic simulations (paper 003 `nevermiss sim`) are not benchmarks and use every worker slot.

The spec runner, the reproductions and the sim sweeps all take a `TaskExecutor`;
`open_executor(scheduler, workers, local=...)` makes one.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Generic, Protocol, Sequence, TypeVar

from .errors import LabError, PointFailed

A = TypeVar("A")
R = TypeVar("R")

#: The worker resource a benchmark task asks for (one unit per worker).
BENCH = "bench"


@dataclass(frozen=True)
class TaskResult(Generic[R]):
    """The outcome of one task: `value` when it succeeded, else `error` (one line) and, for a
    failed run of the binary, its exit code."""

    index: int
    value: R | None = None
    error: str | None = None
    exit_code: int | None = None
    detail: str = ""  # stderr of the binary, or the traceback of an unexpected exception

    @property
    def ok(self) -> bool:
        return self.error is None


def call(fn: Callable[[A], R], arg: A, index: int) -> TaskResult[R]:
    """Runs `fn(arg)` and never raises (except for interrupts): a `PointFailed` or any other
    exception becomes a failed `TaskResult` naming it. Runs on the worker."""
    try:
        return TaskResult(index, value=fn(arg))
    except PointFailed as e:
        return TaskResult(index, error=str(e), exit_code=e.exit_code, detail=e.stderr)
    except LabError as e:
        return TaskResult(index, error=str(e))
    except Exception as e:  # noqa: BLE001 - a task's bug must not stop the other points
        return TaskResult(index, error=f"{type(e).__name__}: {e}", detail=traceback.format_exc())


class TaskExecutor(Protocol):
    """Maps a picklable module-level function over arguments; results in argument order."""

    #: How many tasks run at once (for choosing threads per task).
    parallelism: int
    #: Threads one task may use without oversubscribing its worker.
    threads_per_task: int

    def map(
        self,
        fn: Callable[[A], R],
        args: Sequence[A],
        *,
        bench: bool = False,
        desc: str = "tasks",
        progress: bool = True,
    ) -> list[TaskResult[R]]: ...

    def close(self) -> None: ...


def _bar(total: int, desc: str, progress: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="point", disable=not progress or total == 0, file=sys.stderr)


class InProcessExecutor:
    """Runs tasks one after another in this process (the `--local` executor). `bench` is accepted
    and has no effect: tasks never overlap here."""

    parallelism = 1

    def __init__(self, threads_per_task: int | None = None) -> None:
        self.threads_per_task = threads_per_task or os.cpu_count() or 1

    def map(
        self,
        fn: Callable[[A], R],
        args: Sequence[A],
        *,
        bench: bool = False,
        desc: str = "tasks",
        progress: bool = True,
    ) -> list[TaskResult[R]]:
        out: list[TaskResult[R]] = []
        with _bar(len(args), desc, progress) as bar:
            for i, a in enumerate(args):
                out.append(call(fn, a, i))
                bar.update(1)
        return out

    def close(self) -> None:
        pass

    def __enter__(self) -> "InProcessExecutor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_client(scheduler: str | None = None, workers: int | None = None) -> Any:
    """A `distributed.Client`: on a new `LocalCluster` (worker processes, `threads_per_worker=1`,
    `workers` or one per CPU, each offering `bench=1`, no dashboard) when `scheduler` is None or
    `"local"`, else connected to `scheduler` (`tcp://HOST:PORT`). The caller closes it
    (`client.close()`), which also shuts down a local cluster it started. A `LabError` if the
    scheduler cannot be reached or the local cluster cannot start."""
    from distributed import Client

    if scheduler and scheduler != "local":
        try:
            return Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise LabError(f"cannot reach the Dask scheduler {scheduler}: {e}") from e
    n = workers if workers is not None else (os.cpu_count() or 1)
    if n < 1:
        raise LabError(f"--workers must be at least 1 (got {n})")
    try:
        # A Client given no address starts its own LocalCluster and closes it with itself.
        return Client(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            resources={BENCH: 1},
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
    except (OSError, TimeoutError, RuntimeError) as e:
        raise LabError(f"cannot start a local Dask cluster of {n} workers: {e}") from e


class DaskExecutor:
    """Runs tasks on a Dask cluster (see the module documentation). The client is made on first
    use (`make_client(scheduler, workers)`) or given; `close()` closes a client this object made."""

    threads_per_task = 1  # workers are single-threaded slots; a task uses one core

    def __init__(self, scheduler: str | None = None, workers: int | None = None, *, client: Any = None) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self._client = client
        self._owns = client is None

    @property
    def started(self) -> bool:
        """Whether the client exists (made on first use)."""
        return self._client is not None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_client(self.scheduler, self.workers)
        return self._client

    @property
    def parallelism(self) -> int:
        info = self.client.scheduler_info()
        return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))

    def _check_bench(self) -> None:
        workers = self.client.scheduler_info().get("workers", {})
        if not any(w.get("resources", {}).get(BENCH, 0) >= 1 for w in workers.values()):
            raise LabError(
                f"no worker of the Dask scheduler {self.scheduler} offers the `{BENCH}` resource, so "
                f"benchmark tasks could never run; start workers with "
                f"`dask worker {self.scheduler} --nthreads 1 --resources {BENCH}=1`"
            )

    def map(
        self,
        fn: Callable[[A], R],
        args: Sequence[A],
        *,
        bench: bool = False,
        desc: str = "tasks",
        progress: bool = True,
    ) -> list[TaskResult[R]]:
        if not args:
            return []
        from distributed import as_completed

        client = self.client
        if bench:
            self._check_bench()
        res = {BENCH: 1} if bench else None
        futures = [client.submit(call, fn, a, i, pure=False, resources=res) for i, a in enumerate(args)]
        index = {f.key: i for i, f in enumerate(futures)}
        out: list[TaskResult[R] | None] = [None] * len(futures)
        with _bar(len(futures), desc, progress) as bar:
            for f in as_completed(futures):
                i = index[f.key]
                try:
                    out[i] = f.result()
                except Exception as e:  # noqa: BLE001 - e.g. KilledWorker: a failed point
                    out[i] = TaskResult(i, error=f"Dask task failed: {type(e).__name__}: {e}")
                bar.update(1)
                f.release()
        return [r if r is not None else TaskResult(i, error="no result") for i, r in enumerate(out)]

    def close(self) -> None:
        if self._client is not None and self._owns:
            self._client.close()
            self._client = None

    def __enter__(self) -> "DaskExecutor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_executor(
    scheduler: str | None = None, workers: int | None = None, *, local: bool = False
) -> InProcessExecutor | DaskExecutor:
    """`InProcessExecutor` when `local`, else a `DaskExecutor` on `scheduler` (None or `"local"`:
    a new `LocalCluster` of `workers` processes). Use it as a context manager."""
    if local:
        return InProcessExecutor()
    return DaskExecutor(scheduler, workers)
