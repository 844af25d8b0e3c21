"""Time bounds for tests that wait on another process or thread, sized for a machine at load ~20.

Where you are: a helper of the tests (imported as ``from load_bounds import ...``; not a test module). On 2 cores at
load ~20 each process gets about a tenth of a core, so a child that needs X CPU-seconds can take 10X seconds of wall
time. The bounds here only stop a test that hangs; none of them measures speed (a test that checks a cost measures
CPU time, ``time.thread_time`` or ``time.process_time``, which starvation does not inflate), and a test that
waits for something to happen waits for the thing itself (a line of output, a file, a signal) with these as the
outer limit.
"""

import os
import subprocess
import time
from typing import Any

#: The longest a test waits for a subprocess (or a condition another process brings about) before calling it hung:
#: an interpreter start and a tableenvs import take 2-5 CPU-s, a whole small game or tournament up to ~30 CPU-s,
#: i.e. up to ~300 s of wall time at load 20; doubled.
HANG = 600.0

#: The same for the heaviest children (a fresh numba compile of the Rummikub solver, ~25 CPU-s on top of an
#: install or an import: ~450 s of wall time at load 20), doubled.
HANG_COMPILE = 1200.0


def process_cpu_seconds(pid: int) -> float:
    """CPU-seconds (user + system) process ``pid`` and its descendants have used: its own, those of the children it
    has waited for, and those of its live descendants (Linux: ``/proc/PID/stat``, ``/proc/PID/task/*/children``)."""

    def ticks(process: int, waited: bool) -> int:
        try:
            with open(f"/proc/{process}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile: its parent's waited-for count has it, or will
            return 0
        own = int(fields[11]) + int(fields[12])  # utime, stime
        children = 0
        for task in os.listdir(f"/proc/{process}/task") if os.path.isdir(f"/proc/{process}/task") else []:
            try:
                with open(f"/proc/{process}/task/{task}/children") as listed:
                    children += sum(ticks(int(child), True) for child in listed.read().split())
            except OSError:
                continue
        return own + children + (int(fields[13]) + int(fields[14]) if waited else 0)  # cutime, cstime

    return ticks(pid, True) / os.sysconf("SC_CLK_TCK")


def run_on_cpu_budget(
    argv: list[str], cpu_seconds: float, *, stall: float = HANG, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True, **kwargs)`` bounded by the child's CPU time, not the
    wall clock: the child is killed and ``AssertionError`` raised once it has used ``cpu_seconds`` of CPU (its
    waited-for children included), or once it has used no CPU at all for ``stall`` seconds of wall time (a hang: on a
    loaded machine a runnable process still gets its share of a core, so starvation slows it but does not stop its
    clock). Returns the ``subprocess.CompletedProcess``."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    used, idle_since = 0.0, time.monotonic()
    while True:
        try:
            out, err = process.communicate(timeout=2.0)
            return subprocess.CompletedProcess(argv, process.returncode, out, err)
        except subprocess.TimeoutExpired:
            pass
        try:
            now = process_cpu_seconds(process.pid)
        except (OSError, ValueError):  # gone between the two calls: communicate() reaps it next round
            continue
        if now > used:
            used, idle_since = now, time.monotonic()
        why = (
            f"used {used:.0f} CPU-s, over its budget of {cpu_seconds:.0f}"
            if used > cpu_seconds
            else f"used no CPU for {stall:.0f} s (hung)"
            if time.monotonic() - idle_since > stall
            else ""
        )
        if why:
            process.kill()
            out, err = process.communicate()
            raise AssertionError(f"{' '.join(map(str, argv[:2]))} ...: {why}; its stderr ends: {err[-2000:]}")
