"""Fuzzing: long random play over every registered game, player count and a set of option combinations.

Each episode is uniformly random legal play through the wrapped AEC API (``tableenvs.make``) and checks, at
every step:

* the acting agent's action mask is non-empty, ``int8``, 0/1 and of the action space's size;
* its observation has the space's dtype and shape and lies within the space's bounds (``Box.contains``);
* every reward is finite;

and at the end of the episode:

* the game ended (terminated or truncated for every agent, all agents removed) within a bound on decisions
  (exact for Llama Party, from ``max_rounds`` / ``max_turns`` for the others, see :func:`step_bound`);
* the rewards an agent saw through ``last()`` add up to the rewards the env handed out (PettingZoo's contract);
* the totals are what the game guarantees (:func:`check_rewards`): Pili Pili minus the chilis taken (``penalty``)
  or +1 shared by the winners and -1 to the others (``win``, zero if truncated); Llama Party each player's game
  total (``score``) or +/-1 (``win``); Rummikub the engine's scores, which sum to zero.

Every ``--deep-every`` decisions it also runs the game's own invariant checks from the property tests when they
are importable (they need ``hypothesis``, the ``dev`` extra): Pili Pili's card conservation, Llama Party's card
conservation and fresh-encoder observations, Rummikub's 106-tile conservation and, at a fifth of the checks, its
masks and commit checks against fresh public solver calls (``playable``, ``is_valid_play``) and, for an opened
seat, ``solve`` (which reads the engine's recorded sweep at a turn's first decision) against a fresh sweep. And the
first ``--replays`` episodes of every configuration are played again in a separate (spawned) process: same seed, same
hash of the actions and rewards, or it is a violation.

Configurations are visited least-time-first, so every one gets about the same CPU; the run stops starting
episodes after ``--minutes`` or ``--games`` episodes, whichever comes first. Exit code 1 on any violation.

    python benchmarks/fuzz.py [--minutes 30] [--games N] [--seed 0] [--game pilipili_v0] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import signal
import sys
import time
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: tableenvs and the test helpers from this checkout
    sys.path.insert(0, str(ROOT))

import tableenvs  # noqa: E402

#: Option combinations per game (the defaults first); games not listed run their defaults only.
OPTION_SETS: dict[str, list[dict[str, Any]]] = {
    "pilipili_v0": [
        {},
        {"missions": "none"},
        {"expert": False, "reward": "win"},
        {"max_rounds": 3},  # truncation
        {"missions": "none", "reward": "win", "max_rounds": None},
    ],
    "llama_party_v0": [{}, {"reward": "win"}],
    "rummikub_v0": [
        {},
        {"strict_commit": False, "draw_after_play": True},
        {"min_initial": 0, "pool_exhausted": "draw"},
        {"games_per_episode": 2, "min_initial": 45},
        {"max_turns": 40},  # truncation
    ],
}

MAX_MESSAGES = 5  # violations kept per episode


@dataclass(frozen=True)
class Config:
    game: str
    num_players: int | None  # None: the game has no num_players option
    options: tuple[tuple[str, Any], ...]

    def kwargs(self) -> dict[str, Any]:
        extra = {} if self.num_players is None else {"num_players": self.num_players}
        return {**dict(self.options), **extra}

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.options) or "defaults"


@dataclass
class Episode:
    steps: int
    truncated: bool
    digest: str
    violations: list[str]


@dataclass
class Tally:
    episodes: int = 0
    steps: int = 0
    longest: int = 0
    truncated: int = 0
    seconds: float = 0.0
    replays: int = 0
    violations: list[str] = field(default_factory=list)


def player_counts(game: str) -> list[int | None]:
    """Every player count the game accepts (probed 1..12), or ``[None]`` without a ``num_players`` option."""
    if "num_players" not in tableenvs.spec(game).option_names():
        return [None]
    counts = []
    for n in range(1, 13):
        try:
            tableenvs.make_raw(game, num_players=n).close()
        except (ValueError, TypeError):
            continue
        counts.append(n)
    return counts


def configurations(games: list[str]) -> list[Config]:
    return [
        Config(game, n, tuple(sorted(options.items())))
        for game in games
        for n in player_counts(game)
        for options in OPTION_SETS.get(game, [{}])
    ]


def step_bound(raw: Any) -> int:
    """Most decisions an episode may take before it counts as not terminating."""
    name = raw.metadata["name"]
    n = raw.num_players
    if name == "llama_party_v0":  # exact: 4 rounds, each a goal pick and 4 + 3 + 2 + 1 passes per player
        return 4 * n * (1 + 4 + 3 + 2 + 1)
    if name == "pilipili_v0":  # a round is at most a few hundred decisions; a game without max_rounds ends too
        return 400 * (raw.max_rounds or 1000)
    if name == "rummikub_v0":  # every turn ends with a commit or a draw after at most 106 tiles staged
        return raw.game.max_turns * 107
    return 1_000_000


def deep_checks() -> dict[str, Any]:
    """Each game's invariant check from its property tests (``check(raw_env, rng)``), where importable."""
    checks: dict[str, Any] = {}
    sys.path.insert(0, str(ROOT / "tests" / "rummikub"))  # the Rummikub tests import rummikub_support as top-level
    try:
        from tests.pilipili.test_pilipili_properties import check_conservation

        checks["pilipili_v0"] = check_conservation
    except ImportError:
        pass
    try:
        from tests.llama_party.test_llama_party_properties import check_invariants

        checks["llama_party_v0"] = lambda raw, rng: check_invariants(raw)
    except ImportError:
        pass
    try:
        from tableenvs.rummikub.rules import FULL_SET
        from tableenvs.rummikub.solver import is_valid_play, playable, solve
        from tests.rummikub.test_rummikub_env_properties import tiles_in_play
        from tests.rummikub.test_solve_recorded import fresh_solve  # ``solve`` with no recorded sweep to read

        checked = [0]  # deep checks so far: every fifth compares the masks (fresh sweeps are costly)

        def rummikub(raw, rng):
            game = raw.game
            assert np.array_equal(tiles_in_play(game), FULL_SET), "106 tiles not conserved"
            assert (game.staged <= game.racks[game.to_act]).all(), "staged tiles not on the rack"
            checked[0] += 1
            if game.over or game.truncated or checked[0] % 5:
                return
            # the engine's answer (its turn's sweep, asked incrementally) equals fresh public solver calls; ``rng``
            # is the episode's own and stays untouched, so a checked episode plays as an unchecked one
            seat = game.to_act
            rack, staged = game.racks[seat], game.staged
            options = {"opening": not game.opened[seat], "min_initial": game.min_initial}
            stage, commit, _ = game.legal()
            assert np.array_equal(stage, playable(game.table, rack, staged, **options)), "stage mask != playable"
            if game.strict_commit and staged.any():
                assert commit == is_valid_play(game.table, rack, staged, **options), "commit != is_valid_play"
            if game.opened[seat]:  # ``solve`` reads the turn's recorded sweep when staged is its lower bound
                forced = staged if staged.any() else None
                read = solve(game.table, rack, forced=forced)
                fresh = fresh_solve(game.table, rack, forced=forced)
                assert (read is None) == (fresh is None), "solve from the recorded sweep != a fresh solve"
                if read is not None:
                    assert read._choices == fresh._choices, "solve from the recorded sweep != a fresh solve"

        checks["rummikub_v0"] = rummikub
    except ImportError:
        pass
    return checks


