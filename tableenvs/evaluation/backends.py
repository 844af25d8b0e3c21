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

Faults and signals:

* **A dead worker** (killed, out of memory): the local backend starts a fresh pool and re-runs every batch that
  had not finished, once; a second death in the same call raises :class:`WorkerLost`. Ray runs each task with
  ``max_retries=1`` (one retry after its worker or node is lost); a task lost again raises :class:`WorkerLost`. A
  batch that raises an exception is not retried: the exception is raised here.
* **Ctrl-C** (``KeyboardInterrupt``) or, inside :func:`stop_on_signals`, **SIGTERM** (:class:`Interrupted`): the
  queued batches are dropped, the worker processes are killed and waited for (Ray tasks are cancelled), then the
  exception propagates. Workers ignore SIGINT (Ctrl-C is the parent's to handle) and exit on their own if the
  parent dies without stopping them (checked twice a second), so none is left behind even after ``kill -9``.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from tableenvs.core.validation import check_at_least

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
    advance a progress bar or save the results. The returned list is always in batch order. A dead worker's
    batches are re-run once (module docstring); a second death raises :class:`WorkerLost`.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    workers = check_at_least("workers", workers, 1)
    if not batches:
        return []
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


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the batches (a ``KeyboardInterrupt``, so code that handles Ctrl-C handles both).

    ``signal_name`` is ``"SIGINT"`` or ``"SIGTERM"``. :func:`tableenvs.evaluation.evaluate` sets ``records`` (every
    game finished, by index), ``partial`` (the result of the whole blocks finished from game 0, or None) and
    ``planned`` (the tournament's number of games).
    """

    def __init__(self, signal_name: str = "SIGINT"):
        super().__init__(signal_name)
        self.signal_name = signal_name
        self.records: list[Any] = []
        self.partial: Any = None
        self.planned = 0


class WorkerLost(RuntimeError):
    """A worker process died again after its batches were re-run on a fresh one (or a Ray task was lost twice).

    :func:`tableenvs.evaluation.evaluate` sets ``records``, ``partial`` and ``planned`` as on :class:`Interrupted`.
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.records: list[Any] = []
        self.partial: Any = None
        self.planned = 0


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread, once: later signals are
    ignored until the block ends, so stopping the workers and saving what was played are not cut short. Outside
    the main thread (where Python allows no handlers) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    state = {"raised": False}

    def handle(signum, frame):
        if not state["raised"]:
            state["raised"] = True
            raise Interrupted(signal.Signals(signum).name)

    previous = {signum: signal.signal(signum, handle) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def _starting_workers() -> Iterator[None]:
    """The block that starts worker processes, safe from Ctrl-C and SIGTERM half-way.

    * SIGINT is blocked in the calling thread: a child inherits that through fork and exec, so a Ctrl-C sent to the
      process group while a worker's interpreter is still starting stays pending in it (dropped by
      :func:`_init_worker`) instead of killing it half-started ("Fatal Python error: init_import_site").
    * In the main thread, a Python-level SIGINT or SIGTERM handler (e.g. :func:`stop_on_signals`'s) is held back
      until the block ends, then run by raising the signal again: raised inside ``Process.start`` it would leave a
      child waiting for start-up data that never comes (it prints ``EOFError: Ran out of input``).
    """
    deferred: list[int] = []
    held = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(signum)
            if callable(handler):
                held[signum] = handler
                signal.signal(signum, lambda signum, frame: deferred.append(signum))
    masks = hasattr(signal, "pthread_sigmask")
    if masks:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if masks:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        for signum, handler in held.items():
            signal.signal(signum, handler)
        for number in dict.fromkeys(deferred):
            signal.raise_signal(number)


def _init_worker(parent: int) -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (a worker would print a traceback and carry on), and
    the worker exits by itself when its parent is gone (killed before it could stop the workers). The worker was
    started with SIGINT blocked (:func:`_starting_workers`): it ignores it first, then unblocks it, so a Ctrl-C that
    arrived during its start-up is dropped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    threading.Thread(target=_exit_with_parent, args=(parent,), name="exit-with-parent", daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _run_processes(fn, batches, workers, on_result) -> list[Any]:
    results: list[Any] = [None] * len(batches)
    remaining = list(range(len(batches)))
    context = multiprocessing.get_context("spawn")
    deaths: list[str] = []
    while True:
        pool = ProcessPoolExecutor(
            max_workers=min(workers, max(1, len(remaining))),
            mp_context=context,
            initializer=_init_worker,
            initargs=(os.getpid(),),
        )
        processes: dict[int, Any] = {}
        broken = False
        try:
            futures = {}
            try:
                with _starting_workers():  # submit starts the workers
                    for index in remaining:
                        futures[pool.submit(fn, batches[index])] = index
                        processes.update(getattr(pool, "_processes", None) or {})
            except Exception:  # a worker died while the batches were handed out (then spawning a worker may fail)
                if not getattr(pool, "_broken", False):
                    raise
                broken = True
                processes.update(getattr(pool, "_processes", None) or {})
            pending = set(futures)
            while pending and not broken:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                processes.update(getattr(pool, "_processes", None) or {})
                for future in done:
                    if isinstance(future.exception(), BrokenProcessPool):
                        broken = True
                        continue
                    index = futures[future]
                    results[index] = future.result()  # a batch's own exception is raised here
                    remaining.remove(index)
                    if on_result is not None:
                        on_result(index, results[index])
            if not broken:
                pool.shutdown()
                return results
            for future in pending:  # batches that finished while the pool broke are kept
                if future.done() and future.exception() is None:
                    index = futures[future]
                    results[index] = future.result()
                    remaining.remove(index)
                    if on_result is not None:
                        on_result(index, results[index])
        except BaseException:  # Ctrl-C, SIGTERM or a failed batch: drop the queued batches and stop the workers now
            _stop_pool(pool, processes)
            raise
        deaths.append(_death(processes))  # before the survivors are killed below
        _stop_pool(pool, processes)
        if len(deaths) > 1:
            raise WorkerLost(
                f"a worker process died ({deaths[0]}); its games were re-run on fresh workers and a worker died "
                f"again ({deaths[1]})"
            )
        logging.getLogger(__name__).warning(
            "tableenvs: a worker process died (%s); re-running the %d unfinished batches of games on fresh workers",
            deaths[0],
            len(remaining),
        )


def _stop_pool(pool: ProcessPoolExecutor, processes: dict[int, Any]) -> None:
    """Kill the pool's workers (SIGKILL: their queues may be mid-write) and wait until they are gone."""
    processes = {**processes, **(getattr(pool, "_processes", None) or {})}
    for process in processes.values():
        with contextlib.suppress(Exception):
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        with contextlib.suppress(Exception):
            process.join(timeout=5)


def _death(processes: dict[int, Any]) -> str:
    """How the pool's first dead worker ended, e.g. ``"pid 123, killed by SIGKILL"``."""
    # The executor terminates the other workers (SIGTERM) once one has died, and its thread may be reaping the dead
    # one right now (its exit code shows shortly): wait up to a second for an end that is not that SIGTERM.
    for _ in range(20):
        ended = [(pid, p.exitcode) for pid, p in processes.items() if p.exitcode is not None]
        ended.sort(key=lambda item: item[1] == -signal.SIGTERM)
        if ended and ended[0][1] != -signal.SIGTERM:
            break
        time.sleep(0.05)
    if not ended:
        return "it ended abruptly"
    pid, code = ended[0]
    if code < 0:
        try:
            return f"pid {pid}, killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"pid {pid}, killed by signal {-code}"
    return f"pid {pid}, exit code {code}"


def _run_ray(fn, batches, workers, ray_address, on_result) -> list[Any]:
    try:
        import ray
    except ImportError:
        raise ImportError('backend="ray" needs Ray: pip install "tableenvs[ray]" (or pip install ray)') from None
    if not ray.is_initialized():
        ray.init(address=ray_address, log_to_driver=False)
    # a task whose worker or node is lost runs once more; an exception raised by the batch itself is not retried
    remote_fn = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(fn)
    results: list[Any] = [None] * len(batches)
    index_of: dict[Any, int] = {}
    next_batch = 0
    in_flight: list[Any] = []
    try:
        while next_batch < len(batches) or in_flight:
            while next_batch < len(batches) and len(in_flight) < workers:
                ref = remote_fn.remote(batches[next_batch])
                index_of[ref] = next_batch
                in_flight.append(ref)
                next_batch += 1
            done, in_flight = ray.wait(in_flight, num_returns=1)
            for ref in done:
                index = index_of.pop(ref)
                try:
                    results[index] = ray.get(ref)
                except ray.exceptions.RayTaskError:
                    raise  # the batch's own exception
                except ray.exceptions.RayError as error:  # worker, node or object lost, after the retry
                    raise WorkerLost(
                        f"a Ray task was lost after one retry ({type(error).__name__}: {' '.join(str(error).split())})"
                    ) from error
                if on_result is not None:
                    on_result(index, results[index])
    except BaseException:
        for ref in in_flight:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
    return results
