"""``evaluate(engine=...)`` and ``tableenvs eval --engine``: on the batched engine a tournament gives the AEC path's
records (same deals, seatings, per-game scores, winners, decisions; so the same tables) for deterministic players
and for ``random``; ``auto`` picks the batched engine only when that holds; ``batched`` when not possible is a
one-line error naming what cannot be batched. Games are found through their specs (every game with a batched
engine and a batched heuristic), so a game that gains one is tested here too."""

from __future__ import annotations

import pytest

import tableenvs
import tableenvs.vector
from tableenvs.core.registry import spec
from tableenvs.evaluation import evaluate
from tableenvs.policies.numpy_policy import load_numpy_policy, model_files, random_numpy_policy

WITH_HEURISTIC = [name for name in tableenvs.vector.batched_names() if spec(name).batched_heuristic is not None]


def model_for(name: str, players: int, tmp_path) -> str:
    """``"trained"`` when a shipped model is made for ``players`` and can be batched (it reads only the observation,
    or it scores candidates the game's spec names batched candidates for), else a random-weight file for them."""
    for path in model_files(name):
        model = load_numpy_policy(path)
        batchable = not model.candidates or model.candidates in spec(name).batched_candidates
        if model.options.get("num_players") == players and batchable:
            return "trained"
    return str(random_numpy_policy(tmp_path / f"{name}-{players}p.npz", tableenvs.make_raw(name, num_players=players)))


def table_without_notes(result) -> str:
    return "\n".join(line for line in result.format_table().splitlines() if "engine" not in line)


def shipped_counts(name: str) -> set[int]:
    """The player counts of the game's shipped models."""
    return {int(load_numpy_policy(path).options["num_players"]) for path in model_files(name)}


# 3 and 4 players, and each shipped model's own count (Pili Pili's 5 players: its whole model, its expert missions)
CASES = [(name, players) for name in WITH_HEURISTIC for players in sorted({3, 4} | shipped_counts(name))]


@pytest.mark.parametrize("name, players", CASES, ids=[f"{n}-{p}p" for n, p in CASES])
def test_batched_tournaments_equal_the_aec_path(name, players, tmp_path, monkeypatch):
    import tableenvs.evaluation.batched as batched_path

    engine = type(tableenvs.vector.make(name, 1, num_players=players))
    replayed, real = [], batched_path._replayed
    monkeypatch.setattr(batched_path, "_replayed", lambda *args: replayed.append(args[1]) or real(*args))
    waited: list[int] = []  # an engine with step_rows: how many rows were stepped while others had ended
    if hasattr(engine, "step_rows"):
        step_rows = engine.step_rows
        monkeypatch.setattr(engine, "step_rows", lambda self, rows, actions: waited.append(len(rows)) or
                            step_rows(self, rows, actions))  # fmt: skip
    model = model_for(name, players, tmp_path)
    for specs, games in (([model, "heuristic"], 24), ([model, "heuristic", "random"], 12)):
        kwargs = {"num_players": players, "games": games, "seed": 11}
        aec = evaluate(name, specs, engine="aec", **kwargs)
        batched = evaluate(name, specs, engine="batched", **kwargs)
        auto = evaluate(name, specs, **kwargs)
        assert batched.records == aec.records  # every game: seating, rewards, scores, winners, ranks, decisions
        assert auto.records == aec.records and any("batched engine" in note for note in auto.notes)
        assert table_without_notes(batched) == table_without_notes(aec)
        # games that differ, not one repeated: more distinct results than deals (a model that plays as the heuristic
        # on a deal, as Llama Party's 2-player search clone does on some, gives its seatings of that deal one result)
        assert len({record.scores for record in aec.records}) > len({record.block for record in aec.records})
    # an engine that keeps its games' results (last_results) gives them: no game is replayed in the AEC env
    assert bool(replayed) != hasattr(engine, "last_results"), len(replayed)
    assert bool(waited) == hasattr(engine, "step_rows")


def test_gauntlets_and_unduplicated_deals_equal_the_aec_path():
    name = WITH_HEURISTIC[0]
    kwargs = {"num_players": 3, "games": 12, "seed": 4, "opponents": "random"}
    aec = evaluate(name, ["heuristic", "random"], engine="aec", duplicate=False, **kwargs)
    assert evaluate(name, ["heuristic", "random"], engine="batched", duplicate=False, **kwargs).records == aec.records


