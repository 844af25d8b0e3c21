"""Run independent batches of work on local worker processes or as Ray tasks.

Where you are: the evaluation package's parallel backends (nothing game-specific). :func:`run_batches`
calls ``fn(batch)`` for every batch and returns the results in batch order, whatever the backend, so callers
that make each batch's result depend only on the batch get identical results everywhere.

=========  ======================================================================================================
backend    where ``fn`` runs
=========  ======================================================================================================
"local"    ``workers == 1``: in this process. ``workers > 1``: a ``concurrent.futures.ProcessPoolExecutor`` with
           the ``spawn`` start method (safe after torch or threads were started in the parent; the same on every
           OS). ``fn`` must be a module-level function and the batches picklable.
"ray"      one Ray task per batch (``ray`` is imported only here; install the ``ray`` extra). If Ray is not yet
           initialised, ``ray.init(address=ray_address)`` is called: ``None`` starts a local instance unless the
           ``RAY_ADDRESS`` environment variable names a cluster; ``"auto"`` joins the cluster this machine belongs
           to; ``"ray://host:10001"`` connects through Ray Client. ``workers`` caps the number of tasks in flight.
=========  ======================================================================================================
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from tableenvs.validation import check_at_least

BACKENDS = ("local", "ray")


def run_batches(
    fn: Callable[[Any], Any],
    batches: Sequence[Any],
    *,
    workers: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """``[fn(batch) for batch in batches]`` computed on ``backend`` with up to ``workers`` at a time.

    ``on_result(index, result)`` is called in this process as each batch finishes (in completion order), e.g. to
    advance a progress bar. The returned list is always in batch order.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    workers = check_at_least("workers", workers, 1)
    if backend == "ray":
        return _run_ray(fn, batches, workers, ray_address, on_result)
    if workers == 1:
        results = []
        for index, batch in enumerate(batches):
            results.append(fn(batch))
            if on_result is not None:
                on_result(index, results[-1])
        return results
    return _run_processes(fn, batches, workers, on_result)


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (a worker would print a traceback and carry on)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_processes(fn, batches, workers, on_result) -> list[Any]:
    results: list[Any] = [None] * len(batches)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, max(1, len(batches))), mp_context=context, initializer=_ignore_sigint
    )
    try:
        futures = {pool.submit(fn, batch): index for index, batch in enumerate(batches)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                index = futures[future]
                results[index] = future.result()
                if on_result is not None:
                    on_result(index, results[index])
    except BaseException:  # Ctrl-C or a failed batch: drop the queued batches and stop the workers now
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown()
    return results


def _run_ray(fn, batches, workers, ray_address, on_result) -> list[Any]:
    try:
        import ray
    except ImportError:
        raise ImportError('backend="ray" needs Ray: pip install "tableenvs[ray]" (or pip install ray)') from None
    if not ray.is_initialized():
        ray.init(address=ray_address, log_to_driver=False)
    remote_fn = ray.remote(num_cpus=1)(fn)
    results: list[Any] = [None] * len(batches)
    index_of: dict[Any, int] = {}
    next_batch = 0
    in_flight: list[Any] = []
    while next_batch < len(batches) or in_flight:
        while next_batch < len(batches) and len(in_flight) < workers:
            ref = remote_fn.remote(batches[next_batch])
            index_of[ref] = next_batch
            in_flight.append(ref)
            next_batch += 1
        done, in_flight = ray.wait(in_flight, num_returns=1)
        for ref in done:
            index = index_of.pop(ref)
            results[index] = ray.get(ref)
            if on_result is not None:
                on_result(index, results[index])
    return results
