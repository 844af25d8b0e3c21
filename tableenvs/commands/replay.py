"""``tableenvs replay``: re-play a game record and check it reproduces exactly; ``--html`` also writes a viewer page.

Where you are: the replay sub-command's implementation, called by :mod:`tableenvs.cli` with the parsed flags. It loads
the record (:mod:`tableenvs.play.records`), re-plays it, printing the event log as it goes, and with ``--html`` writes
the page (:mod:`tableenvs.play.viewer`). A record's text is printed through ``printable()``: an escape sequence in it is
shown, not obeyed. User errors (a bad record, a bad ``--html`` path) are ``ValueError`` (the CLI prints them, exit 2).
"""

from __future__ import annotations

import argparse

from tableenvs.commands.flags import check_output_file
from tableenvs.play.text import printable


def run(args: argparse.Namespace) -> int:
    """Replay the record; 0 when it reproduces (one that does not raises
    :class:`~tableenvs.play.records.RecordError`, a ``ValueError``)."""
    from tableenvs.play.records import GameRecord, replay

    record = GameRecord.load(args.file)
    if args.html is not None:
        check_output_file(args.html, "--html")
    print(  # a record's text goes through printable(): an escape sequence in it is shown, not obeyed
        printable(
            f"{record.game} record: seed {record.seed}, options {record.options}, {len(record.steps)} steps"
            + (f", policies {','.join(record.policies)}" if record.policies else "")
        )
    )
    shown = [0]

    def on_step(env, index, step):
        log = env.event_log
        if not args.quiet:
            for line in log[shown[0] :]:
                print(f"  {printable(line)}")
        shown[0] = len(log)

    result = replay(record, on_step=on_step)
    outcome = result.outcome
    ending = "unfinished" if outcome is None else "winner(s) " + ", ".join(f"player_{s}" for s in outcome["winners"])
    finished = result.env.unwrapped.outcome()
    if finished is not None:  # why it ended, as tableenvs play says it
        ending += f"; ended: {finished.reason}"
    print(
        f"{printable(args.file)}: reproduces exactly ({result.steps} steps; {ending}; returns "
        + ", ".join(f"{x:+g}" for x in result.returns)
        + ")"
    )
    if args.html is not None:
        from pathlib import Path

        from tableenvs.play.viewer import write_html

        print(f"wrote {write_html(record, Path(args.html).expanduser())} (open it in a browser)")
    return 0
