"""Scale-out on Dask distributed: the points of a spec or a reproduction run as Dask tasks.

`executor(None)` starts a `LocalCluster` (one single-threaded worker process per CPU unless
`workers` is given); `executor("tcp://HOST:PORT")` uses an existing scheduler. Every task asks
for the resource `bench=1` and every local worker offers exactly one, so two measurements never
share a worker (workers of an external cluster must be started with `--resources bench=1`).
Results come back in task order; a failed point is a result with `status: failed`, never an
exception that stops the sweep.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Iterator

from .errors import LabError


def executor(scheduler: str | None = None, workers: int | None = None) -> Callable[..., Iterable[dict[str, Any]]]:
    """An executor for `runner.run_spec` and the reproductions (see the module documentation)."""

    def run(fn: Callable[[Any], dict[str, Any]], tasks: list[Any]) -> Iterator[dict[str, Any]]:
        if not tasks:
            return
        from distributed import Client, LocalCluster

        cluster = None
        try:
            if scheduler:
                client = Client(scheduler, timeout="10s")
            else:
                cluster = LocalCluster(
                    n_workers=workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    resources={"bench": 1},
                    dashboard_address=None,
                    silence_logs=40,
                )
                client = Client(cluster)
        except (OSError, TimeoutError) as e:
            raise LabError(f"cannot reach the Dask scheduler {scheduler or '(local)'}: {e}") from e
        try:
            futures = [client.submit(fn, t, resources={"bench": 1}, pure=False) for t in tasks]
            for f in futures:
                yield f.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    return run
