"""The Gymnasium single-agent view (tableenvs.training.single_agent), the Gymnasium ids and make_policy's specs.

Plumbing is tested on the toy Nim game (tableenvs/toy_game.py) so nothing here depends on a real game; the
real games are checked by Gymnasium's env checker at the end, each of the package's games (GameSpec.builtin).
"""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import tableenvs
from tableenvs.core.actions import IllegalActionError
from tableenvs.core.registry import GameSpec
from tableenvs.policies import CallablePolicy, RandomPolicy, make_policy
from tableenvs.testing import games
from tableenvs.training.single_agent import OpponentPool, SingleAgentEnv

# The toy Nim game under its own name (tests/test_registry.py registers "nim_gym_v0"; test files may run in any order).
if "nim_gym_v0" not in tableenvs.names():
    tableenvs.register_game(GameSpec("nim_gym_v0", "tableenvs.toy_game", "tableenvs/NimGymTest-v0"))
NIM_ID = tableenvs.spec("nim_gym_v0").registry_id


def take_one(observation, action_mask, rng):
    """A callable opponent: always takes one counter (action 0)."""
    return 0


def test_spaces_are_the_games():
    env = SingleAgentEnv("nim_gym_v0", num_players=3, pile=7)
    raw = tableenvs.make_raw("nim_gym_v0", num_players=3)
    assert env.observation_space == raw.observation_space("player_0")["observation"]
    assert env.action_space == gymnasium.spaces.Discrete(3)


def test_reward_is_the_learners_since_its_last_action():
    # Two players, pile 5, opponent always takes one. Learner takes 3 -> pile 2 (or opponent first).
    env = SingleAgentEnv("nim_gym_v0", num_players=2, pile=5, opponents=take_one, seat=0)
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        assert info["seat"] == 0
        total = 0.0
        done = False
        while not done:
            mask = env.action_masks()
            assert mask.dtype == bool and mask.any()
            assert obs[1] == 1.0  # observation flag "it is my turn": the learner always gets its own view
            obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[-1]))
            total += reward
            done = terminated or truncated
        assert terminated and not truncated
        # Nim: one loser (-1), the other +1: the learner's summed rewards are exactly its game result.
        assert total in (-1.0, 1.0)
        assert info["episode_rewards"][0] == total
        assert info["episode_rewards"].sum() == pytest.approx(0.0)
        assert not env.action_masks().any()


def test_opponent_moves_happen_inside_step():
    env = SingleAgentEnv("nim_gym_v0", num_players=3, pile=30, opponents=take_one, seat=1)
    obs, _ = env.reset(seed=1)
    pile = obs[0]
    obs, *_ = env.step(2)  # learner takes 3, then two opponents take 1 each
    assert obs[0] == pile - 5


def test_seat_rotates_per_episode_or_stays_fixed():
    env = SingleAgentEnv("nim_gym_v0", num_players=3, seat="rotate")
    seats = [env.reset(seed=5)[1]["seat"]] + [env.reset()[1]["seat"] for _ in range(5)]
    assert seats == [0, 1, 2, 0, 1, 2]
    assert env.reset(seed=5)[1]["seat"] == 0  # a seed restarts the rotation
    env = SingleAgentEnv("nim_gym_v0", num_players=3, seat=2)
    assert {env.reset(seed=s)[1]["seat"] for s in range(5)} == {2}
    env = SingleAgentEnv("nim_gym_v0", num_players=4, seat="random")
    assert len({env.reset(seed=s)[1]["seat"] for s in range(40)}) == 4


def test_same_seed_same_episode():
    def trajectory(seed):
        env = SingleAgentEnv("nim_gym_v0", num_players=3, pile=40, opponents="random", seat="random")
        obs, info = env.reset(seed=seed)
        out = [obs.tolist(), info["seat"]]
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
            out.append((obs.tolist(), reward))
            done = terminated or truncated
        return out

    assert trajectory(7) == trajectory(7)
    assert any(trajectory(7) != trajectory(s) for s in range(8, 12))


def test_per_seat_opponents_sit_from_the_learners_left():
    calls = []

    def recorder(name):
        def act(observation, action_mask, rng):
            calls.append(name)
            return 0

        return act

    env = SingleAgentEnv("nim_gym_v0", num_players=3, pile=60, opponents=[recorder("left"), recorder("right")], seat=1)
    env.reset(seed=0)
    calls.clear()
    env.step(0)
    assert calls == ["left", "right"]


