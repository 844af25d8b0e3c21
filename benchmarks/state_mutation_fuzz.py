"""Field-by-field mutation fuzz of ``set_state``: every mutated record is refused or plays on to a normal end.

Valid records are taken at random points of random games of every game (several player counts and options); each
is mutated one field at a time (anywhere in the record: ints +-1, to -1, huge; floats NaN, inf, huge; lists
shortened, extended, emptied, two items swapped; bools flipped; strings changed; ``None`` replaced) and given to
``set_state`` on an env made with the record's options. Each mutation must be either

* **rejected**: ``set_state`` raises :class:`tableenvs.core.state.StateError` and leaves the env as it was, or
* **accepted and played to the end**: the restored env renders, round-trips through ``get_state`` / JSON /
  ``from_state``, and plays on under random legal play to its end (every live agent to act has a legal move, its
  observation lies inside the observation space, the game ends within a step budget) with no exception.

Anything else is **broken** (there must be none). The unmodified record of each point must be accepted
(a refusal counts as broken too). Run::

    python benchmarks/state_mutation_fuzz.py --seconds 600          # the long run (counts printed, exit 1 if broken)
    STATE_FUZZ_SECONDS=600 pytest tests/test_state_consistency.py   # the same budget in the test

``tests/test_state_consistency.py`` runs it for :data:`CI_SECONDS`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tableenvs  # noqa: E402
from tableenvs.core.state import StateError  # noqa: E402
from tableenvs.core.table_env import TableEnv  # noqa: E402

#: Seconds the CI test spends (``tests/test_state_consistency.py``); ``STATE_FUZZ_SECONDS`` overrides it there.
CI_SECONDS = 12.0
#: Steps an accepted state may take to end (random play of a whole fresh game takes far fewer in every config).
MAX_STEPS = 20_000

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("pilipili_v0", {"num_players": 2}),
    ("pilipili_v0", {"num_players": 4}),
    ("pilipili_v0", {"num_players": 6, "max_rounds": 3}),
    ("pilipili_v0", {"num_players": 3, "missions": "none", "reward": "win", "max_rounds": 4}),
    ("llama_party_v0", {"num_players": 2}),
    ("llama_party_v0", {"num_players": 3, "reward": "win"}),
    ("llama_party_v0", {"num_players": 4}),
    ("rummikub_v0", {"num_players": 2, "max_turns": 40}),
    ("rummikub_v0", {"num_players": 4, "max_turns": 30}),
    (
        "rummikub_v0",
        {
            "num_players": 3,
            "strict_commit": False,
            "draw_after_play": True,
            "games_per_episode": 2,
            "min_initial": 0,
            "end_on_empty_pool": True,
            "pool_exhausted": "draw",
            "max_turns": 60,
        },
    ),
]

HUGE = (10**30, 2**63, -(2**63), 10**6)


@dataclass
class Counts:
    """What a run did: ``broken`` lists ``(config, path, mutation, what went wrong)``."""

    states: int = 0
    mutations: int = 0
    rejected: int = 0
    played: int = 0
    broken: list[tuple[str, str, str, str]] = field(default_factory=list)
    by_game: Counter = field(default_factory=Counter)

    def line(self) -> str:
        return (
            f"{self.states} states, {self.mutations} mutations: {self.rejected} rejected, {self.played} accepted and "
            f"played to the end, {len(self.broken)} broken"
        )


def _dead(env: TableEnv) -> bool:
    agent = env.agent_selection
    return env.terminations[agent] or env.truncations[agent]


def random_point(name: str, options: dict, rng: random.Random) -> dict:
    """A JSON-read record of a random point (uniform over the steps, the end and dead steps included) of a random
    game."""
    seed = rng.randrange(2**31)
    env = tableenvs.make_raw(name, **options)
    env.reset(seed=seed)
    play = np.random.default_rng(seed)
    records = [json.dumps(env.get_state())]
    while env.agents:
        env.step(None if _dead(env) else int(play.choice(env.legal_actions())))
        records.append(None)
    point = rng.randrange(len(records))
    env = tableenvs.make_raw(name, **options)
    env.reset(seed=seed)
    play = np.random.default_rng(seed)
    for _ in range(point):
        env.step(None if _dead(env) else int(play.choice(env.legal_actions())))
    return json.loads(json.dumps(env.get_state()))


def sites(record: Any, path: tuple = ()) -> list[tuple]:
    """Every path in ``record`` (dict keys and list indices) to a value, lists and dicts included (not the root)."""
    found = []
    items = record.items() if isinstance(record, dict) else enumerate(record) if isinstance(record, list) else ()
    for key, value in items:
        found.append((*path, key))
        found.extend(sites(value, (*path, key)))
    return found


def strings(record: Any) -> list[str]:
    if isinstance(record, str):
        return [record]
    if isinstance(record, dict):
        return [s for value in record.values() for s in strings(value)] + [k for k in record]
    if isinstance(record, list):
        return [s for value in record for s in strings(value)]
    return []


def mutations(value: Any, pool: list[str], rng: random.Random) -> list[tuple[str, Any]]:
    """``(description, new value)`` candidates for ``value``."""
    if isinstance(value, bool):
        return [("flip", not value)]
    if isinstance(value, int):
        return [
            ("+1", value + 1),
            ("-1", value - 1),
            ("to -1", -1),
            ("to 0", 0),
            ("huge", rng.choice(HUGE)),
        ]
    if isinstance(value, float):
        return [("NaN", math.nan), ("inf", math.inf), ("+1", value + 1.0), ("-1", value - 1.0), ("huge", 1e300)]
    if isinstance(value, str):
        other = rng.choice(pool) if pool else ""
        return [("+x", value + "x"), ("empty", ""), (f"to {other[:20]!r}", other)]
    if value is None:
        return [("to 0", 0), ("to []", []), ("to 'x'", "x")]
    if isinstance(value, list):
        out: list[tuple[str, Any]] = [("emptied", [])]
        if value:
            i = rng.randrange(len(value))
            out.append((f"drop [{i}]", value[:i] + value[i + 1 :]))
            out.append((f"duplicate [{i}]", [*value, value[i]]))
            out.append((f"duplicate [{i}] in place", value[: i + 1] + value[i:]))
            if len(value) >= 2:
                j = rng.randrange(len(value) - 1)
                j += j >= i
                swapped = value[:]
                swapped[i], swapped[j] = swapped[j], swapped[i]
                if swapped != value:
                    out.append((f"swap [{i}] [{j}]", swapped))
        else:
            out.append(("extend by 0", [0]))
        return out
    if isinstance(value, dict):
        if not value:
            return [("add a key", {"x": 0})]
        key = rng.choice(sorted(value))
        return [(f"drop key {key!r}", {k: v for k, v in value.items() if k != key})]
    return []


def _set(record: Any, path: tuple, value: Any) -> Any:
    copy = json.loads(json.dumps(record))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


def _get(record: Any, path: tuple) -> Any:
    for key in path:
        record = record[key]
    return record


def play_to_end(env: TableEnv, rng: np.random.Generator) -> str:
    """``""`` if ``env`` (just restored) renders, round-trips and plays on to a normal end; else what went wrong."""
    env._render_text()
    env._render_view_text(int(rng.integers(env.num_players)))
    text = json.dumps(env.get_state(), allow_nan=False)
    again = TableEnv.from_state(json.loads(text))
    if json.dumps(again.get_state(), allow_nan=False) != text:
        return "get_state after from_state differs"
    space = env.observation_space(env.possible_agents[0])["observation"]
    steps = 0
    while env.agents:
        if steps > MAX_STEPS:
            return f"no end after {MAX_STEPS} steps"
        agent = env.agent_selection
        others = [a for a in env.possible_agents if a != agent]
        for who in (agent, others[int(rng.integers(len(others)))]):
            obs = env.observe(who)["observation"]
            if not space.contains(obs):
                bad = np.flatnonzero((obs < space.low) | (obs > space.high))
                return f"observation of {who} outside the observation space at {bad[:5].tolist()}"
        if _dead(env):
            env.step(None)
        else:
            legal = env.legal_actions()
            if not legal:
                return f"{agent} to act has no legal move (step {steps})"
            env.step(int(rng.choice(legal)))
        steps += 1
    if env.outcome() is None:
        return "no outcome at the end"
    json.dumps(env.get_state(), allow_nan=False)
    return ""


def run(seconds: float, seed: int = 0, per_state: int = 25, progress: bool = False) -> Counts:
    rng = random.Random(seed)
    counts = Counts()
    envs = {i: tableenvs.make_raw(name, **options) for i, (name, options) in enumerate(CONFIGS)}
    deadline = time.monotonic() + seconds
    reported = time.monotonic()
    index = 0
    while time.monotonic() < deadline:
        config = index % len(CONFIGS)
        index += 1
        name, options = CONFIGS[config]
        label = f"{name} {json.dumps(options, sort_keys=True)}"
        record = random_point(name, options, rng)
        counts.states += 1
        env = envs[config]
        try:
            env.set_state(record)
        except Exception as error:  # a valid record refused: broken
            counts.broken.append((label, "", "none (valid record)", f"{type(error).__name__}: {error}"))
            continue
        before = json.dumps(env.get_state())
        pool = sorted(set(strings(record)))
        paths = sites(record)
        for _ in range(per_state):
            if time.monotonic() >= deadline:
                break
            path = rng.choice(paths)
            options_here = mutations(_get(record, path), pool, rng)
            if not options_here:
                continue
            what, value = rng.choice(options_here)
            mutated = _set(record, path, value)
            where = "/".join(map(str, path))
            counts.mutations += 1
            counts.by_game[name] += 1
            try:
                env.set_state(mutated)
            except StateError:
                counts.rejected += 1
                if json.dumps(env.get_state()) != before:
                    counts.broken.append((label, where, what, "a refused record changed the env"))
                continue
            except Exception as error:
                counts.broken.append((label, where, what, f"set_state raised {type(error).__name__}: {error}"))
                continue
            try:
                problem = play_to_end(env, np.random.default_rng(rng.randrange(2**31)))
            except Exception as error:
                problem = f"{type(error).__name__}: {error}"
            if problem:
                counts.broken.append((label, where, what, problem))
            else:
                counts.played += 1
            env.set_state(record)  # back to the valid point for the next mutation
        if progress and time.monotonic() - reported > 30:
            reported = time.monotonic()
            print(f"  ... {counts.line()}", flush=True)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="time budget (default 600)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-state", type=int, default=25, help="mutations of each valid record (default 25)")
    parser.add_argument("--json", type=Path, help="write the counts and every broken case here")
    args = parser.parse_args(argv)
    start = time.monotonic()
    counts = run(args.seconds, args.seed, args.per_state, progress=True)
    print(f"{counts.line()} in {time.monotonic() - start:.0f} s; by game: {dict(counts.by_game)}")
    for label, where, what, problem in counts.broken[:50]:
        print(f"BROKEN {label} at {where or '(record)'}: {what}: {problem}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "states": counts.states,
                    "mutations": counts.mutations,
                    "rejected": counts.rejected,
                    "played_to_end": counts.played,
                    "broken": counts.broken,
                    "by_game": dict(counts.by_game),
                },
                indent=1,
            )
        )
    return 1 if counts.broken else 0


if __name__ == "__main__":
    sys.exit(main())
