"""What each ``tableenvs`` sub-command does once its flags are parsed: one module per sub-command.

Where you are: the implementations behind :mod:`tableenvs.cli`. The CLI builds the parser (every flag and help text),
checks the counts, and dispatches to ``run(args)`` here, which gets the parsed :class:`argparse.Namespace` and returns
the exit code. A user error is a ``ValueError`` with a one-line message, which the CLI prints (exit code 2) through
the error policy, :func:`tableenvs.commands.errors.exit_code`. Nothing in this package imports :mod:`tableenvs.cli`
(no import cycle) or adds flags: help texts stay with the parser in the CLI.

* :mod:`~tableenvs.commands.play` — ``tableenvs play`` (the human seat it seats is :mod:`tableenvs.play.terminal_seat`);
* :mod:`~tableenvs.commands.replay` — ``tableenvs replay``;
* :mod:`~tableenvs.commands.train` — ``tableenvs train`` (Stable-Baselines3 or RLlib);
* :mod:`~tableenvs.commands.eval` — ``tableenvs eval``; :mod:`~tableenvs.commands.eval_resume` — what a stopped
  tournament saved and whether ``--resume`` may continue it;
* :mod:`~tableenvs.commands.export` — ``tableenvs export``;
* shared by several: :mod:`~tableenvs.commands.flags` (reading flag values), :mod:`~tableenvs.commands.extras`
  (is an optional dependency installed), :mod:`~tableenvs.commands.errors` (the error policy: what a failure prints
  and its exit code).

``tableenvs serve`` lives with the web server (:mod:`tableenvs.web.command`) and ``tableenvs list`` is one line of the
CLI. A module per sub-command because they share almost nothing: each reads its own flags and imports its own heavy
dependencies (torch, SB3, Ray, the evaluation backends) only when it runs, and a change to one cannot reach another.
"""
