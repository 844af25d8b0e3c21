"""``tableenvs play``: one whole game in the terminal between built-in agents, saved models and human seats.

Where you are: the play sub-command's implementation, called by :mod:`tableenvs.cli` with the parsed flags. It checks
the flags (``--pause``, ``--record``, ``--policies`` against the seats, the model files) before the game starts, then
steps the env, printing the table at the start and end (with why the game ended) and each decision as it happens;
a human seat's turn is :func:`tableenvs.play.terminal_seat.human_turn`, and only what the table sees is printed while
one plays. ``--record`` writes the game through :class:`tableenvs.play.records.Recorder`. User errors are
``ValueError`` (the CLI prints them, exit 2).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from tableenvs.commands.flags import check_output_file, policy_list
from tableenvs.core.registry import make_raw
from tableenvs.evaluation.playing import limit_torch_threads
from tableenvs.paths import check_model_files
from tableenvs.play.terminal_seat import human_turn, stdin_is_tty
from tableenvs.play.text import printable
from tableenvs.policies import make_policy, play_game


def run(args: argparse.Namespace) -> int:
    """Play the game; 0 when it ends or a human quits."""
    from tableenvs.play.records import Recorder

    options = {"render_mode": "ansi"}
    if args.players is not None:
        options["num_players"] = args.players
    if args.pause is not None and not (args.pause >= 0 and np.isfinite(args.pause)):
        raise ValueError(f"--pause must be a number of seconds >= 0, got {args.pause}")
    if args.record is not None:
        check_output_file(args.record, "--record")
    raw = make_raw(args.env, **options)
    agent_names = raw.possible_agents
    policy_names = policy_list(args.policies, "--policies")
    if len(policy_names) == 1:
        policy_names *= len(agent_names)
    if len(policy_names) != len(agent_names):
        raise ValueError(f"--policies names {len(policy_names)} policies for {len(agent_names)} players")
    check_model_files(policy_names, "--policies")
    humans = {agent for agent, name in zip(agent_names, policy_names, strict=True) if name == "human"}
    policies = {
        agent: make_policy(name, raw, trust_models=args.trust_models)
        for agent, name in zip(agent_names, policy_names, strict=True)
        if agent not in humans
    }
    limit_torch_threads(args.torch_threads)
    seed = args.seed
    if seed is None and args.record is not None:  # a record needs the deal's seed
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    pause = args.pause if args.pause is not None else (0.5 if humans and stdin_is_tty() else 0.0)
    recorder = Recorder(args.env, {k: v for k, v in options.items() if k != "render_mode"}, seed or 0, policy_names)
    terminal = _Terminal(humans, recorder, pause, args.quiet)
    seats = [policies[agent] if agent not in humans else _HumanSeat(raw, agent, terminal) for agent in agent_names]

    seating = ", ".join(f"{agent}={name}" for agent, name in zip(agent_names, policy_names, strict=True))
    print(printable(f"{args.env}: {seating}") + (f" (seed {seed})" if seed is not None else "") + "\n")
    if humans:
        print("human seats see only their own view; type ? at your turn for help\n")
    try:
        totals, _ = play_game(raw, seats, seed=seed, rng=rng, on_step=terminal.on_step)
    except _Quit as quit:
        if args.record is not None:  # the game so far: it replays, with no outcome
            path = recorder.finish(raw).save(args.record)
            print(f"wrote {path} ({len(recorder.record.steps)} steps, unfinished)")
        print(f"tableenvs: {quit.agent} quit the game")
        return 0
    terminal.print_log(raw)
    print()
    print(raw.render())
    outcome = raw.outcome()
    if outcome is not None:
        print(f"game ended: {outcome.reason}")
    print("total reward: " + ", ".join(f"{agent} {value:+g}" for agent, value in zip(agent_names, totals, strict=True)))
    if args.record is not None:
        path = recorder.finish(raw).save(args.record)
        print(f"wrote {path} ({len(recorder.record.steps)} steps)")
    return 0


class _Quit(Exception):
    """A human seat quit (or its input ended): the game stops there."""

    def __init__(self, agent: str):
        super().__init__(agent)
        self.agent = agent


class _Terminal:
    """The terminal's side of the game, as :func:`tableenvs.policies.play_game`'s hook (:meth:`on_step`): record
    each action; with no human seat, the table at the start and the god-view event log; with one, only what the
    table sees of the others' moves (``describe_action_public``), and a pause once each automatic turn has ended."""

    def __init__(self, humans: set[str], recorder: Any, pause: float, quiet: bool):
        self.humans, self.recorder, self.pause, self.quiet = humans, recorder, pause, quiet
        self.shown: int | None = None  # event-log lines printed; None before the first step
        self.moved: str | None = None  # the automatic seat whose move was shown last, while a pause may be due

    def on_step(self, env: Any, agent: str, observation: Any, action: int) -> None:
        self.recorder.add(env, action)
        if not self.humans:
            if self.shown is None:
                print(env.render())
            self.print_log(env)
        elif agent in self.humans:
            if len(self.humans) == 1:
                print(f"  {agent} (you): {env.describe_action(action)}")
        elif not self.quiet:
            self.wait_for_turn(agent)
            print(f"  {agent}: {env.describe_action_public(action)}")
            self.moved = agent if self.pause else None

    def wait_for_turn(self, agent: str) -> None:
        """Pause before ``agent`` moves (or is asked to) if another, automatic, seat's move was the last shown."""
        if self.moved is not None and self.moved != agent:
            time.sleep(self.pause)
        self.moved = None

    def print_log(self, env: Any) -> None:
        """The god-view event log lines not printed yet (none with a human seat: they would show hidden moves)."""
        log = env.event_log
        if not self.humans and not self.quiet:
            for line in log[self.shown or 0 :]:
                print(f"  {line}")
        self.shown = len(log)


class _HumanSeat:
    """A human at the terminal as a seat's policy: shows its view and asks for its action (:func:`human_turn`)."""

    def __init__(self, raw: Any, agent: str, terminal: _Terminal):
        self.raw, self.agent, self.terminal = raw, agent, terminal

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        self.terminal.wait_for_turn(self.agent)
        action = human_turn(self.raw, self.agent, len(self.terminal.humans) > 1)
        if action is None:
            raise _Quit(self.agent)
        return action