def test_game_ending_before_the_learner_acts_is_redealt():
    # pile 1 with an opponent first: it must take the last counter, so such deals are skipped.
    env = SingleAgentEnv("nim_gym_v0", num_players=2, pile=1, seat=0)
    for seed in range(10):
        env.reset(seed=seed)
        _, reward, terminated, *_ = env.step(0)
        assert terminated and reward == -1.0


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match=r"seat must be a seat index 0..1, 'rotate' or 'random'; got 'left'"):
        SingleAgentEnv("nim_gym_v0", seat="left")
    with pytest.raises(ValueError, match="seat must be a seat index 0..1"):
        SingleAgentEnv("nim_gym_v0", seat=2)
    with pytest.raises(ValueError, match="one policy per other seat: 2 for 3 players, got 1"):
        SingleAgentEnv("nim_gym_v0", num_players=3, opponents=["random"])
    with pytest.raises(ValueError, match="unknown policy 'greedy'"):
        SingleAgentEnv("nim_gym_v0", opponents="greedy")
    with pytest.raises(TypeError, match=r"unknown option\(s\) 'players'"):
        SingleAgentEnv("nim_gym_v0", players=3)
    env = SingleAgentEnv("nim_gym_v0", pile=10)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError):
        env.step(5)


def test_step_after_the_end_is_refused():
    env = SingleAgentEnv("nim_gym_v0", pile=1, seat=0)
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_opponent_pool_samples_latest_or_older():
    pool = OpponentPool(["a", "b", "c"], latest_prob=0.75)
    rng = np.random.default_rng(0)
    draws = [pool.sample(rng) for _ in range(4000)]
    assert 0.72 < draws.count("c") / 4000 < 0.78
    assert draws.count("a") > 400 and draws.count("b") > 400
    with pytest.raises(ValueError, match="latest_prob"):
        OpponentPool(["random"], latest_prob=1.5)
    env = SingleAgentEnv("nim_gym_v0", num_players=3, opponents=OpponentPool(["random", take_one], latest_prob=0.5))
    env.reset(seed=3)
    kinds = {type(p) for p in env._seat_policies.values()}
    assert kinds <= {RandomPolicy, CallablePolicy}


def test_set_opponents_switches_from_the_next_episode():
    env = SingleAgentEnv("nim_gym_v0", num_players=2, opponents="random")
    env.set_opponents(take_one)
    env.reset(seed=0)
    assert all(isinstance(p, CallablePolicy) for p in env._seat_policies.values())


def test_make_policy_specs():
    raw = tableenvs.make_raw("nim_gym_v0")
    policy = RandomPolicy()
    assert make_policy(policy, raw) is policy
    assert isinstance(make_policy(take_one, raw), CallablePolicy)
    assert make_policy(take_one, raw).act(np.zeros(4), np.ones(3, np.int8), np.random.default_rng()) == 0
    with pytest.raises(TypeError, match="cannot make a policy from 42"):
        make_policy(42, raw)
    with pytest.raises((FileNotFoundError, ImportError)):
        make_policy("no/such/model.zip", raw)


def test_gymnasium_make_passes_every_option_through():
    env = gymnasium.make(NIM_ID, num_players=3, pile=9, opponents="random", seat=2)
    obs, info = env.reset(seed=0)
    assert info["seat"] == 2
    assert env.unwrapped.game.pile_size == 9 and env.unwrapped.num_players == 3
    assert env.get_wrapper_attr("action_masks")().shape == (3,)
    with pytest.raises(TypeError, match=r"unknown option\(s\) 'colour'"):
        gymnasium.make(NIM_ID, colour="red")


def test_gymnasium_env_checker_passes_on_the_toy_game():
    # pile 20: every action is legal for a while, as check_env steps random unmasked actions
    check_env(SingleAgentEnv("nim_gym_v0", num_players=3, pile=20), skip_render_check=True)


def test_render_passes_through():
    env = gymnasium.make(NIM_ID, render_mode="ansi")
    env.reset(seed=0)
    assert "pile" in env.render()


BUILT_IN = games("builtin")  # the package's games, not the tests' toy games
REAL_GAMES = games("builtin", "heuristic")  # played against the heuristic below


def test_real_games_are_registered_in_gymnasium():
    assert {"pilipili_v0", "llama_party_v0"} <= set(BUILT_IN)
    for name in BUILT_IN:
        game = tableenvs.spec(name)
        assert gymnasium.spec(game.registry_id).kwargs == {"game": name}


