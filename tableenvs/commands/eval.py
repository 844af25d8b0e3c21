"""``tableenvs eval``: a tournament between policies (:func:`tableenvs.evaluation.evaluate`), its table printed and its
results written under ``--out``; games saved as they finish, so that a stopped one can be continued (``--resume``).

Where you are: the eval sub-command's implementation, called by :mod:`tableenvs.cli` with the parsed flags. It checks
the flags, the eval extra and the output directories before any game, plays the games (logging each finished one to
the journal, :mod:`tableenvs.evaluation.journal`), prints the table, writes the results (to a temporary directory
instead when ``--out`` fills up, naming both), and with ``--records`` the game records. On Ctrl-C, SIGTERM or a worker
lost twice it writes the partial results and says how to resume. What ``--resume`` reads and checks is
:mod:`tableenvs.commands.eval_resume`. User errors are ``ValueError`` (the CLI prints them, exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
from typing import Any

from tableenvs.commands.errors import one_line
from tableenvs.commands.eval_resume import EVAL_DEFAULTS, note_unfinished, saved_tournament, tournament
from tableenvs.commands.extras import missing_module
from tableenvs.commands.flags import parse_option, policy_list
from tableenvs.core.validation import check_at_least
from tableenvs.paths import OutputError, check_output_dir

#: Under ``--no-progress``: seconds between the plain progress lines on stderr while games are played.
PROGRESS_LINE_SECONDS = 30.0


class ProgressLines:
    """``--no-progress``'s progress: plain lines on stderr instead of a bar (for logs and pipes). A start line once
    every check has passed and the games begin, then every :data:`PROGRESS_LINE_SECONDS` one line with the games
    played so far, written by a timer thread, so a tournament of few long games (search, OpenSpiel bots) is never
    silent for long. Called as ``evaluate``'s ``progress`` (0 when the games start, then the number of games just
    finished); a context manager around the tournament, whose exit stops the timer."""

    def __init__(self, games: int, resumed: int, stream: Any = None, interval: float | None = None) -> None:
        self.games, self.played = games, resumed
        self.stream = stream if stream is not None else sys.stderr
        self.interval = PROGRESS_LINE_SECONDS if interval is None else interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __call__(self, count: int) -> None:
        with self._lock:
            self.played += count
        if self._thread is None:
            self._start()

    def _start(self) -> None:
        self._started = time.perf_counter()
        resumed = f", {self.played} of them from the stopped run" if self.played else ""
        self._write(
            f"tableenvs eval: playing {self.games} games{resumed}; a line every {self.interval:g} s (no bar: "
            "--no-progress)"
        )
        self._thread = threading.Thread(target=self._run, name="tableenvs-eval-lines", daemon=True)
        self._thread.start()

    def line(self) -> None:
        """One progress line now."""
        with self._lock:
            played = self.played
        minutes, seconds = divmod(int(time.perf_counter() - self._started), 60)
        self._write(f"tableenvs eval: {played} of {self.games} games played, {minutes}:{seconds:02d} elapsed")

    def _write(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.line()

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _check_eval_extra(plot: bool, progress: bool) -> None:
    """The eval extra's optional parts, checked before the games rather than when the results are written."""
    needed = ("openskill",) + (("matplotlib",) if plot else ()) + (("tqdm",) if progress else ())
    missing = missing_module(needed)
    if missing is not None:
        skip = {"matplotlib": " (or pass --no-plot)", "tqdm": " (or pass --no-progress)"}.get(missing, "")
        raise ValueError(f'eval needs the eval extra ({missing} is missing): pip install "tableenvs[eval]"{skip}')


