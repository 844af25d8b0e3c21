"""Tournaments that survive interruption and dead workers, through the real command line.

``tableenvs eval`` runs in a subprocess in its own session; the tests wait until games are saved in
``games.jsonl``, then send SIGTERM, Ctrl-C (SIGINT to the process group) or ``kill -9`` to a worker, and check the
exit code, the partial results, that no process of the session is left (read from /proc), and that ``--resume``
gives the files of an uninterrupted run byte for byte (also after ``kill -9`` of the command itself). One small
tournament for all (Pili Pili, 3 players, random and heuristic, 200 games), its uninterrupted results computed once.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest
from load_bounds import HANG

from tableenvs.cli import main
from tableenvs.evaluation import GameRecord, backends
from tableenvs.evaluation.journal import LOG_FILE, TOURNAMENT_FILE, read_log, record_to_json

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="POSIX signals and /proc")

ROOT = Path(__file__).resolve().parents[1]
# --engine aec: these tests stop and resume the AEC path's worker processes
ARGS = ["pilipili_v0", "--policies", "random,heuristic", "--players", "3", "--games", "200", "--engine", "aec"]
QUIET = ["--no-plot", "--no-progress"]
RESULTS = ("results.json", "games.csv", "policies.csv", "head_to_head.csv", "paired.csv")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, bytes]:
    """The files of the tournament played without interruption (in this process, one worker)."""
    out = tmp_path_factory.mktemp("reference")
    assert main(["eval", *ARGS, *QUIET, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(RESULTS)  # the working files are removed at the end
    return {name: (out / name).read_bytes() for name in RESULTS}


def _start(out: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tableenvs.cli", "eval", *ARGS, *QUIET, "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: Ctrl-C goes to it, and what it starts is found by it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # not inherited as ignored
    )


def _proc(pid: str) -> tuple[int, int, str, bytes] | None:
    """``(ppid, process group, state, command line)`` of a live process, None if gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    state, ppid, group = stat.rsplit(")", 1)[1].split()[:3]
    return None if state in "ZX" else (int(ppid), int(group), state, command)


