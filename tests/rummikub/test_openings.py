"""Rummikub's candidate openings (tableenvs.rummikub.openings) and candidate-scoring models that choose among them
(a numpy policy file naming ``candidates``; tableenvs.training.scorer_recipes trains one).

Every candidate is a legal opening worth the opening points, the candidates are read from the seat's observation
alone, a candidate-scoring model plays only legal actions through whole games (greedy and sampled), chooses the
opening its scores prefer, and a file that names candidates wrongly is refused in one line.
"""

import numpy as np
import pytest
from game_positions import heuristic_decisions

import tableenvs
from tableenvs.core.layout import layout_version
from tableenvs.policies import play_game
from tableenvs.policies.model_env import model_options
from tableenvs.policies.model_file import load_numpy_policy, save_numpy_policy
from tableenvs.policies.numpy_policy import NumpyPolicy
from tableenvs.rummikub.agents import HeuristicPolicy
from tableenvs.rummikub.encoder import LAYOUT
from tableenvs.rummikub.openings import FEATURES, OpeningChoices, smaller_openings
from tableenvs.rummikub.solver import is_valid_play, solve
from tableenvs.rummikub.tiles import TILE_VALUES, tile_type
from tableenvs.training.scorer_recipes import scorer, train_scorer


def opening_positions(count, players=4):
    """``count`` (observation, mask, rack, table) of seats that could open, from heuristic games."""

    def could_open(observation, mask):
        _, staged, _, opened = HeuristicPolicy.read(observation)
        return not opened and not staged.any() and mask[: len(TILE_VALUES)].any()

    found = []
    for observation, mask in heuristic_decisions(count, players, keep=could_open):
        rack, _, table, _ = HeuristicPolicy.read(observation)
        found.append((observation, mask, rack, table))
    return found


POSITIONS = opening_positions(40)


def test_every_candidate_is_a_legal_opening_worth_the_opening_points_and_the_solvers_two_are_among_them():
    sizes = []
    for _, _, rack, table in POSITIONS:
        openings = smaller_openings(table, rack, 30)
        plays = {play.tobytes() for play, _ in openings}
        assert len(plays) == len(openings)  # no duplicates
        for play, points in openings:
            assert points >= 30 and np.all(play <= rack)
            assert is_valid_play(table, rack, play, opening=True, min_initial=30)
        for objective in ("value", "tiles"):
            best = solve(table, rack, objective=objective, opening=True, min_initial=30)
            assert np.asarray(best.played).tobytes() in plays
        sizes.append(len(openings))
    assert max(sizes) > 1  # there are choices to make


def test_a_smaller_opening_keeps_a_joker_and_counts_it_as_the_number_it_stands_for():
    rack = np.zeros(53, np.int64)
    for colour, number in ((0, 11), (0, 12), (0, 13), (1, 1), (1, 2), (1, 3)):
        rack[tile_type(colour, number)] += 1
    rack[52] = 1  # a joker beside them
    openings = smaller_openings(np.zeros(53, np.int64), rack, 30)
    counts = sorted((int(play.sum()), points) for play, points in openings)
    # the solver's opening is the run joker(10)-11-12-13 (46) and red 1-2-3; the smallest keep one run of three
    assert counts[0][0] == 3 and {(3, 33), (3, 36)} <= set(counts)  # joker-11-12 (the joker a 10), or 11-12-13
    assert (7, 52) in counts and all(points >= 30 for _, points in counts)


def test_the_candidates_are_read_from_the_observation_alone():
    raw = tableenvs.make_raw("rummikub_v0")
    for observation, mask, _, _ in POSITIONS[:10]:
        first, again = OpeningChoices(raw), OpeningChoices(raw)
        features, actions = first(observation, mask)
        assert features.shape == (len(actions), len(FEATURES)) and features.dtype == np.float32
        assert np.all(mask[actions] == 1)
        same_features, same_actions = again(observation.copy(), mask.copy())
        assert np.array_equal(features, same_features) and np.array_equal(actions, same_actions)


def candidate_model(path, env, weights):
    raw = env.unwrapped
    return save_numpy_policy(
        path,
        game="rummikub_v0",
        options=model_options(raw),
        layout_version=layout_version(raw),
        weights=[(np.asarray(weights, np.float32).reshape(-1, 1), np.zeros(1))],
        activation="relu",
        candidates="rummikub_openings_v1",
    )


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("deterministic", [True, False])
def test_a_candidate_scoring_model_plays_whole_games_legally(tmp_path, players, deterministic):
    raw = tableenvs.make_raw("rummikub_v0", num_players=players)
    path = candidate_model(tmp_path / "m.npz", raw, np.random.default_rng(1).normal(size=len(FEATURES)))
    policy = NumpyPolicy(path, raw, deterministic=deterministic)
    for seed in range(3):  # play_game raises on an illegal action
        totals, decisions = play_game(raw, [policy] * players, seed=seed, rng=np.random.default_rng(seed))
        assert decisions > 0 and raw.outcome() is not None and totals.sum() == 0


