"""Observations, masks, action ids and action texts stay bit-identical (the shared Layout and encoder
protocol changed how the encoders are declared, not what they write).

``FINGERPRINTS`` were recorded at commit de69bda, before the change, with the loop below: for every game, player
count and option set of the registry, two seeded random games of up to 250 decisions; every decision hashes the
acting seat's observation and mask (every seat's on every 7th decision), the action id and its text.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import tableenvs
from tableenvs.testing import cases, games

FINGERPRINTS = {
    'llama_party_v0 n=2 {"reward": "win"} seed=0': "0f66d0b2906d1d00",
    'llama_party_v0 n=2 {"reward": "win"} seed=1': "497588d54b1a627a",
    "llama_party_v0 n=2 {} seed=0": "0f66d0b2906d1d00",
    "llama_party_v0 n=2 {} seed=1": "497588d54b1a627a",
    'llama_party_v0 n=3 {"reward": "win"} seed=0': "838925bfef71b802",
    'llama_party_v0 n=3 {"reward": "win"} seed=1': "8f76e9afd23ea1b3",
    "llama_party_v0 n=3 {} seed=0": "838925bfef71b802",
    "llama_party_v0 n=3 {} seed=1": "8f76e9afd23ea1b3",
    'llama_party_v0 n=4 {"reward": "win"} seed=0': "68415179778b4ccf",
    'llama_party_v0 n=4 {"reward": "win"} seed=1': "113ff3902b2e07fe",
    "llama_party_v0 n=4 {} seed=0": "68415179778b4ccf",
    "llama_party_v0 n=4 {} seed=1": "113ff3902b2e07fe",
    'pilipili_v0 n=2 {"expert": false, "reward": "win"} seed=0': "c24e00842c166a64",
    'pilipili_v0 n=2 {"expert": false, "reward": "win"} seed=1': "7c52f744dcb571a9",
    'pilipili_v0 n=2 {"missions": "none"} seed=0': "d0dd5d04073ae3e2",
    'pilipili_v0 n=2 {"missions": "none"} seed=1': "a5825b7befbaa88b",
    "pilipili_v0 n=2 {} seed=0": "4c76bebcdbe627dc",
    "pilipili_v0 n=2 {} seed=1": "70689019aacbda53",
    'pilipili_v0 n=3 {"expert": false, "reward": "win"} seed=0': "d83fb933b071239e",
    'pilipili_v0 n=3 {"expert": false, "reward": "win"} seed=1': "7c1552160186ddc2",
    'pilipili_v0 n=3 {"missions": "none"} seed=0': "8cc1aaef4f11126f",
    'pilipili_v0 n=3 {"missions": "none"} seed=1': "efb672c9809dd6d3",
    "pilipili_v0 n=3 {} seed=0": "0127739b4501db16",
    "pilipili_v0 n=3 {} seed=1": "a336b9e7f2d9b891",
    'pilipili_v0 n=4 {"expert": false, "reward": "win"} seed=0': "ca7e35d0e435ac38",
    'pilipili_v0 n=4 {"expert": false, "reward": "win"} seed=1': "047f6d37d295600b",
    'pilipili_v0 n=4 {"missions": "none"} seed=0': "74bb55b247382033",
    'pilipili_v0 n=4 {"missions": "none"} seed=1': "837b9dcc6368bb1e",
    "pilipili_v0 n=4 {} seed=0": "867b8a5475809d4b",
    "pilipili_v0 n=4 {} seed=1": "6cdc66a21789d095",
    'pilipili_v0 n=5 {"expert": false, "reward": "win"} seed=0': "0d068e1dc7c4934d",
    'pilipili_v0 n=5 {"expert": false, "reward": "win"} seed=1': "3819f35b8f963036",
    'pilipili_v0 n=5 {"missions": "none"} seed=0': "aad84bfd256bf81f",
    'pilipili_v0 n=5 {"missions": "none"} seed=1': "b80181d1d2eea872",
    "pilipili_v0 n=5 {} seed=0": "8f196b04d685afb8",
    "pilipili_v0 n=5 {} seed=1": "4d43370dbcda49cc",
    'pilipili_v0 n=6 {"expert": false, "reward": "win"} seed=0': "3e916cc1b928135c",
    'pilipili_v0 n=6 {"expert": false, "reward": "win"} seed=1': "bc7ae6295ffa813f",
    'pilipili_v0 n=6 {"missions": "none"} seed=0': "8d6c8150efa8463f",
    'pilipili_v0 n=6 {"missions": "none"} seed=1': "558cf1d552bc5d59",
    "pilipili_v0 n=6 {} seed=0": "687fda93a574c052",
    "pilipili_v0 n=6 {} seed=1": "378ede624a235da8",
    'pilipili_v0 n=7 {"expert": false, "reward": "win"} seed=0': "5ba4aa0b499e608b",
    'pilipili_v0 n=7 {"expert": false, "reward": "win"} seed=1': "b04025ef355f6c57",
    'pilipili_v0 n=7 {"missions": "none"} seed=0': "64468373ee07e564",
    'pilipili_v0 n=7 {"missions": "none"} seed=1': "c2b0896173f8fdef",
    "pilipili_v0 n=7 {} seed=0": "aa0fc8005bc8d245",
    "pilipili_v0 n=7 {} seed=1": "fec77d0002fd3cc3",
    'pilipili_v0 n=8 {"expert": false, "reward": "win"} seed=0': "0722b67ed7e3528f",
    'pilipili_v0 n=8 {"expert": false, "reward": "win"} seed=1': "639b891837344966",
    'pilipili_v0 n=8 {"missions": "none"} seed=0': "326e8e226ecb055b",
    'pilipili_v0 n=8 {"missions": "none"} seed=1': "5b753e55fa5acb73",
    "pilipili_v0 n=8 {} seed=0": "bb7b2a3d597c5bce",
    "pilipili_v0 n=8 {} seed=1": "9daf1e2c75e61187",
    'rummikub_v0 n=2 {"draw_after_play": true, "games_per_episode": 2, "strict_commit": false} seed=0': "57a7fcbc3b02d036",  # noqa: E501
    'rummikub_v0 n=2 {"draw_after_play": true, "games_per_episode": 2, "strict_commit": false} seed=1': "81fdcd7eeb4273de",  # noqa: E501
    "rummikub_v0 n=2 {} seed=0": "67c717ff09526262",
    "rummikub_v0 n=2 {} seed=1": "58de0f86c93fc43f",
    'rummikub_v0 n=3 {"draw_after_play": true, "games_per_episode": 2, "strict_commit": false} seed=0': "0f105f8c7c386db2",  # noqa: E501
    'rummikub_v0 n=3 {"draw_after_play": true, "games_per_episode": 2, "strict_commit": false} seed=1': "183905fee9ac67d5",  # noqa: E501
    "rummikub_v0 n=3 {} seed=0": "ee2b6de763ed7ac0",
    "rummikub_v0 n=3 {} seed=1": "5166852f558861e2",
    'rummikub_v0 n=4 {"draw_after_play": true, "games_per_episode": 2, "strict_commit": false} seed=0': "c51432fbf1475ba7",  # noqa: E501
    'rummikub_v0 n=4 {"draw_after_play": true, "games_per_episode": 2, "strict_commit": false} seed=1': "bcabfeb046c0420d",  # noqa: E501
    "rummikub_v0 n=4 {} seed=0": "69962750cabdfe18",
    "rummikub_v0 n=4 {} seed=1": "618c3a981f50c357",
}


def key_of(name: str, options: dict, seed: int) -> str:
    """The FINGERPRINTS key of a game: name, player count, the other options, seed."""
    rest = {key: value for key, value in options.items() if key != "num_players"}
    return f"{name} n={options['num_players']} {json.dumps(rest, sort_keys=True)} seed={seed}"


# every built-in game, player count and option set of the registry, two seeds each (a missing fingerprint fails)
KEYS = [key_of(name, options, seed) for name in games("builtin") for options in cases(name) for seed in (0, 1)]


def fingerprint(name: str, options: dict, seed: int, max_steps: int = 250) -> str:
    env = tableenvs.make_raw(name, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    for step in range(max_steps):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        for other in env.possible_agents if step % 7 == 0 else [agent]:
            observation = env.observe(other)
            digest.update(observation["observation"].tobytes())
            digest.update(observation["action_mask"].tobytes())
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        digest.update(action.to_bytes(2, "little"))
        digest.update(env._describe_action(action).encode())
        env.step(action)
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("key", KEYS)
def test_seeded_games_encode_as_before(key):
    name, players, rest = key.split(" ", 2)
    options, seed = rest.rsplit(" seed=", 1)
    options = {"num_players": int(players.removeprefix("n=")), **json.loads(options)}
    assert fingerprint(name, options, int(seed)) == FINGERPRINTS[key]