def test_an_engine_without_results_replays_the_games_in_the_aec_env(monkeypatch):
    """An engine that keeps no results of ended games (no ``last_results``; here one with it taken away): its
    records come from replaying each game's actions in the AEC env, and equal the AEC path's (random players,
    drawing from the AEC path's seat generators)."""
    import tableenvs.evaluation.batched as batched

    name = WITH_HEURISTIC[0]
    monkeypatch.delattr(type(tableenvs.vector.make(name, 1)), "last_results", raising=False)
    replayed, real = [], batched._replayed
    monkeypatch.setattr(batched, "_replayed", lambda *args: replayed.append(args[1]) or real(*args))
    kwargs = {"num_players": 3, "games": 12, "seed": 2}
    aec = evaluate(name, ["random", "random", "random"], engine="aec", **kwargs)
    assert evaluate(name, ["random", "random", "random"], engine="batched", **kwargs).records == aec.records
    assert len(replayed) == 12  # every game was replayed


def test_auto_keeps_the_aec_path_where_batched_would_differ_or_cannot_be(tmp_path):
    name = WITH_HEURISTIC[0]
    path = random_numpy_policy(tmp_path / "m.npz", tableenvs.make_raw(name, num_players=3), seed=2)
    sampled = evaluate(name, [str(path), "random", "random"], num_players=3, games=6, deterministic=False)
    assert not any("batched engine" in note for note in sampled.notes)  # sampled: another stream on the batched engine
    assert evaluate(name, [str(path), "random", "random"], num_players=3, games=6, deterministic=False,
                    engine="batched").games == 6  # fmt: skip
    searched = evaluate(name, ["search:sims=2", "random"], num_players=2, games=2)
    assert not any("batched engine" in note for note in searched.notes)
    no_engine = [n for n in tableenvs.names() if spec(n).batched is None and spec(n).builtin]
    for bad, specs, why in (
        (name, ["search:sims=2", "random"], "policy #1 .*has no batched player"),
        *((other, ["random", "random"], f"{other} has no batched engine") for other in no_engine[:1]),
    ):
        with pytest.raises(ValueError, match=f"engine 'batched' is not possible: {why}") as error:
            evaluate(bad, specs, num_players=2, games=2, engine="batched")
        assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="engine must be one of 'auto', 'aec', 'batched'"):
        evaluate(name, ["random", "random"], games=2, engine="fast")


def test_the_command_line_flag(cli, tmp_path):
    name = WITH_HEURISTIC[0]
    argv = ["eval", name, "--policies", "heuristic,random", "--players", "3", "--games", "6", "--no-plot"]
    code, out, err = cli([*argv, "--no-progress", "--engine", "batched", "--out", str(tmp_path / "b")])
    assert code == 0 and "batched engine" in out
    code, out, err = cli([*argv, "--no-progress", "--policies", "search:sims=2,random", "--engine", "batched",
                          "--out", str(tmp_path / "s")])  # fmt: skip
    assert code == 2 and "engine 'batched' is not possible: policy #1 (search:sims=2)" in err
    assert not (tmp_path / "s" / "results.json").exists()


def test_a_model_saved_again_is_played_anew(tmp_path):
    """The batched path keeps its engine and players between batches of the same tournament, but a model file
    written again at the same path is loaded again (as the AEC path does)."""
    name = WITH_HEURISTIC[0]
    raw = tableenvs.make_raw(name, num_players=3)
    path = tmp_path / "m.npz"
    kwargs = {"num_players": 3, "games": 6, "seed": 1}
    for seed in (1, 2):
        random_numpy_policy(path, raw, seed=seed)
        aec = evaluate(name, [str(path), "heuristic", "random"], engine="aec", **kwargs)
        assert evaluate(name, [str(path), "heuristic", "random"], engine="batched", **kwargs).records == aec.records


def test_a_player_given_its_seat_generators_as_numpy_generators_draws_the_same(monkeypatch):
    """A drawing player without ``seat_states`` gets numpy Generators in the seats' states
    (``seat_generators``): the same records."""
    from tableenvs.vector.players import BatchedRandomPolicy

    name = WITH_HEURISTIC[0]
    monkeypatch.delattr(BatchedRandomPolicy, "seat_states")
    kwargs = {"num_players": 3, "games": 6, "seed": 3}
    aec = evaluate(name, ["random", "random", "random"], engine="aec", **kwargs)
    assert evaluate(name, ["random", "random", "random"], engine="batched", **kwargs).records == aec.records