_DEEP: dict[str, Any] | None = None


def play_episode(config: Config, seed: int, deep_every: int = 0) -> Episode:
    """One random-play episode of ``config`` dealt from ``seed``, checked as the module docstring says."""
    global _DEEP
    if deep_every and _DEEP is None:
        _DEEP = deep_checks()
    env = tableenvs.make(config.game, **config.kwargs())
    raw = env.unwrapped
    deep = (_DEEP or {}).get(config.game) if deep_every else None
    violations: list[str] = []

    def violation(text: str) -> None:
        if len(violations) < MAX_MESSAGES:
            violations.append(text)

    rng = np.random.default_rng(seed)
    trace = hashlib.blake2b(digest_size=16)
    bound = step_bound(raw)
    steps = 0
    truncated = False
    try:
        env.reset(seed=seed)
        agents = list(env.possible_agents)
        seen = dict.fromkeys(agents, 0.0)  # rewards through last()
        given = dict.fromkeys(agents, 0.0)  # rewards the env handed out, step by step
        obs_space = {a: env.observation_space(a)["observation"] for a in agents}
        num_actions = env.action_space(agents[0]).n
        for agent in env.agent_iter():
            observation, reward, terminated, truncated_now, _ = env.last()
            if not math.isfinite(reward):
                violation(f"step {steps}: {agent}'s reward from last() is {reward}")
            seen[agent] += reward
            if terminated or truncated_now:
                truncated |= bool(truncated_now)
                action = None
            else:
                vector, mask = observation["observation"], observation["action_mask"]
                space = obs_space[agent]
                if vector.dtype != space.dtype or vector.shape != space.shape:
                    violation(f"step {steps}: observation {vector.dtype}{vector.shape}, space {space}")
                elif not space.contains(vector):
                    bad = np.flatnonzero((vector < space.low) | (vector > space.high) | ~np.isfinite(vector))
                    violation(f"step {steps}: observation outside its bounds at index {bad[:5].tolist()}")
                if mask.dtype != np.int8 or mask.shape != (num_actions,) or not np.isin(mask, (0, 1)).all():
                    violation(f"step {steps}: action mask {mask.dtype}{mask.shape} with values {np.unique(mask)}")
                legal = np.flatnonzero(mask)
                if legal.size == 0:
                    violation(f"step {steps}: empty action mask for {agent}, the agent to act")
                    break
                action = int(legal[rng.integers(legal.size)])
                steps += 1
                if deep is not None and steps % deep_every == 0:
                    try:
                        deep(raw, rng)
                    except AssertionError as error:
                        violation(f"step {steps}: game invariant: {' '.join(str(error).split())[:300]}")
            env.step(action)
            rewards = [float(env.rewards.get(a, 0.0)) for a in agents]
            for a, r in zip(agents, rewards, strict=True):
                given[a] += r
            if not all(map(math.isfinite, rewards)):
                violation(f"step {steps}: rewards {rewards}")
            trace.update(np.array([-1 if action is None else action, *rewards], dtype=np.float64).tobytes())
            if steps > bound:
                violation(f"no end after {steps} decisions (bound {bound})")
                break
        else:
            if env.agents:
                violation(f"agent_iter ended with agents left: {env.agents}")
            if not np.allclose([seen[a] for a in agents], [given[a] for a in agents]):
                violation(f"rewards through last() {seen} differ from the rewards handed out {given}")
            for text in check_rewards(raw, np.array([given[a] for a in agents]), truncated):
                violation(text)
    except Exception as error:  # a crash is a violation too; the message names where it happened
        frame = traceback.extract_tb(error.__traceback__)[-1]
        violation(
            f"step {steps}: {type(error).__name__}: {' '.join(str(error).split())[:300]} "
            f"({Path(frame.filename).name}:{frame.lineno})"
        )
    finally:
        env.close()
    return Episode(steps, truncated, trace.hexdigest(), violations)