def _group(group: int) -> dict[int, bytes]:
    """Live processes of the process group, by pid, with their command lines."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _proc(entry)) is not None and info[1] == group:
            found[int(entry)] = info[3]
    return found


def _workers(process: subprocess.Popen) -> set[int]:
    """The worker processes the CLI has started (multiprocessing's spawn children)."""
    return {pid for pid, command in _group(process.pid).items() if b"spawn_main" in command and pid != process.pid}


def _wait_for(condition, what: str, process: subprocess.Popen, timeout: float = HANG):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process.poll() is not None:
            pytest.fail(f"the CLI ended (exit {process.returncode}) before {what}: {process.communicate()}")
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


def _logged(out: Path) -> int:
    try:
        return (out / LOG_FILE).read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _first_block_logged(out: Path) -> bool:
    """Games 0 and 1 (the first whole block) are in the log: the partial results will not be empty."""
    return {0, 1} <= {record.index for record in read_log(out)}


def _finish(process: subprocess.Popen, timeout: float = HANG) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return process.returncode, out, err


def _assert_nothing_left(group: int) -> None:
    """No live process of the session's group, after a grace for the exits to complete (it returns as soon as
    none is left; a worker whose parent vanished checks every 0.5 s, which a starved machine can stretch far)."""
    deadline = time.monotonic() + HANG / 10
    while (left := _group(group)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"processes left behind: {left}"


def _assert_partial(out: Path, reason: str) -> dict:
    """The partial results: marked partial, whole blocks from game 0, every reported game in the log too."""
    data = json.loads((out / "results.json").read_text())
    partial = data["partial"]
    logged = read_log(out)
    assert partial["reason"] == reason and partial["games_planned"] == 200
    assert 0 < partial["games_reported"] <= partial["games_finished"] <= len(logged) < 200
    assert data["games"] == partial["games_reported"] and data["games"] % 2 == 0  # whole blocks of 2 seatings
    assert any(note.startswith("PARTIAL RESULTS") for note in data["notes"])
    assert [r.index for r in logged[: data["games"]]] == list(range(data["games"]))
    assert (out / "games.csv").read_text().count("\n") == data["games"] + 1
    assert partial["resume"] == f"tableenvs eval --resume {out}"
    return data


def _assert_resumed(out: Path, reference: dict[str, bytes], *extra: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    resumed = subprocess.run(
        [sys.executable, "-m", "tableenvs.cli", "eval", "--resume", str(out), *QUIET, *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert {name: (out / name).read_bytes() for name in RESULTS} == reference
    assert sorted(p.name for p in out.iterdir()) == sorted(RESULTS)  # log and tournament.json removed
    return resumed.stdout


def test_sigterm_stops_the_workers_writes_partial_results_and_resume_gives_the_uninterrupted_results(
    reference, tmp_path
):
    process = _start(tmp_path, "--workers", "2")
    _wait_for(lambda: _first_block_logged(tmp_path), "the first block was saved", process)
    workers = _wait_for(lambda: _workers(process), "the workers were listed", process)
    sent = time.monotonic()
    os.kill(process.pid, signal.SIGTERM)  # the CLI only, as a service manager or `kill` sends it
    code, out, err = _finish(process)
    seconds = time.monotonic() - sent
    assert code == 143, err
    # that it stopped rather than played on is shown by the partial results (fewer than the 200 games logged,
    # below); this bound only catches a stop that hangs (a worker never reaped), generous for a loaded machine
    assert seconds < HANG / 4, f"{seconds:.1f} s from SIGTERM to exit"
    lines = err.strip().splitlines()
    assert lines[-1] == "tableenvs: terminated" and lines[-2].startswith("tableenvs: stopped by SIGTERM: ")
    assert f"continue with: tableenvs eval --resume {tmp_path}" in lines[-2] and "Traceback" not in err
    assert out == ""
    _assert_nothing_left(process.pid)
    for pid in workers:
        assert _proc(str(pid)) is None, f"worker {pid} is still alive"
    _assert_partial(tmp_path, "SIGTERM")
    stdout = _assert_resumed(tmp_path, reference, "--workers", "2")
    assert "200 games: " in stdout and " from the stopped run, " in stdout


def test_ctrl_c_writes_partial_results_and_resume_refuses_other_arguments_then_continues(reference, tmp_path, cli):
    process = _start(tmp_path)  # one process: every game is saved as it ends
    _wait_for(lambda: _logged(tmp_path) >= 5, "five games were saved", process)  # games 0-4, in order
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole process group
    code, out, err = _finish(process)
    assert code == 130, err
    assert err.strip().splitlines()[-1] == "tableenvs: interrupted" and "Traceback" not in err and out == ""
    _assert_nothing_left(process.pid)
    _assert_partial(tmp_path, "SIGINT")

    saved = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for argv, message in [
        (["--games", "202"], "--games 202 (saved: --games 200)"),
        (["--seed", "1", "--no-duplicate"], "--no-duplicate (saved: --duplicate); --seed 1 (saved: --seed 0)"),
        (["--policies", "heuristic,random"], "--policies heuristic,random (saved: --policies random,heuristic)"),
        (["llama_party_v0"], "ENV llama_party_v0 (saved: ENV pilipili_v0)"),
    ]:
        code, _, err = cli(["eval", *argv, "--resume", str(tmp_path), *QUIET])
        assert code == 2 and "the arguments differ from the stopped tournament's: " + message in err, err
    code, _, err = cli(["eval", "--resume", str(tmp_path), "--out", str(tmp_path / "x"), *QUIET])
    assert code == 2 and "continues in that directory" in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == saved  # refused before anything changed

    with open(tmp_path / LOG_FILE, "a") as log:  # as if killed while writing a line: cut short, then ignored
        log.write('{"index": 199, "blo')
    _assert_resumed(tmp_path, reference, "--workers", "2", *ARGS)  # the same arguments given again: accepted


def test_resume_says_when_there_is_nothing_to_resume(tmp_path, cli):
    code, _, err = cli(["eval", "--resume", str(tmp_path), *QUIET])
    assert code == 2 and "no stopped tournament there (no tournament.json" in err
    (tmp_path / "results.json").write_text('{"games": 4}')
    code, _, err = cli(["eval", "--resume", str(tmp_path), *QUIET])
    assert code == 2 and "nothing to resume, the tournament there finished" in err
    code, _, err = cli(["eval", "--policies", "random", *QUIET])
    assert code == 2 and "eval needs ENV (the environment name), or --resume DIR" in err


def test_a_killed_worker_is_replaced_and_its_games_are_played_again(reference, tmp_path):
    process = _start(tmp_path, "--workers", "2")
    _wait_for(lambda: _logged(tmp_path) >= 1, "a game was saved", process)
    victim = min(_wait_for(lambda: _workers(process), "the workers were listed", process))
    os.kill(victim, signal.SIGKILL)
    code, out, err = _finish(process)
    assert code == 0, err
    assert f"a worker process died (pid {victim}, killed by SIGKILL); re-running the " in err
    assert {name: (tmp_path / name).read_bytes() for name in RESULTS} == reference
    assert TOURNAMENT_FILE not in os.listdir(tmp_path) and LOG_FILE not in os.listdir(tmp_path)
    _assert_nothing_left(process.pid)


def test_a_worker_dying_again_stops_with_a_clear_error_and_the_games_saved(reference, tmp_path):
    process = _start(tmp_path, "--workers", "2")
    _wait_for(lambda: _first_block_logged(tmp_path), "the first block was saved", process)
    first = _wait_for(lambda: _workers(process), "the workers were listed", process)
    os.kill(min(first), signal.SIGKILL)
    fresh = _wait_for(lambda: _workers(process) - first, "fresh workers were started", process)
    os.kill(min(fresh), signal.SIGKILL)
    code, out, err = _finish(process)
    assert code == 1, err
    error = err.strip().splitlines()[-1]
    assert error.startswith(f"tableenvs: error: a worker process died (pid {min(first)}, killed by SIGKILL); ")
    assert f"a worker died again (pid {min(fresh)}, killed by SIGKILL)" in error
    assert f" games saved in {tmp_path / LOG_FILE}" in error and "continue with: tableenvs eval --resume" in error
    _assert_nothing_left(process.pid)
    _assert_partial(tmp_path, "worker lost")


def test_after_kill_9_of_the_cli_its_workers_exit_and_resume_continues_from_the_log(reference, tmp_path):
    process = _start(tmp_path, "--workers", "2")
    _wait_for(lambda: _first_block_logged(tmp_path), "the first block was saved", process)
    _wait_for(lambda: _workers(process), "the workers were listed", process)
    os.kill(process.pid, signal.SIGKILL)  # no chance to stop the workers or write anything more
    _finish(process)
    _assert_nothing_left(process.pid)  # the workers noticed their parent was gone
    assert "results.json" not in os.listdir(tmp_path) and read_log(tmp_path)
    _assert_resumed(tmp_path, reference)


def test_the_log_gives_back_equal_records_and_a_damaged_line_is_named(tmp_path):
    record = GameRecord(3, 1, (1, 0), (-2.5, 0.1), (2.5, 0.0), (1,), (2, 1), False, 17)
    (tmp_path / LOG_FILE).write_text(record_to_json(record) + "\n" + record_to_json(record) + '\n{"ind')
    assert read_log(tmp_path) == [record]  # a repeated line is one game; the last, cut short, is ignored
    (tmp_path / LOG_FILE).write_text(record_to_json(record) + '\n{"index": -1}\n')
    with pytest.raises(ValueError, match=r"games\.jsonl' line 2 is not a game record: expected an object with"):
        read_log(tmp_path)
    other = record_to_json(record).replace('"decisions":17', '"decisions":18')
    (tmp_path / LOG_FILE).write_text(record_to_json(record) + "\n" + other + "\n")
    with pytest.raises(ValueError, match="line 2: game 3 was logged twice, differently"):
        read_log(tmp_path)


# ------------------------------------------------------------------------------------ Ray, without Ray


class _Lost(Exception):
    pass


def _fake_ray(lost: set[int], interrupt_at: int | None = None) -> types.ModuleType:
    """A stand-in for the parts of ``ray`` that ``_run_ray`` uses: batches in ``lost`` fail as a task whose worker
    died after its retries; ``interrupt_at`` raises Ctrl-C when that batch's result is fetched."""
    ray = types.ModuleType("ray")
    ray.exceptions = types.SimpleNamespace(RayError=_Lost, RayTaskError=type("RayTaskError", (_Lost,), {}))
    ray.options, ray.cancelled = {}, []
    ray.is_initialized = lambda: True

    def remote(**options):
        ray.options.update(options)
        return lambda fn: types.SimpleNamespace(remote=lambda batch: (batch, fn))

    def get(ref):
        batch, fn = ref
        if batch == interrupt_at:
            raise KeyboardInterrupt
        if batch in lost:
            raise _Lost("The worker died unexpectedly while executing this task.")
        return fn(batch)

    ray.remote, ray.get = remote, get
    ray.wait = lambda refs, num_returns: (refs[:1], refs[1:])
    ray.cancel = lambda ref, force: ray.cancel_calls.append((ref[0], force))
    ray.cancel_calls = []
    return ray


def test_ray_tasks_are_retried_once_then_a_lost_task_is_a_clear_error(monkeypatch):
    ray = _fake_ray(lost={2})
    monkeypatch.setitem(sys.modules, "ray", ray)
    seen = []
    with pytest.raises(backends.WorkerLost, match=r"a Ray task was lost after one retry \(_Lost: The worker died"):
        backends.run_batches(lambda b: b, [0, 1, 2, 3], workers=2, backend="ray", on_result=lambda i, _: seen.append(i))
    assert ray.options == {"num_cpus": 1, "max_retries": 1, "retry_exceptions": False}
    assert seen == [0, 1]  # the batches before the lost one were reported

    ray = _fake_ray(lost=set(), interrupt_at=1)
    monkeypatch.setitem(sys.modules, "ray", ray)
    with pytest.raises(KeyboardInterrupt):
        backends.run_batches(lambda b: b, [0, 1, 2, 3], workers=3, backend="ray")
    assert ray.cancel_calls == [(2, True), (3, True)]  # the tasks still in flight are cancelled


@pytest.fixture
def ctrl_c_raises():
    """SIGINT handled by Python's default handler (KeyboardInterrupt) for the test, whatever this process inherited:
    a test run started in the background by a non-interactive shell starts with SIGINT ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_signal_while_workers_start_waits_until_they_have_started_and_they_start_with_ctrl_c_blocked(ctrl_c_raises):
    # Raised inside Process.start, the parent's Interrupted would leave a half-started worker waiting for its
    # start-up data; delivered to a worker still importing, Ctrl-C would kill it mid-start. So the parent's handler
    # runs once the block ends, and a process started inside the block has SIGINT blocked until it unblocks it.
    # The signals are sent to one thread each (pthread_kill): a process-directed one may land in any thread of this
    # test process that does not block it, some other test's background thread included, and run late.
    inside = []
    probe = "import signal; print(int(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])))"
    main = threading.main_thread().ident
    with pytest.raises(KeyboardInterrupt), backends._starting_workers():
        signal.pthread_kill(main, signal.SIGINT)  # blocked here: it stays pending until the block ends
        time.sleep(0.05)
        inside.append(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip())
    assert inside == ["1"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_a_signal_another_thread_takes_while_workers_start_is_handled_when_they_have_started(ctrl_c_raises):
    # A thread that does not block SIGINT takes it: Python runs the handler in the main thread at once, where the
    # block holds it back until the workers are started.
    # The signal's arrival is waited for, not assumed after a pause: the C-level handler writes its number to the
    # wakeup socket when the taker thread takes it, however long a loaded machine keeps that thread from running.
    after = []
    done = threading.Event()
    taker = threading.Thread(target=done.wait, args=(HANG,))
    taker.start()
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    try:
        with pytest.raises(KeyboardInterrupt), backends._starting_workers():
            signal.pthread_kill(taker.ident, signal.SIGINT)
            assert select.select([reader], [], [], HANG)[0] and reader.recv(1) == bytes([signal.SIGINT])
            time.sleep(0.05)  # a call that runs pending Python handlers: held back, or this block ends here
            after.append("block finished")
    finally:
        signal.set_wakeup_fd(previous)
        reader.close()
        writer.close()
        done.set()
    taker.join()
    assert after == ["block finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
