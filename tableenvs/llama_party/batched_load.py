"""Llama Party's batched engine started from an AEC state record: ``LlamaPartyBatched.load_state(i, record)``.

Where you are: beside the batched engine (``batched.py``, whose ``_load_rows`` hook calls :func:`load_rows`). A
record (``TableEnv.get_state()``: a game under way, a sampled world of a search) becomes one board row, the money
block and the generator row, the inverse of ``batched.py``'s ``_state_record``; the observation and mask of the seat
to act come from the engine's own ``observe`` kernel (compiled here, for the loaded rows only). From there the row
plays on as ``TableEnv.from_state(record)`` does, draw for draw (``tests/test_vector_load_state.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tableenvs.llama_party import batched_kernels as k
from tableenvs.llama_party.cards import STANDARD_DECK, card_record
from tableenvs.llama_party.rules import HAND_SIZE, NUM_SLOTS
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import state_row


def observe_rows_kernel(board, rows, n, letter, obs, mask):
    """The observation and mask of the seat to act in every env of ``rows`` (the step kernel's ``observe``)."""
    work = np.empty(k.WORK_SIZE, np.int64)
    for i in range(rows.shape[0]):
        k.observe(board, rows[i], n, letter, obs, mask, work)


def _kernel() -> Any:
    (kernel,) = kernels_once((observe_rows_kernel,), "the Llama Party batched loader", __file__, "about 5 s")
    return kernel


def board_row(rules: Mapping[str, Any], n: int) -> list[int]:
    """The board row of a running game's rules record (``LlamaParty.to_record``): ``_rules_record``'s inverse (a
    list: plain list slices are the cheap way to fill it)."""
    row = [0] * k.BOARD_WIDTH
    for slot, hand in enumerate(rules["hands"]):
        at = k.HANDS + slot * k.SLOT_CAP
        row[at : at + len(hand)] = hand
        row[k.HAND_LEN + slot] = len(hand)
    row[k.GOAL : k.GOAL + NUM_SLOTS] = rules["goal_of_slot"]
    display = rules["display"]
    row[k.DISPLAY : k.DISPLAY + NUM_SLOTS] = display if len(display) == NUM_SLOTS else [-1] * NUM_SLOTS
    passed, received = rules["passed"], rules["received"]
    moved = len(passed[0])
    for seat in range(n):
        staged = rules["staged"][seat]
        at = k.STAGED + seat * NUM_SLOTS
        row[at : at + len(staged)] = staged
        row[k.STAGED_LEN + seat] = len(staged)
        at = k.PASSED + seat * k.MOVED_CAP
        row[at : at + moved] = passed[seat]
        at = k.RECEIVED + seat * k.MOVED_CAP
        row[at : at + moved] = received[seat]
    row[k.MOVED] = moved
    feeds = rules["dummy_feeds"]
    if n == 3:  # batched_kernels.deal's ring: the dummy, then the seats from the one it feeds
        ring = [3, feeds, (feeds + 1) % 3, (feeds + 2) % 3]
    else:
        ring = [0, 1, 2, 3] if n == 4 else [0, 2, 1, 3]
    row[k.RING : k.RING + NUM_SLOTS] = ring
    for i in range(NUM_SLOTS):
        row[k.LEFT_OF + ring[i]] = ring[(i + 1) % NUM_SLOTS]
    row[k.STEP] = rules["step"]
    row[k.TO_ACT] = rules["to_act"]
    row[k.ROUND] = rules["round_number"]
    row[k.FEEDS] = -1 if feeds is None else feeds
    row[k.TOTALS : k.TOTALS + n] = rules["totals"]
    for r, scores in enumerate(rules["round_scores"]):
        row[k.ROUND_SCORES + r * NUM_SLOTS : k.ROUND_SCORES + r * NUM_SLOTS + n] = scores
    row[k.SCORED] = len(rules["round_scores"])
    for seat, shown in enumerate(rules["shown_hands"]):
        row[k.SHOWN + seat * HAND_SIZE : k.SHOWN + (seat + 1) * HAND_SIZE] = shown
    if rules["shown_display"]:
        row[k.SHOWN_DISPLAY : k.SHOWN_DISPLAY + NUM_SLOTS] = rules["shown_display"]
    assert len(row) == k.BOARD_WIDTH  # every slice had its length
    return row


def load_rows(engine: Any, rows: np.ndarray, record: Mapping[str, Any], check: bool) -> None:
    """``engine`` (a ``LlamaPartyBatched``) gets ``record``'s game in every env of ``rows``."""
    n = engine.num_players
    if check:
        deck = None if engine.deck == STANDARD_DECK else [card_record(card) for card in engine.deck]
        ours = {"num_players": n, "deck": deck, "reward": engine.reward_mode}
        theirs = dict(record["options"])
        theirs.setdefault("deck", None)
        if theirs != ours:
            differ = sorted(key for key in ours if theirs.get(key) != ours[key])
            raise ValueError(
                f"{engine.name}: load_state: the record was saved with other options ({', '.join(differ)}) than this "
                "engine's; make the engine with the record's options"
            )
    _write(engine, rows, record["rules"], record["rng"], record["rewards"], record["cumulative_rewards"],
           record["returns"])  # fmt: skip


def load_env_rows(engine: Any, rows: np.ndarray, env: Any) -> None:
    """``engine`` gets the game of ``env`` (a ``llama_party_v0`` raw env with the engine's options, its game running)
    in every env of ``rows``: what ``env.get_state()`` would hold, read from the env and its rules engine directly."""
    game = env.game
    rules = {key: getattr(game, key) for key in _RULES_KEYS}
    _write(engine, rows, rules, game.rng.bit_generator.state, env.rewards, env._cumulative_rewards, env._returns)


#: The rules record's fields ``board_row`` reads (``LlamaParty.to_record``'s keys)
_RULES_KEYS = (
    *("hands", "goal_of_slot", "display", "step", "to_act", "staged", "passed", "received", "totals"),
    *("round_scores", "round_number", "shown_hands", "shown_display", "dummy_feeds"),
)


def _write(engine: Any, rows: np.ndarray, rules: Any, rng: Any, rewards: Any, cumulative: Any, returns: Any) -> None:
    n = engine.num_players
    agents = [f"player_{seat}" for seat in range(n)]
    engine._board[rows] = board_row(rules, n)
    engine._generators[rows] = state_row(rng)
    engine._money[rows] = np.array(
        [[rewards[agent] for agent in agents], [cumulative[agent] for agent in agents], returns], np.float64
    )
    _kernel()(engine._board, rows, n, engine._deck_arrays[0], engine.obs, engine.mask)
