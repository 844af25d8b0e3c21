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

import numpy as np

from tableenvs.commands.flags import check_output_file, policy_list
from tableenvs.core.registry import make
from tableenvs.evaluation.playing import limit_torch_threads
from tableenvs.paths import check_model_files
from tableenvs.play.terminal_seat import human_turn, stdin_is_tty
from tableenvs.play.text import printable
from tableenvs.policies import make_policy


def run(args: argparse.Namespace) -> int:
    """Play the game; 0 when it ends or a human quits."""
    import time

    from tableenvs.play.records import Recorder

    options = {"render_mode": "ansi"}
    if args.players is not None:
        options["num_players"] = args.players
    if args.pause is not None and not (args.pause >= 0 and np.isfinite(args.pause)):
        raise ValueError(f"--pause must be a number of seconds >= 0, got {args.pause}")
    if args.record is not None:
        check_output_file(args.record, "--record")
    env = make(args.env, **options)
    raw = env.unwrapped
    agent_names = raw.possible_agents
    policy_names = policy_list(args.policies, "--policies")
    if len(policy_names) == 1:
        policy_names *= len(agent_names)
    if len(policy_names) != len(agent_names):
        raise ValueError(f"--policies names {len(policy_names)} policies for {len(agent_names)} players")
    check_model_files(policy_names, "--policies")
    humans = {agent for agent, name in zip(agent_names, policy_names, strict=True) if name == "human"}
    policies = {
        agent: make_policy(name, env, trust_models=args.trust_models)
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

    env.reset(seed=seed)
    seating = ", ".join(f"{agent}={name}" for agent, name in zip(agent_names, policy_names, strict=True))
    print(printable(f"{args.env}: {seating}") + (f" (seed {seed})" if seed is not None else "") + "\n")
    if humans:
        print("human seats see only their own view; type ? at your turn for help\n")
    else:
        print(env.render())
    totals = dict.fromkeys(agent_names, 0.0)
    shown = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        action = None
        if not (terminated or truncated):
            if agent in humans:
                action = human_turn(raw, agent, len(humans) > 1)
                if action is None:
                    if args.record is not None:  # the game so far: it replays, with no outcome
                        path = recorder.finish(env).save(args.record)
                        print(f"wrote {path} ({len(recorder.record.steps)} steps, unfinished)")
                    print(f"tableenvs: {agent} quit the game")
                    return 0
                if len(humans) == 1:
                    print(f"  {agent} (you): {raw.describe_action(action)}")
            else:
                action = policies[agent].act(observation["observation"], observation["action_mask"], rng)
            recorder.add(env, action)
            public = raw.describe_action_public(action)
        env.step(action)
        log = raw.event_log
        if humans:
            # the god-view log would show hidden moves (passed cards, staged tiles): only what the table sees
            if action is not None and agent not in humans and not args.quiet:
                print(f"  {agent}: {public}")
                if pause and raw.agent_selection != agent:  # once per turn, not per staged tile or picked card
                    time.sleep(pause)
        elif not args.quiet:
            for line in log[shown:]:
                print(f"  {line}")
        shown = len(log)
    print()
    print(env.render())
    print(f"game ended: {raw.outcome().reason}")
    print("total reward: " + ", ".join(f"{agent} {value:+g}" for agent, value in totals.items()))
    if args.record is not None:
        path = recorder.finish(env).save(args.record)
        print(f"wrote {path} ({len(recorder.record.steps)} steps)")
    return 0
