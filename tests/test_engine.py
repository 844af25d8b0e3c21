"""The engine contract shared by every game (``tableenvs.core.engine``): one illegal-move error, one win payout."""

import numpy as np
import pytest

import tableenvs
from tableenvs.core.engine import RulesError, win_rewards
from tableenvs.pilipili import rules as pilipili_rules


@pytest.mark.parametrize(
    ("num_players", "winners", "expected"),
    [
        (3, [1], [-1.0, 1.0, -1.0]),
        (3, [0, 2], [0.5, -1.0, 0.5]),
        (4, [0, 1, 2, 3], [0.25, 0.25, 0.25, 0.25]),
    ],
)
def test_win_rewards_share_plus_one_among_the_winners(num_players, winners, expected):
    assert win_rewards(num_players, winners) == expected


def test_pilipili_rules_error_is_the_shared_one():
    assert pilipili_rules.RulesError is RulesError
    assert issubclass(RulesError, ValueError)


def started(name, **options):
    env = tableenvs.make_raw(name, **options)
    env.reset(seed=0)
    return env.game


def test_pilipili_illegal_bid_raises_rules_error():
    game = started("pilipili_v0", num_players=3, missions="none")
    with pytest.raises(RulesError, match="bid 99 is not legal"):
        game.bid(99)


def test_llama_party_card_not_in_hand_raises_rules_error():
    game = started("llama_party_v0", num_players=4)
    missing = next(card for card in range(32) if card not in game.hands[game.to_act])
    with pytest.raises(RulesError, match=f"cannot pick card {missing}"):
        game.act(missing)


def test_rummikub_illegal_moves_raise_rules_error():
    game = started("rummikub_v0", num_players=2)
    with pytest.raises(RulesError, match="cannot commit: nothing staged"):
        game.commit()
    absent = int(np.flatnonzero(game.racks[game.to_act] == 0)[0])
    with pytest.raises(RulesError, match="cannot stage"):
        game.stage(absent)