def check_rewards(raw: Any, totals: np.ndarray, truncated: bool) -> list[str]:
    """What each game guarantees about an episode's reward totals (see the game's docs page)."""
    name, game = raw.metadata["name"], getattr(raw, "game", None)
    mode = getattr(raw, "reward_mode", None)
    if name == "pilipili_v0":
        if mode == "penalty":
            expected = -np.asarray(game.chilis, dtype=float)
        elif truncated:
            expected = np.zeros(raw.num_players)
        else:
            winners = set(game.winners)
            expected = np.array([1 / len(winners) if s in winners else -1.0 for s in range(raw.num_players)])
    elif name == "llama_party_v0":
        if mode == "score":
            expected = np.asarray(game.totals, dtype=float)
        elif len(game.winners) == raw.num_players:
            expected = np.zeros(raw.num_players)
        else:
            expected = np.array([1.0 if s in game.winners else -1.0 for s in range(raw.num_players)])
    elif name == "rummikub_v0":
        expected = np.asarray(game.scores, dtype=float)
        if abs(totals.sum()) > 1e-6:
            return [f"rewards do not sum to zero: {totals.tolist()}"]
    else:
        return []
    if not np.allclose(totals, expected):
        return [f"reward totals {totals.tolist()}, the game guarantees {expected.tolist()}"]
    return []


def replay_digests(jobs: list[tuple[Config, int]]) -> list[str]:
    """Worker entry point: the trace digests of ``(config, seed)`` episodes, played in this (fresh) process."""
    return [play_episode(config, seed).digest for config, seed in jobs]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def episode_seed(base: int, config_index: int, episode: int) -> int:
    return int(np.random.SeedSequence([base, config_index, episode]).generate_state(1)[0])


