"""Scripted-deal helpers for the Pili Pili tests (action ids spelled out, a mission given as a table)."""

from tableenvs.pilipili.encoder import BID, DECLINE, NAME, PICK, PLAY, PLAY_WILD, POSITION, READY
from tableenvs.pilipili.env import raw_env


def mission(hand_size, *effects, expert=True, id=99):
    return {"id": id, "hand_size": hand_size, "expert": expert, "effects": [dict(e) for e in effects]}


def effect(kind, **params):
    return {"type": kind, **params}


def scripted(num_players, hands, *effects, dealer=0, chilis=None, deck_order=None, **env_options):
    """A raw env whose first round is the given deal under a mission with ``effects`` (hand size from hands)."""
    env = raw_env(num_players=num_players, render_mode="ansi", **env_options)
    options = {"dealer": dealer, "mission": mission(len(hands[0]), *effects), "hands": hands}
    if chilis is not None:
        options["chilis"] = chilis
    if deck_order is not None:
        options["deck_order"] = deck_order
    env.reset(seed=0, options=options)
    return env


def bid(b):
    return BID + b


def play(card, value=None):
    return PLAY_WILD + value if card == 0 else PLAY - 1 + card


def pick(card):
    return PICK + card


def name(offset):
    return NAME + offset - 1


def position(p):
    return POSITION + p


DECLINE_SWAP = DECLINE
LOOK = READY


def run(env, *actions):
    for action in actions:
        env.step(action)


def legal(env):
    return set(env.legal_actions())


def seen_hand(env, agent):
    enc = env.encoder
    return set(int(c) for c in (env.observe(agent)["observation"][enc.o_hand : enc.o_hand + 56]).nonzero()[0])


def seen_other_hand(env, agent, offset):
    enc = env.encoder
    o = enc.o_others + (offset - 1) * 56
    return set(int(c) for c in env.observe(agent)["observation"][o : o + 56].nonzero()[0])
