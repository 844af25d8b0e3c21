"""Batched engines (``tableenvs.vector``) against the wrapped AEC env and OpenSpiel's C++ games, in one run.

For every game with a batched engine (at its benchmark player count: Pili Pili 5p with the standard missions, Llama
Party 4p, Rummikub 4p): agent-steps per CPU-second (``time.process_time``)
with the observation and the mask of every step, random legal actions picked by a jitted function from the mask
(uniform numbers drawn by numpy for the whole batch), at 256, 1,024 and 4,096 envs, checked and trusted
(``trusted=True`` skips the legality check); the wrapped AEC env (``tableenvs.make``) through its API with random
legal play (``common.random_play``); OpenSpiel's C++ ``oh_hell`` and ``gin_rummy`` played at random through
``legal_actions`` without any observation tensor. Then memory: the process's resident set before and after
``--games`` finished games of the batched engine (it must stay flat: every buffer is preallocated; Rummikub's games,
about 100 steps each with a solver question at every step, are capped at ``MEMORY_GAMES``).

Run: ``python benchmarks/bench_vector.py [--seconds 2] [--games 100000] [--write-docs]`` (``--write-docs`` writes the
table into docs/benchmarks.md between its markers; ``python benchmarks/record.py vector`` runs it so).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
from common import CLOCK, commit_label, finished_on_this_machine, openspiel_random_play, random_play, replace_block

import tableenvs
import tableenvs.vector

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
BEGIN = "<!-- bench_vector: begin (written by benchmarks/bench_vector.py --write-docs) -->"
END = "<!-- bench_vector: end -->"

#: game -> the player count its figures are taken at (the issue's: Pili Pili 5p, Llama Party 4p).
PLAYERS = {"pilipili_v0": 5, "llama_party_v0": 4, "rummikub_v0": 4}
SIZES = (256, 1024, 4096)
OPENSPIEL = ("oh_hell", "gin_rummy")
#: game -> the most games of its memory run (a Rummikub game is about 100 solver-backed steps)
MEMORY_GAMES = {"rummikub_v0": 3_000}
#: game -> its largest batch measured (each Rummikub env keeps its solver's sweep buffers, about 0.5 MB)
MAX_ENVS = {"rummikub_v0": 1024}
#: game -> steps played before measuring, so the batch holds games at every stage (a Rummikub step costs several times
#: more late in a game, on a big table, than at its start; about 100 steps a game)
WARM_STEPS = {"rummikub_v0": 150}


@numba.njit(cache=True)
def pick(mask, uniform, out):  # type: ignore[no-untyped-def]
    """``out[e]``: the legal action of env ``e`` at rank ``floor(uniform[e] * legal count)`` (uniform over legal)."""
    for e in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            count += mask[e, a]
        rank = int(uniform[e] * count)
        for a in range(mask.shape[1]):
            if mask[e, a]:
                if rank == 0:
                    out[e] = a
                    break
                rank -= 1


def batched_rate(name: str, players: int, num_envs: int, trusted: bool, seconds: float) -> tuple[float, float]:
    """(agent-steps per CPU-second of the engine with the picker, the share of that time inside ``step``)."""
    games = tableenvs.vector.make(name, num_envs, num_players=players, trusted=trusted)
    rng = np.random.default_rng(0)
    _, mask = games.reset(0)
    actions = np.zeros(num_envs, np.int64)
    for _ in range(WARM_STEPS.get(name, 1)):  # warm (compiled, caches filled, games at every stage)
        pick(mask, rng.random(num_envs), actions)
        _, mask, _, _, _ = games.step(actions)
    steps = 0
    in_step = 0.0
    start = CLOCK()
    while CLOCK() - start < seconds:
        for _ in range(20):
            pick(mask, rng.random(num_envs), actions)
            before = CLOCK()
            _, mask, _, _, _ = games.step(actions)
            in_step += CLOCK() - before
        steps += 20 * num_envs
    elapsed = CLOCK() - start
    return steps / elapsed, in_step / elapsed


def openspiel_rate(game_name: str, seconds: float) -> float:
    """Decisions per CPU-second of random play of an OpenSpiel game through ``legal_actions``, no tensor."""
    import pyspiel

    return openspiel_random_play(pyspiel.load_game(game_name), seconds, None)


def buffers_mb(name: str, players: int, num_envs: int) -> float:
    """The observation and mask buffers a batch of ``num_envs`` writes every step, in MB."""
    games = tableenvs.vector.make(name, 1, num_players=players)
    return num_envs * (games.obs_size * 4 + games.num_actions) / 2**20


def level2_cache() -> str:
    """The level-2 cache size as Linux reports it (e.g. ``"2048K"``), or ``""``."""
    try:
        return Path("/sys/devices/system/cpu/cpu0/cache/index2/size").read_text().strip()
    except OSError:
        return ""


def random_play_positions(name: str, players: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """40 batches of 1,024 ``(obs, mask)`` positions of ``name`` at ``players``, from random legal play."""
    games = tableenvs.vector.make(name, 1024, num_players=players)
    obs, mask = games.reset(0)
    batches = []
    actions = np.zeros(1024, np.int64)
    for _ in range(40):
        batches.append((obs.copy(), mask.copy()))
        pick(mask, rng.random(1024), actions)
        obs, mask, _, _, _ = games.step(actions)
    return batches


def decisions_rate(batched: Any, batches: list[tuple[np.ndarray, np.ndarray]], seconds: float) -> float:
    """Decisions per CPU-second of ``batched.act(obs, mask)`` over ``batches``, for ``seconds`` CPU seconds."""
    decisions = 0
    start = CLOCK()
    while CLOCK() - start < seconds:
        for o, m in batches:
            batched.act(o, m)
            decisions += len(o)
    return decisions / (CLOCK() - start)


def heuristic_rates(seconds: float) -> tuple[float, float, int, int]:
    """Llama Party 4p heuristic decisions per CPU-second: ``BatchedHeuristic.act`` on batches of 1,024 positions,
    ``HeuristicPolicy.act`` one at a time; then the positions where both chose alike and the positions compared."""
    from tableenvs.llama_party.agents import HeuristicPolicy
    from tableenvs.llama_party.batched_heuristic import BatchedHeuristic

    rng = np.random.default_rng(2)
    batches = random_play_positions("llama_party_v0", 4, rng)
    batched = BatchedHeuristic()
    chosen = [batched.act(o, m) for o, m in batches]
    fast = decisions_rate(batched, batches, seconds)
    python = HeuristicPolicy(tableenvs.make_raw("llama_party_v0", num_players=4))
    decisions = same = 0
    start = CLOCK()
    while CLOCK() - start < seconds:
        b = decisions // 1024 % len(batches)
        o, m = batches[b]
        i = decisions % 1024
        same += int(python.act(o[i], m[i], rng) == chosen[b][i])
        decisions += 1
    return fast, decisions / (CLOCK() - start), same, decisions


def pilipili_heuristic_rates(seconds: float) -> tuple[float, float, int, int]:
    """Pili Pili 5p (standard missions) heuristic decisions per CPU-second: ``BatchedHeuristic.act`` on batches of
    1,024 positions, ``HeuristicPolicy.act`` one at a time; then, untimed, the positions where both chose alike (row
    ``i`` of a batch and the Python policy given ``default_rng(i)``, for the designate and memorise draws) and the
    positions compared."""
    from tableenvs.pilipili.agents import HeuristicPolicy
    from tableenvs.pilipili.batched_heuristic import BatchedHeuristic

    rng = np.random.default_rng(2)
    batches = random_play_positions("pilipili_v0", 5, rng)
    batched = BatchedHeuristic(5, 1024)
    batched.act(*batches[0])
    fast = decisions_rate(batched, batches, seconds)
    python = HeuristicPolicy(tableenvs.make_raw("pilipili_v0", num_players=5))
    decisions = 0
    start = CLOCK()
    while CLOCK() - start < seconds:
        o, m = batches[decisions // 1024 % len(batches)]
        i = decisions % 1024
        python.act(o[i], m[i], rng)
        decisions += 1
    slow = decisions / (CLOCK() - start)
    same = compared = 0
    for o, m in batches[::4]:
        batched.seed(0)
        chosen = batched.act(o, m)
        same += sum(python.act(o[i], m[i], np.random.default_rng(i)) == chosen[i] for i in range(len(o)))
        compared += len(o)
    return fast, slow, int(same), compared


def rummikub_heuristic_rates(seconds: float) -> dict[str, float]:
    """Rummikub 4p heuristic decisions per CPU-second, ``BatchedHeuristic`` against ``HeuristicPolicy``.

    Self-play (plans kept within a turn, as in play): 1,024 batched envs with the batched heuristic in every seat,
    after ``WARM_STEPS`` steps, timing ``act`` alone and the whole loop (``act`` + ``step``); the AEC env with the
    Python heuristic in every seat, timing ``act`` alone and the whole loop (``observe`` + ``act`` + ``step``).
    New questions: 40 batches of 1,024 positions of play half heuristic, half random (after ``WARM_STEPS``), every
    position asked afresh (``forget()`` before each batch; the Python policy's plan cache emptied before each row);
    then the CPU time per new plan of the batched heuristic on those positions by table size (under 30 tiles, 30-49,
    50 or more) and, untimed, the positions where both chose alike and the positions compared."""
    from tableenvs.rummikub.agents import HeuristicPolicy
    from tableenvs.rummikub.batched_heuristic import BatchedHeuristic
    from tableenvs.rummikub.encoder import LAYOUT
    from tableenvs.rummikub.tiles import NUM_TILES, TILE_TYPES

    name, players, size = "rummikub_v0", 4, 1024
    table_at = LAYOUT.TABLE
    warm = WARM_STEPS[name]
    figures: dict[str, float] = {}
    games = tableenvs.vector.make(name, size, num_players=players, trusted=True)
    heuristic = tableenvs.vector.batched_heuristic(games)
    envs = np.arange(size, dtype=np.int64)
    obs, mask = games.reset(0)
    for _ in range(warm):
        obs, mask, _, _, _ = games.step(heuristic.act(obs, mask, envs))
    acting = stepping = decisions = 0.0
    while acting + stepping < seconds:
        start = CLOCK()
        actions = heuristic.act(obs, mask, envs)
        middle = CLOCK()
        obs, mask, _, _, _ = games.step(actions)
        acting, stepping, decisions = acting + middle - start, stepping + CLOCK() - middle, decisions + size
    figures["batched_act"], figures["batched_loop"] = decisions / acting, decisions / (acting + stepping)
    raw = tableenvs.make_raw(name, num_players=players)
    python = HeuristicPolicy(raw)
    rng = np.random.default_rng(2)
    acting = whole = decisions = 0.0
    seed = 0
    while whole < seconds:
        raw.reset(seed=seed)
        seed += 1
        while not (raw.terminations[raw.agent_selection] or raw.truncations[raw.agent_selection]):
            start = CLOCK()
            seen = raw.observe(raw.agent_selection)
            middle = CLOCK()
            action = python.act(seen["observation"], seen["action_mask"], rng)
            end = CLOCK()
            raw.step(action)
            acting, whole, decisions = acting + end - middle, whole + CLOCK() - start, decisions + 1
    figures["python_act"], figures["python_loop"] = decisions / acting, decisions / whole
    obs, mask = games.reset(1)
    batches = []
    for step in range(warm + 40):
        if step >= warm:
            batches.append((obs.copy(), mask.copy()))
        chosen = heuristic.act(obs, mask, envs)
        pick(mask, rng.random(size), actions)
        obs, mask, _, _, _ = games.step(np.where(rng.random(size) < 0.5, chosen, actions))
    fresh = BatchedHeuristic(size)
    decisions = 0
    start = CLOCK()
    while CLOCK() - start < seconds:
        for o, m in batches:
            fresh.forget()
            fresh.act(o, m)
            decisions += size
    figures["batched_new"] = decisions / (CLOCK() - start)
    figures["solved"] = fresh.solves / decisions
    decisions = 0
    start = CLOCK()
    while CLOCK() - start < seconds:
        o, m = batches[decisions // size % len(batches)]
        python._key = None
        python.act(o[decisions % size], m[decisions % size], rng)
        decisions += 1
    figures["python_new"] = decisions / (CLOCK() - start)
    seen = np.concatenate([o for o, _ in batches])
    masks = np.concatenate([m for _, m in batches])
    tiles = seen[:, table_at : table_at + TILE_TYPES].sum(axis=1)
    for label, low, high in (("small", 0, 30), ("middle", 30, 50), ("big", 50, NUM_TILES + 1)):
        chosen_rows = np.flatnonzero((tiles >= low) & (tiles < high))
        solved = fresh.solves
        start = CLOCK()
        for first in range(0, len(chosen_rows), size):
            part = chosen_rows[first : first + size]
            fresh.forget()
            fresh.act(seen[part], masks[part])
        figures[f"plan_us_{label}"] = 1e6 * (CLOCK() - start) / max(1, fresh.solves - solved)
    same = compared = 0
    for o, m in batches[::4]:
        fresh.forget()
        chosen = fresh.act(o, m)
        for i in range(size):
            python._key = None
            same += int(python.act(o[i], m[i], rng) == chosen[i])
        compared += size
    figures["same"], figures["compared"] = same, compared
    return figures


def rss_mb() -> float:
    """The process's resident set now, in MB (``/proc/self/status``)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def memory_over_games(name: str, players: int, games_wanted: int, num_envs: int = 1024) -> tuple[float, float, int]:
    """RSS (MB) after the first finished game of every env and after ``games_wanted`` games; games played."""
    games = tableenvs.vector.make(name, num_envs, num_players=players, trusted=True)
    rng = np.random.default_rng(1)
    _, mask = games.reset(0)
    actions = np.zeros(num_envs, np.int64)
    finished = 0
    before = None
    next_report = games_wanted // 4
    while finished < games_wanted:
        pick(mask, rng.random(num_envs), actions)
        _, mask, _, terminated, truncated = games.step(actions)
        finished += int(terminated.sum() + truncated.sum())
        if before is None and finished >= num_envs:
            before = rss_mb()
        if finished >= next_report:
            print(f"  memory run: {finished:,} games", file=sys.stderr, flush=True)
            next_report += games_wanted // 4
    return before or rss_mb(), rss_mb(), finished


def rummikub_heuristic_lines(seconds: float) -> list[str]:
    """:func:`rummikub_heuristic_rates` as the lines of the benchmark's report."""
    f = rummikub_heuristic_rates(seconds)
    return [
        f"Rummikub 4p heuristic, self-play (plans kept within a turn): BatchedHeuristic {f['batched_act']:,.0f} "
        f"decisions per CPU-second (1,024 envs), HeuristicPolicy {f['python_act']:,.0f} in the AEC env "
        f"({f['batched_act'] / f['python_act']:.1f}x); the whole loop (engine and heuristic) {f['batched_loop']:,.0f} "
        f"against {f['python_loop']:,.0f} agent-steps per CPU-second ({f['batched_loop'] / f['python_loop']:.1f}x).",
        f"Rummikub 4p heuristic, every position a new question: BatchedHeuristic {f['batched_new']:,.0f} decisions "
        f"per CPU-second (batches of 1,024, {f['solved']:.0%} of the rows solved), HeuristicPolicy "
        f"{f['python_new']:,.0f} ({f['batched_new'] / f['python_new']:.1f}x); the same choice on {f['same']:,.0f} of "
        f"{f['compared']:,.0f} positions. CPU per new plan (batched): {f['plan_us_small']:,.0f} µs on tables of "
        f"under 30 tiles, {f['plan_us_middle']:,.0f} µs on 30-49, {f['plan_us_big']:,.0f} µs on 50 or more.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per measured row")
    parser.add_argument("--games", type=int, default=100_000, help="finished games of the memory run")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="batch sizes, comma-separated")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    parser.add_argument(
        "--rummikub-heuristic", action="store_true", help="only the Rummikub heuristic's rates (printed, no docs)"
    )
    args = parser.parse_args()
    if args.rummikub_heuristic:
        print("\n".join(rummikub_heuristic_lines(args.seconds)))
        return
    load = os.getloadavg()[0]
    sizes = [int(x) for x in args.sizes.split(",")]
    names = tableenvs.vector.batched_names()
    lines = [
        "| what | agent-steps per CPU-s | vs wrapped env | vs OpenSpiel oh_hell | share in step() | obs + mask MB |"
    ]
    lines.append("|---|---:|---:|---:|---:|---:|")
    peers = {game: openspiel_rate(game, args.seconds) for game in OPENSPIEL}
    oh_hell = peers["oh_hell"]
    best: dict[str, float] = {}
    memory = []
    for name in names:
        players = PLAYERS.get(name, 4)
        random_play(tableenvs.make(name, num_players=players), 0.5)  # warm: compiled code loaded, caches filled
        wrapped = random_play(tableenvs.make(name, num_players=players), args.seconds).steps_per_second
        lines.append(f"| {name} {players}p, wrapped AEC env (`tableenvs.make`) | {wrapped:,.0f} | 1.00x | "
                     f"{wrapped / oh_hell:.2f}x | | |")  # fmt: skip
        for num_envs in [size for size in sizes if size <= MAX_ENVS.get(name, size)]:
            for trusted in (False, True):
                rate, share = batched_rate(name, players, num_envs, trusted, args.seconds)
                best[name] = max(best.get(name, 0.0), rate)
                mode = "trusted" if trusted else "checked"
                lines.append(
                    f"| {name} {players}p, batched, {num_envs:,} envs, {mode} | {rate:,.0f} | {rate / wrapped:.1f}x | "
                    f"{rate / oh_hell:.1f}x | {share:.0%} | {buffers_mb(name, players, num_envs):.1f} |"
                )
                print(lines[-1], file=sys.stderr, flush=True)
        wanted = min(args.games, MEMORY_GAMES.get(name, args.games))
        memory.append((name, players, *memory_over_games(name, players, wanted)))
    for game, rate in peers.items():
        lines.append(f"| OpenSpiel {game} (C++, default players), random play, no tensor | {rate:,.0f} | | "
                     f"{rate / oh_hell:.2f}x | | |")  # fmt: skip
    lines.append("")
    l2 = level2_cache()
    if l2:
        lines.append(
            f"Level-2 cache: {l2} per core (the last column: what a batch writes every step, a whole observation "
            "per env, to compare with it)."
        )
    for name, rate in best.items():
        lines.append(f"Best batched {name} {PLAYERS.get(name, 4)}p: {rate:,.0f} agent-steps per CPU-second.")
    if "llama_party_v0" in names:
        fast, slow, same, compared = heuristic_rates(args.seconds)
        lines.append(
            f"Llama Party 4p heuristic: BatchedHeuristic {fast:,.0f} decisions per CPU-second (batches of 1,024), "
            f"HeuristicPolicy {slow:,.0f} ({fast / slow:.0f}x); the same choice on {same:,} of {compared:,} positions."
        )
    if "pilipili_v0" in names:
        fast, slow, same, compared = pilipili_heuristic_rates(args.seconds)
        lines.append(
            f"Pili Pili 5p heuristic: BatchedHeuristic {fast:,.0f} decisions per CPU-second (batches of 1,024), "
            f"HeuristicPolicy {slow:,.0f} ({fast / slow:.0f}x); the same choice on {same:,} of {compared:,} positions."
        )
    if "rummikub_v0" in names:
        lines.extend(rummikub_heuristic_lines(args.seconds))
    for name, players, before, after, finished in memory:
        lines.append(
            f"Memory, {name} {players}p at 1,024 envs: resident set {before:,.1f} MB after the first 1,024 games, "
            f"{after:,.1f} MB after {finished:,} games ({after - before:+.1f} MB)."
        )
    text = "\n".join(lines)
    print(text)
    if args.write_docs:
        command = f"python benchmarks/bench_vector.py --seconds {args.seconds:g} --games {args.games}"
        stamp = (
            f"`{command}`, commit {commit_label(':/', ':!/docs')}, {finished_on_this_machine(load)}. CPU time of "
            "this process (`time.process_time`); batched rows include picking the random legal actions (a jitted "
            "function over the mask), the share in step() is the engine's part."
        )
        replace_block(DOCS, BEGIN, END, f"{stamp}\n\n{text}")


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f} s wall)", file=sys.stderr)
