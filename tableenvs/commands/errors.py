"""The command line's error policy: whatever a sub-command raises becomes one line on stderr and an exit code.

Where you are: :func:`tableenvs.cli.main` runs the parser and the sub-command through :func:`exit_code`, and the
commands that print an error themselves (``tableenvs eval`` stopped by a lost worker) word it with :func:`one_line`.
The policy (:mod:`tableenvs.cli`'s docstring, README "Command-line errors"): a user error (``ValueError``,
``TypeError``, a missing optional module) is one line and exit code 2; argparse's own exits keep their code; Ctrl-C
prints one line and exits 130; a closed stdout (``| head``) exits 141 quietly; anything else is one ``internal error``
line and exit code 1; ``TABLEENVS_DEBUG=1`` re-raises instead, for the traceback. It prints to stderr and, after a
closed pipe, points stdout at /dev/null; nothing else.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from tableenvs.play.text import printable


def quiet_teardown() -> None:
    """After an interrupt, objects it cut off halfway through their construction (a compiler's handles caught inside
    numba's first compilation) can fail in their destructors at exit, which Python reports on stderr after the line
    that said the run was interrupted; those reports are dropped, so that line stays the last."""
    sys.unraisablehook = lambda unraisable: None


def exit_code(run: Callable[[], int], argv: list[str] | None) -> int:
    """``run()``'s exit code, or the one the policy gives what it raised (printed as one line on stderr); ``argv``
    (None: ``sys.argv[1:]``) is the command line, read to name ``--players`` in the game's own player-count error."""
    try:
        code = run()
        sys.stdout.flush()  # a closed pipe shows up here rather than as a warning at interpreter exit
        if code in (130, 143):  # stopped by a signal: the one line said so
            quiet_teardown()
        return code
    except SystemExit as exit_:  # argparse: --help (0) and usage errors (2), already printed
        return exit_.code if isinstance(exit_.code, int) else 2
    except BrokenPipeError:  # stdout closed early (| head): stop quietly, as a SIGPIPE-killed tool would
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        print("\ntableenvs: interrupted", file=sys.stderr)
        quiet_teardown()
        return 130
    except (ValueError, TypeError) as error:
        if os.environ.get("TABLEENVS_DEBUG"):
            raise
        message = one_line(error)
        if message.startswith("num_players must be") and argv_players(argv) is not None:
            message = f"--players {argv_players(argv)}: {message}"  # the game's own words, under the flag's name
        print(f"tableenvs: error: {message}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:  # an optional dependency the checks above did not foresee
        if os.environ.get("TABLEENVS_DEBUG"):
            raise
        print(
            f"tableenvs: error: {one_line(error)}: an optional dependency is missing; the extras (train, eval, "
            "ray) are listed in the README",
            file=sys.stderr,
        )
        return 2
    except Exception as error:
        if os.environ.get("TABLEENVS_DEBUG"):
            raise
        print(
            f"tableenvs: internal error: {type(error).__name__}: {one_line(error)} "
            "(set TABLEENVS_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def argv_players(argv: list[str] | None) -> str | None:
    """The value given to ``--players`` (or its ``--num-players`` alias) on the command line, if any."""
    args = sys.argv[1:] if argv is None else list(argv)
    for i, arg in enumerate(args):
        for flag in ("--players", "--num-players"):
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (captured in tests)
        pass


def one_line(error: BaseException) -> str:
    """The error as one terminal-safe line (a record's text in it cannot send escape sequences)."""
    return printable(" ".join(str(error).split()) or type(error).__name__)