def run(args: argparse.Namespace) -> int:
    """Play (or finish, with ``--resume``) the tournament; 0 when it is played, 130 or 143 when Ctrl-C or SIGTERM
    stopped it, 1 when a worker was lost twice (the partial results are written in each case)."""
    from tableenvs.evaluation import Interrupted, WorkerLost, evaluate
    from tableenvs.evaluation.backends import stop_on_signals
    from tableenvs.evaluation.journal import GameLog

    given = {dest: getattr(args, dest) for dest in EVAL_DEFAULTS if getattr(args, dest) is not None}
    if "policies" in given:
        given["policies"] = policy_list(given["policies"], "--policies")
    if "opponents" in given:
        given["opponents"] = policy_list(given["opponents"], "--opponents")
    if "option" in given:
        given["option"] = dict(parse_option(text) for text in given["option"])
    if args.resume is not None:
        out = check_output_dir(args.resume, "--resume")
        if args.out is not None and os.path.realpath(args.out) != os.path.realpath(out):
            raise ValueError(f"--resume {args.resume!r} continues in that directory; --out {args.out!r} is another")
        arguments, finished = saved_tournament(out, given)
    else:
        for dest, flag in (("env", "ENV (the environment name)"), ("policies", "--policies")):
            if dest not in given:
                raise ValueError(f"eval needs {flag}, or --resume DIR to continue a stopped tournament")
        out = check_output_dir(args.out or "runs/eval", "--out")  # before any game: a bad --out must not cost it
        arguments, finished = {**EVAL_DEFAULTS, **given}, []
        note_unfinished(out)
    check_at_least("--games", arguments["games"], 1)
    _check_eval_extra(plot=not args.no_plot, progress=not args.no_progress)
    if args.records is not None:
        check_output_dir(args.records, "--records")
    elif args.record_games is not None:
        raise ValueError("--record-games needs --records DIR")
    opponents = arguments["opponents"]
    if opponents is not None:
        opponents = opponents[0] if len(opponents) == 1 else opponents
    log = GameLog(out, tournament(arguments), resume=args.resume is not None)
    saving = {"on": True}

    def save_games(records) -> None:
        if not saving["on"]:
            return
        try:
            log.append(records)
        except OutputError as error:
            saving["on"] = False
            if args.resume is None:
                log.remove()  # a fresh log that cannot be written: leave --out as it was
            else:
                log.close()  # the earlier games stay logged
            print(f"tableenvs: warning: {error}; games are no longer saved as they finish", file=sys.stderr)

    lines = None if not args.no_progress else ProgressLines(arguments["games"], len(finished))
    with stop_on_signals(), lines or contextlib.nullcontext():  # SIGTERM, like Ctrl-C, saves what was played
        try:
            try:
                result = evaluate(
                    arguments["env"],
                    arguments["policies"],
                    arguments["games"],
                    opponents=opponents,
                    num_players=arguments["players"],
                    options=dict(arguments["option"]),
                    seed=arguments["seed"],
                    duplicate=arguments["duplicate"],
                    workers=args.workers,
                    backend=args.backend,
                    ray_address=args.ray_address,
                    deterministic=not arguments["sample"],
                    torch_threads=args.torch_threads,
                    progress=True if lines is None else lines,
                    finished=finished,
                    on_games=save_games,
                    trust_models=args.trust_models,
                    engine=arguments["engine"],
                )
            except (ImportError, OSError) as error:
                raise ValueError(str(error)) from None
            print(result.format_table())
            paths = _save_or_rescue(lambda path: result.save(path, plot=not args.no_plot), str(out), "eval")
        except (Interrupted, WorkerLost) as stop:
            log.close()
            logged = (log.games > 0 or log.resume) and log.path.exists()  # not a log an earlier tournament left
            return _eval_stopped(stop, out, logged, plot=not args.no_plot)
        finally:
            log.close()
        log.remove()  # every game is in the results now
    played = result.games - result.resumed
    timing = f"{played} games in {result.seconds:.1f} s ({result.games_per_second:.1f} games/s)"
    if result.resumed:
        timing = f"{result.games} games: {result.resumed} from the stopped run, {timing}"
    print(f"\n{timing}; wrote " + ", ".join(str(path) for path in paths.values()))
    if args.records is not None:
        from tableenvs.play.records import record_tournament

        specs = list(arguments["policies"])
        if opponents is not None:
            specs += opponents if isinstance(opponents, list) else [opponents]
        count = result.games if args.record_games is None else min(args.record_games, result.games)
        deterministic = not arguments["sample"]
        written = record_tournament(
            result, specs, args.records, games=range(count), deterministic=deterministic, trust_models=args.trust_models
        )
        print(f"wrote {len(written)} game records under {args.records} (check one with: tableenvs replay FILE)")
    return 0


def _eval_stopped(stop, out, logged: bool, plot: bool) -> int:
    """Ctrl-C, SIGTERM or a worker lost twice: write the partial results, say what was saved; the exit code."""
    import shlex

    from tableenvs.evaluation import Interrupted
    from tableenvs.evaluation.journal import LOG_FILE, read_log

    signal_name = stop.signal_name if isinstance(stop, Interrupted) else None
    resume = f"tableenvs eval --resume {shlex.quote(str(out))}"
    try:
        saved = len(read_log(out)) if logged else 0
    except ValueError:  # a log damaged meanwhile: --resume will name the line
        saved = 0
    planned = f" of {stop.planned}" if getattr(stop, "planned", 0) else ""
    said = [f"{saved}{planned} games saved in {out / LOG_FILE}" if saved else "no finished game saved"]
    if stop.partial is not None:
        stop.partial.partial["resume"] = resume
        try:
            paths = _save_or_rescue(lambda path: stop.partial.save(path, plot=plot), str(out), "eval")
            reported = stop.partial.partial["games_reported"]
            said.append(
                f"partial results (marked partial; games 0-{reported - 1}, whole blocks) in "
                + ", ".join(str(path) for path in paths.values())
            )
        except OutputError as error:
            said.append(f"the partial results were not written ({error})")
    if saved:
        said.append(f"continue with: {resume}")
    if signal_name is None:
        print(f"tableenvs: error: {one_line(stop)}; " + "; ".join(said), file=sys.stderr)
        return 1
    print(f"\ntableenvs: stopped by {signal_name}: " + "; ".join(said), file=sys.stderr)
    print("tableenvs: interrupted" if signal_name == "SIGINT" else "tableenvs: terminated", file=sys.stderr)
    return 143 if signal_name == "SIGTERM" else 130


def _save_or_rescue(save, out: str, job: str) -> dict:
    """``save(out)``; if a file cannot be written there, save to a new temporary directory instead and raise the
    :class:`~tableenvs.paths.OutputError` naming both (the command line prints it and exits 2)."""
    try:
        return save(out)
    except OutputError as error:
        try:
            rescue = tempfile.mkdtemp(prefix=f"tableenvs-{job}-")
            save(rescue)
        except (OSError, OutputError):
            raise error from None
        raise OutputError(f"{error}; the results were saved to {rescue} instead") from None
