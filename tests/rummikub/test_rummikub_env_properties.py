"""Property tests over random Rummikub games: conservation, valid tables, masks, scores, hidden information."""

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rummikub_support import check_arrangement

from tableenvs.rummikub.encoder import COMMIT, DRAW, OBSERVATION_SIZE, Encoder
from tableenvs.rummikub.env import raw_env
from tableenvs.rummikub.rules import FULL_SET, rack_total
from tableenvs.rummikub.solver import is_valid_play, playable
from tableenvs.rummikub.tiles import TILE_TYPES

OPTIONS = st.fixed_dictionaries(
    {
        "num_players": st.sampled_from([2, 3, 4]),
        # failed plays grow the racks, and big racks with jokers are the solver's slowest positions: 1 in 4
        "strict_commit": st.sampled_from([True, True, True, False]),
        "draw_after_play": st.booleans(),
        "pool_exhausted": st.sampled_from(["lowest_rack", "draw"]),
        "games_per_episode": st.sampled_from([1, 1, 2]),
        "min_initial": st.sampled_from([30, 30, 0, 45]),
        "end_on_empty_pool": st.sampled_from([False, False, True]),
    }
)


def tiles_in_play(game) -> np.ndarray:
    pool = np.bincount(game.pool[game._drawn :], minlength=TILE_TYPES)
    return game.racks.sum(axis=0) + game.table + pool


def hidden_shuffle(game, seat: int, rng: np.random.Generator):
    """A copy of ``game`` with every tile hidden from ``seat`` (other racks, the pool) dealt anew, sizes kept."""
    other = copy.deepcopy(game)
    n = game.num_players
    others = [s for s in range(n) if s != seat]
    pool_left = game.pool[game._drawn :]
    hidden = np.concatenate([np.repeat(np.arange(TILE_TYPES), game.racks[s]) for s in others] + [pool_left])
    hidden = rng.permutation(hidden)
    start = 0
    for s in others:
        size = int(game.racks[s].sum())
        other.racks[s] = np.bincount(hidden[start : start + size], minlength=TILE_TYPES)
        start += size
    other.pool = hidden[start:]
    other._drawn = 0
    other._legal = None
    if game.to_act != seat:
        other.staged[:] = 0  # the actor's staging is hidden too
    return other


MAX_TURNS = 60  # random games mostly end within 40 turns; the cap bounds the slow late-game positions


def play(options, seed, check):
    """Play one random episode through the raw env, calling ``check(env, rng)`` after every step."""
    e = raw_env(**options, max_turns=MAX_TURNS)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed + 1)
    rewards = dict.fromkeys(e.possible_agents, 0.0)
    steps = 0
    while not (any(e.terminations.values()) or any(e.truncations.values())):
        mask = e.action_masks()
        assert mask.any(), "the agent to act has no legal action"
        e.step(int(rng.choice(np.flatnonzero(mask))))
        for agent in e.possible_agents:
            rewards[agent] += e.rewards[agent]
        steps += 1
        check(e, rng)
    return e, rewards, steps


@settings(max_examples=100, deadline=None)
@given(options=OPTIONS, seed=st.integers(0, 2**31 - 1))
def test_random_games_conserve_tiles_keep_tables_valid_and_score_right(options, seed):
    last_commits = [0]

    def check(e, rng):
        game = e.game
        assert np.array_equal(tiles_in_play(game), FULL_SET), "106 tiles not conserved"
        assert (game.staged <= game.racks[game.to_act]).all()
        if not (game.over or game.truncated) and rng.random() < 0.1:
            # the engine's cached mask (with its exact shortcuts) equals the solver's answers
            seat = game.to_act
            opening = not game.opened[seat]
            stage, commit, draw = game.legal()
            rack, staged = game.racks[seat], game.staged
            kw = {"opening": opening, "min_initial": game.min_initial}
            assert np.array_equal(stage, playable(game.table, rack, staged, **kw))
            valid = bool(staged.any()) and is_valid_play(game.table, rack, staged, **kw)
            assert commit == (valid if game.strict_commit else bool(staged.any()))
            assert draw == (not staged.any())
        if game.commits != last_commits[0]:
            last_commits[0] = game.commits
            check_arrangement(game.arrangement, game.table)
            info = e.infos[e.possible_agents[0]]
            if "game_result" in info:  # the commit ended a game: its final table, maybe followed by a new deal
                assert info["arrangement"] == info["game_result"].arrangement
            else:
                assert info["arrangement"] == game.arrangement

    e, rewards, _ = play(options, seed, check)
    game = e.game
    total = np.zeros(game.num_players)
    for result in game.results:
        assert sum(result.scores) == 0
        if result.end == "out":
            (winner,) = result.winners
            assert result.rack_totals[winner] == 0
            assert result.scores[winner] == sum(result.rack_totals)
        elif result.end == "lowest_rack":
            low = min(result.rack_totals)
            assert result.winners == tuple(s for s, v in enumerate(result.rack_totals) if v == low)
            paid = sum(v for s, v in enumerate(result.rack_totals) if s not in result.winners)
            for s in result.winners:
                assert result.scores[s] == paid / len(result.winners)
        else:
            assert result.scores == (0,) * game.num_players and result.winners == ()
        for s in range(game.num_players):
            if s not in result.winners:
                assert result.scores[s] == (0 if result.end == "draw" else -result.rack_totals[s])
        total += result.scores
    assert np.allclose(total, game.scores)
    assert np.allclose([rewards[a] for a in e.possible_agents], game.scores)
    if game.over:
        assert len(game.results) == game.games_per_episode
        last = game.results[-1]
        assert last.rack_totals == tuple(rack_total(r) for r in game.racks)
    else:
        assert game.truncated and game.turn == MAX_TURNS


@settings(max_examples=20, deadline=None)
@given(options=OPTIONS, seed=st.integers(0, 2**31 - 1))
def test_observations_do_not_depend_on_hidden_tiles(options, seed):
    def check(e, rng):
        game = e.game
        if game.over or game.truncated or rng.random() > 0.15:
            return
        encoder = Encoder(game.num_players)
        for seat in range(game.num_players):
            other = hidden_shuffle(game, seat, rng)
            a = np.zeros(OBSERVATION_SIZE, np.float32)
            b = np.zeros(OBSERVATION_SIZE, np.float32)
            encoder.fill(game, seat, a)
            encoder.fill(other, seat, b)
            assert np.array_equal(a, b), f"seat {seat} sees hidden tiles"
            if seat == game.to_act and rng.random() < 0.3:
                stage, commit, draw = game.legal()
                stage2, commit2, draw2 = other.legal()
                assert np.array_equal(stage, stage2) and commit == commit2 and draw == draw2

    play(options, seed, check)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), num_players=st.sampled_from([2, 3, 4]))
def test_greedy_games_end_and_every_staged_prefix_stays_completable(seed, num_players):
    from tableenvs.policies import make_policy

    e = raw_env(num_players=num_players)
    e.reset(seed=seed)
    policy = make_policy("heuristic", e)
    rng = np.random.default_rng(seed)
    while not (any(e.terminations.values()) or any(e.truncations.values())):
        observation = e.observe(e.agent_selection)
        action = policy.act(observation["observation"], observation["action_mask"], rng)
        assert observation["action_mask"][action]
        if e.game.staged.any():
            assert action != DRAW
        e.step(action)
        if action == COMMIT:
            check_arrangement(e.game.arrangement, e.game.table)
    assert e.game.over or e.game.truncated