def run(
    games: list[str],
    *,
    minutes: float,
    max_games: int | None,
    seed: int,
    replays: int,
    deep_every: int,
    progress: bool,
) -> tuple[dict[Config, Tally], float]:
    configs = configurations(games)
    tallies = {config: Tally() for config in configs}
    budget = minutes * 60
    started = time.perf_counter()
    pending: list[tuple[Config, list[tuple[int, str]], Future]] = []
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_sigint)
    bar = None
    try:
        from tqdm import tqdm
    except ImportError:  # the bar is optional (tqdm comes with the eval and train extras)
        progress = False
    if progress:
        bar = tqdm(total=max_games if max_games else round(budget), unit="game" if max_games else "s")
    total = 0
    try:
        while time.perf_counter() - started < budget and (max_games is None or total < max_games):
            index, config = min(enumerate(configs), key=lambda item: tallies[item[1]].seconds)
            tally = tallies[config]
            episode_started = time.perf_counter()
            ep_seed = episode_seed(seed, index, tally.episodes)
            episode = play_episode(config, ep_seed, deep_every)
            tally.seconds += time.perf_counter() - episode_started
            tally.episodes += 1
            tally.steps += episode.steps
            tally.longest = max(tally.longest, episode.steps)
            tally.truncated += episode.truncated
            tally.violations += [f"seed {ep_seed}: {text}" for text in episode.violations]
            if tally.episodes <= replays and not episode.violations:
                job = [(ep_seed, episode.digest)]
                pending.append((config, job, pool.submit(replay_digests, [(config, ep_seed)])))
            total += 1
            if bar is not None:
                bar.n = total if max_games else min(round(time.perf_counter() - started), bar.total)
                bar.set_postfix(
                    episodes=total,
                    steps=sum(t.steps for t in tallies.values()),
                    violations=sum(len(t.violations) for t in tallies.values()),
                    refresh=False,
                )
                bar.refresh()
        for config, jobs, future in pending:
            try:
                digests = future.result()
            except Exception as error:  # e.g. a game registered only in this process
                tallies[config].violations.append(f"replay in another process failed: {type(error).__name__}: {error}")
                continue
            for (ep_seed, digest), again in zip(jobs, digests, strict=True):
                tallies[config].replays += 1
                if again != digest:
                    tallies[config].violations.append(
                        f"seed {ep_seed}: not reproducible across processes (trace {digest} here, {again} there)"
                    )
    except BaseException:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    finally:
        if bar is not None:
            bar.close()
    pool.shutdown()
    return tallies, time.perf_counter() - started


def format_summary(tallies: dict[Config, Tally]) -> str:
    header = ["game", "players", "options", "episodes", "steps", "longest", "truncated", "replayed", "violations"]
    rows = [
        [
            c.game,
            "-" if c.num_players is None else str(c.num_players),
            c.label(),
            str(t.episodes),
            str(t.steps),
            str(t.longest),
            str(t.truncated),
            str(t.replays),
            str(len(t.violations)),
        ]
        for c, t in tallies.items()
    ]
    totals = [sum(int(row[i]) for row in rows) for i in range(3, 9)]
    rows.append(["total", "", "", *(str(v) for v in totals[:2]), "", *(str(v) for v in totals[3:])])
    rows[-1][5] = str(max((t.longest for t in tallies.values()), default=0))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = set(range(3, 9))

    def line(cells):
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in pairs)

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows[:-1]), line(rows[-1])])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="time budget (default 30)")
    parser.add_argument("--games", type=int, default=None, help="stop after this many episodes in all")
    parser.add_argument("--game", action="append", default=None, help="only this game (repeatable); default all")
    parser.add_argument("--seed", type=int, default=0, help="base seed of every episode's seed (default 0)")
    parser.add_argument("--replays", type=int, default=2, help="episodes per configuration replayed in another process")
    parser.add_argument(
        "--deep-every", type=int, default=1, help="run the property tests' invariant checks every N decisions; 0: off"
    )
    parser.add_argument("--json", default=None, help="also write the counts and violations to this JSON file")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    games = args.game or tableenvs.names()
    for game in games:
        tableenvs.spec(game)  # unknown names fail here, listing the valid ones
    if args.minutes <= 0 or (args.games is not None and args.games < 1) or args.replays < 0 or args.deep_every < 0:
        parser.error("--minutes must be > 0, --games >= 1, --replays and --deep-every >= 0")
    deep = deep_checks() if args.deep_every else {}
    print(
        f"fuzzing {', '.join(games)} for up to {args.minutes:g} min"
        + (f" or {args.games} episodes" if args.games else "")
        + f"; game invariant checks from the property tests: {', '.join(sorted(deep)) or 'none importable'}",
        flush=True,
    )
    tallies, seconds = run(
        games,
        minutes=args.minutes,
        max_games=args.games,
        seed=args.seed,
        replays=args.replays,
        deep_every=args.deep_every,
        progress=not args.no_progress,
    )
    print(format_summary(tallies))
    violations = [(c, v) for c, t in tallies.items() for v in t.violations]
    episodes = sum(t.episodes for t in tallies.values())
    steps = sum(t.steps for t in tallies.values())
    print(f"\n{episodes} episodes, {steps} decisions in {seconds:.0f} s; {len(violations)} violation(s)")
    for config, text in violations[:30]:
        print(f"  {config.game} players={config.num_players} {config.label()}: {text}")
    if args.json:
        record = {
            "games": games,
            "minutes": args.minutes,
            "seconds": seconds,
            "seed": args.seed,
            "episodes": episodes,
            "steps": steps,
            "configurations": [
                {
                    "game": c.game,
                    "num_players": c.num_players,
                    "options": dict(c.options),
                    "episodes": t.episodes,
                    "steps": t.steps,
                    "longest": t.longest,
                    "truncated": t.truncated,
                    "replayed": t.replays,
                    "violations": t.violations,
                }
                for c, t in tallies.items()
            ],
        }
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