@pytest.mark.parametrize("name", REAL_GAMES)
def test_real_game_single_agent_view(name):
    game = tableenvs.spec(name)
    env = gymnasium.make(game.registry_id, opponents="heuristic", seat="rotate")
    # (gymnasium's check_env steps unmasked random actions, so it only suits the toy game; gymnasium.make's
    # passive checker still checks reset/step outputs against the spaces here.)
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            assert env.observation_space.contains(obs)
            mask = env.get_wrapper_attr("action_masks")()
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            done = terminated or truncated
        assert len(info["episode_rewards"]) == env.unwrapped.num_players


@pytest.mark.parametrize("script", ["random_rollout.py", "make_by_name.py"])
def test_smallest_examples_run(script, monkeypatch, capsys):
    import runpy
    from pathlib import Path

    monkeypatch.setattr("sys.argv", [script])
    runpy.run_path(str(Path(__file__).resolve().parent.parent / "examples" / script), run_name="__main__")
    assert "pilipili_v0" in capsys.readouterr().out


def test_policies_that_leave_the_opponents_are_forgotten():
    env = SingleAgentEnv("nim_gym_v0", num_players=2, opponents=OpponentPool(["random", take_one]))
    assert len(env._policy_cache) == 2
    env.set_opponents("random")
    assert list(env._policy_cache) == [("random", True)]


# ---------------------------------------------------------------------------------------------- illegal actions


def test_illegal_action_modes():
    # pile 2: action 2 (take 3) is illegal at the learner's first decision.
    with pytest.raises(IllegalActionError):
        env = SingleAgentEnv("nim_gym_v0", num_players=2, pile=2, seat=0)
        env.reset(seed=0)
        env.step(2)
    lose = SingleAgentEnv("nim_gym_v0", num_players=2, pile=2, seat=0, illegal_action="lose", illegal_reward=-5)
    lose.reset(seed=0)
    obs, reward, terminated, truncated, info = lose.step(2)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-5.0, True, False, 2)
    assert info["episode_rewards"][0] == -5.0 and not lose.action_masks().any()
    with pytest.raises(RuntimeError, match="after the episode ended"):
        lose.step(0)
    played = set()
    for seed in range(20):
        rand = SingleAgentEnv("nim_gym_v0", num_players=2, pile=2, seat=0, illegal_action="random", opponents=take_one)
        obs, _ = rand.reset(seed=seed)
        pile = int(obs[0])  # 2, or 1 when the opponent moved first
        obs, reward, terminated, truncated, info = rand.step(2)
        assert info["illegal_action"] == 2 and info["played_action"] in range(pile)
        played.add(info["played_action"])
        # the replacement is played: taking the last counter loses; leaving one makes the opponent take it
        assert terminated and reward == (-1.0 if info["played_action"] == pile - 1 else 1.0)
    assert played == {0, 1}
    legal = SingleAgentEnv("nim_gym_v0", num_players=2, pile=9, seat=0, illegal_action="random")
    legal.reset(seed=0)
    assert "illegal_action" not in legal.step(0)[4]  # a legal action is reported as nothing
    with pytest.raises(ValueError, match="illegal_action must be one of 'raise', 'lose', 'random'; got 'skip'"):
        SingleAgentEnv("nim_gym_v0", illegal_action="skip")
    with pytest.raises(TypeError, match="illegal_reward must be a number"):
        SingleAgentEnv("nim_gym_v0", illegal_action="lose", illegal_reward="-1")
    # through gymnasium.make too
    assert gymnasium.make(NIM_ID, illegal_action="lose").unwrapped.illegal_action == "lose"


def test_random_replacement_is_reproducible():
    def run(seed):
        env = SingleAgentEnv("nim_gym_v0", num_players=3, pile=12, illegal_action="random")
        env.reset(seed=seed)
        trace, done = [], False
        while not done:
            _, reward, terminated, truncated, info = env.step(2)
            trace.append((info.get("played_action"), reward))
            done = terminated or truncated
        return trace

    assert run(4) == run(4)


@pytest.mark.parametrize("name", BUILT_IN)
def test_gymnasium_and_sb3_env_checkers_pass_with_a_non_raising_mode(name):
    pytest.importorskip("stable_baselines3", reason="needs the train extra")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    for mode in ("lose", "random"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "A Box observation space minimum value is -infinity"
            check_env(SingleAgentEnv(name, illegal_action=mode), skip_render_check=True)
            sb3_check_env(SingleAgentEnv(name, illegal_action=mode))