def test_the_model_opens_with_the_candidate_its_scores_prefer(tmp_path):
    raw = tableenvs.make_raw("rummikub_v0")
    fewest = scorer(raw, -np.eye(len(FEATURES))[0])  # weight -1 on the tiles played: the smallest opening
    most = scorer(raw, np.eye(len(FEATURES))[0])
    chose_differently = 0
    for observation, mask, rack, table in POSITIONS:
        openings = smaller_openings(table, rack, 30)
        tiles = [int(play.sum()) for play, _ in openings]
        for policy, wanted in ((fewest, min(tiles)), (most, max(tiles))):
            played, obs, staged = None, observation.copy(), np.zeros(53, np.int64)
            # follow the policy's staging until it commits: the candidates it stays on all hold `wanted` tiles
            for _ in range(20):
                action = policy.act(obs, mask, np.random.default_rng(0))
                if action >= 53:
                    played = staged
                    break
                staged[action] += 1
                obs = obs.copy()
                obs[LAYOUT.STAGED : LAYOUT.STAGED + 53] = staged
                mask = mask.copy()
                mask[53] = 1  # the commit is judged here by the tiles staged, not the env
            assert played is not None and int(played.sum()) == wanted
        chose_differently += min(tiles) != max(tiles)
    assert chose_differently > 0


def test_a_file_naming_candidates_wrongly_is_refused_in_one_line(tmp_path):
    raw = tableenvs.make_raw("rummikub_v0")
    good = load_numpy_policy(candidate_model(tmp_path / "good.npz", raw, np.ones(len(FEATURES))))
    common = dict(
        game="rummikub_v0", options=good.options, layout_version=good.layout_version, activation="relu",
    )  # fmt: skip
    one = [(np.ones((len(FEATURES), 1)), np.zeros(1))]
    cases = [
        (dict(weights=one, candidates="nope_v1"), "candidates must be one of rummikub_openings_v1, .*, got 'nope_v1'"),
        (dict(weights=[(np.ones((len(FEATURES), 2)), np.zeros(2))], candidates="rummikub_openings_v1"),
         "has num_actions 1, got 2"),
        (dict(weights=one, candidates="rummikub_openings_v1", input_features="rummikub_turn_plans_v1"),
         "reads no input_features"),
    ]  # fmt: skip
    for index, (extra, message) in enumerate(cases):
        with pytest.raises(ValueError, match=message) as caught:
            save_numpy_policy(tmp_path / f"bad{index}.npz", **common, **extra)
        assert "\n" not in str(caught.value)
    wrong_size = save_numpy_policy(
        tmp_path / "size.npz", **common, weights=[(np.ones((4, 1)), np.zeros(1))], candidates="rummikub_openings_v1"
    )
    with pytest.raises(ValueError, match=r"scores candidates of 4 features but its candidates .* give 9"):
        NumpyPolicy(wrong_size, raw)
    with pytest.raises(ValueError, match="give the env it plays"):
        NumpyPolicy(good)
    llama = tableenvs.make_raw("llama_party_v0")
    with pytest.raises(ValueError, match="wrong game: it was made for rummikub_v0, not llama_party_v0"):
        NumpyPolicy(good, llama)


def test_the_openings_recipe_writes_a_model_and_its_curve_and_continues_a_run(tmp_path):
    lines = []
    model = train_scorer(
        "rummikub_v0", tmp_path, generations=1, population=2, elite=1, games=8, workers=1, say=lines.append
    )
    header = load_numpy_policy(model).header()
    assert header["candidates"] == "rummikub_openings_v1" and header["meta"]["recipe"] == "openings"
    assert "generation 1/1" in lines[0]
    again = []
    train_scorer(
        "rummikub_v0", tmp_path, generations=2, population=2, elite=1, games=8, workers=1, say=again.append
    )
    assert len(again) == 2 and "generation 2/2" in again[0]  # the first generation was not played again
    progress = (tmp_path / "progress.jsonl").read_text().splitlines()
    assert len(progress) == 2
    with pytest.raises(ValueError, match="holds a run with other settings"):
        train_scorer("rummikub_v0", tmp_path, generations=3, population=3, elite=1, games=8, workers=1)
    with pytest.raises(ValueError, match="elite must be below population"):
        train_scorer("rummikub_v0", tmp_path / "x", population=2, elite=2)


@pytest.mark.parametrize("recipe, least", [("openings", 24000), ("holding", 12000)])
@pytest.mark.parametrize(
    "flags, said",
    [
        (["llama_party_v0"], "--recipe {recipe}: llama_party_v0 has no such recipe; its recipes: strong, search-clone"),
        (["rummikub_v0", "--timesteps", "10"], "--timesteps (games, with --recipe {recipe}) must be at least {least}"),
        (["rummikub_v0", "--label-games", "3"], "--recipe {recipe} does not take --label-games"),
        (["rummikub_v0", "--opponents", "heuristic"], "--recipe {recipe} does not take --opponents"),
    ],
)
def test_the_cem_recipes_on_the_command_line_refuse_what_they_do_not_read(flags, said, recipe, least, tmp_path, capsys):
    from tableenvs.cli import main

    code = main(["train", *flags, "--recipe", recipe, "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and said.format(recipe=recipe, least=least) in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()
