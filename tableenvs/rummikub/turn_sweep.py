"""The rules engine's legality questions within one turn, answered from one recorded sweep (``TurnSweep``).

Where you are: the solver's per-turn cache, between the rules engine (:mod:`tableenvs.rummikub.rules`, which asks
:meth:`TurnSweep.legal` at every decision) and the sweep (:mod:`tableenvs.rummikub.sweep`). Within a turn only the
staged tiles grow, so the sweep recorded for the turn's first question answers the later ones (``kernel.reach`` for
a play onto the table, ``kernel.walk`` for an opening); big tables are searched instead (``kernel.witness``). The
latest recorded sweep is offered to :func:`tableenvs.rummikub.solver.solve` through :func:`recorded_for`. Inputs are
unchecked, as in ``solver._playable_and_exact``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from . import _solver_kernel as kernel
from .melds import Meld
from .sweep import ANY_PATH, ZERO_DELTA, graph, melds_from_choices, pruned, recorded_sweep, walk
from .tiles import JOKER, TILE_TYPES, tile_count

# Searches instead of a sweep (``TurnSweep._search``, the solver's sixth pass), for plays onto a table once a sweep of a
# play onto it (or onto a table it has since grown from) held at least ``_SEARCH_STATES`` states (seventh pass: a sweep
# stops there and its turn is searched at once): there nearly every rack tile is playable, which a search shows in a
# few hundred visits, while the sweep holds up to 460k states.
# Elsewhere the sweep is cheaper (proving a tile unplayable or a staged set no play takes exhaustive searches; on
# 2-player tables of 60+ tiles with both jokers searching cost twice the sweeps). Each question's two searches may
# visit ``_SEARCH_BUDGET`` states each before the turn falls back to the sweep; the dead states of a turn fill at most
# half of ``_DEAD_SLOTS``.
_SEARCH_STATES = 20_000
_SEARCH_BUDGET = 4096
_DEAD_SLOTS = 1 << 15
_FORWARD_KNOWN = np.array([65, 66], np.int64)  # ``kernel.reach``'s bounds after a recorded sweep (forward words)

# A recorded sweep with fewer edges is not pruned within a turn: walking it whole costs about as much as the copy.
_PRUNE_EDGES = 16384
# Nor one whose pruned copy would keep more than this share of its edges: the copy (about one walk) would not pay.
_PRUNE_KEPT = 0.3


class TurnSweep:
    """The rules engine's ``solver._playable_and_exact`` with reuse across a turn (unchecked inputs, as there).

    Within a turn only the staged tiles grow. A larger lower bound only removes transitions from the
    sweep, so the sweep recorded for the turn's first staged set answers every later superset exactly
    (asked with ``delta`` = staged now - staged then): one forward sweep per turn instead of one per staged tile.
    A play onto the table is answered by ``kernel.reach`` at a cut of the recorded sweep, keeping its per-entry words
    between questions, so a question only walks the layers between the last cut and the newly staged cells. An
    opening (points to reach) is answered by ``kernel.walk``, incrementally from the last walk; after a question that
    stages more, a big opening sweep is pruned to the edges on the plays still accepted (``kernel.prune``). A
    different table, rack, opening flag or ``min_initial``, or a staged set that is not a superset, records a new
    sweep, in the buffers of the previous one (grown buffers are kept: no allocation and no growth again; they stay as
    big as the biggest sweep this engine has recorded). A recorded play onto the table is also offered to ``solve``
    for the same position (``recorded_for``) until this engine records another sweep.
    """

    def __init__(self) -> None:
        self._position: tuple[bytes, bytes, bool, int] | None = None
        self._staged = ZERO_DELTA
        self._recorded: tuple[np.ndarray, Any, tuple[Any, ...]] | None = None  # ``recorded_sweep``'s (lo, cap, result)
        self._spare: dict = {}  # the recorded sweep's buffers, used again by the next sweep
        self._delta = ZERO_DELTA  # the last question's staged tiles above ``_staged``
        # openings: the last walk's (delta, best_from_root, best_to_end, exact_to_end)
        self._walked: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._bounds: np.ndarray | None = None  # plays onto the table: ``kernel.reach``'s [F, B] for ``_delta``
        # its forward words (the recorded sweep's, ``self._spare["forward"]``) and backward words (grown)
        self._words = (np.empty(0, np.int64), np.empty(0, np.int64))
        self._recordings = 0  # sweeps recorded so far (``solve`` checks that the one it reads is still held)
        self._searching = False  # this turn's questions are answered by searches (``_search``), no sweep recorded
        self._dead: np.ndarray | None = None  # the searches' states with no accepted end (allocated at first search)
        self._dead_fill = np.zeros(1, np.int64)
        # the staged tiles of the last search that added to ``_dead`` (None: nothing valid in it for this position);
        # a state dead for more staged tiles may be alive for fewer, so a question that drops any empties it
        self._dead_staged: np.ndarray | None = None
        self._choices = np.zeros(65, np.int64)  # the last commit check's path (the arrangement), when it found one
        self._searched: tuple[np.ndarray, bool] | None = None  # staged tiles and exact flag of the last search
        # table tiles at the last sweep of a play onto the table, and the most states of such a sweep since the table
        # last shrank (a new game): sweeps of one table swing with the rack (1k states for one seat, 270k the next)
        self._last_sweep = (0, 0)
        self._tiles = 0  # table tiles of ``_position``
        self._fresh_bounds = np.empty(2, np.int64)  # ``_bounds`` of a recorded play onto the table
        self._weak_self = weakref.ref(self)

    def __reduce__(self):
        return (TurnSweep, ())  # copies and pickles start empty: the recorded sweep is only a cache (MBs)

    def legal(self, table, rack, staged, opening: bool, min_initial: int) -> tuple[np.ndarray, bool]:
        position = (table.tobytes(), rack.tobytes(), opening, min_initial)
        # count_nonzero: a fifth of the time of ``.all()``/``.any()`` on 53 entries, asked at every decision
        same_turn = position == self._position and not np.count_nonzero(staged < self._staged)
        if same_turn and self._recorded is not None:
            delta = staged - self._staged
            if self._bounds is not None:
                mask, exact = self._reach(delta)
            else:
                mask, exact = self._walk_opening(delta)
            self._delta = delta
            return mask, exact
        if not same_turn:
            self._recorded = self._walked = self._bounds = self._searched = None
            self._position = position
            self._tiles = tiles = tile_count(table)
            last_tiles, most_states = self._last_sweep
            # a sweep of a play onto this table, or one it grew from (tables only grow within a game), was big
            self._searching = not opening and tiles >= last_tiles and most_states >= _SEARCH_STATES
            self._dead_staged = None  # another position: its dead states are not this one's
        if not self._searching:
            # a sweep of a play onto the table gives up once it holds as many states as make this table searched
            answer = self._record(table, rack, staged, opening, min_initial, None if opening else _SEARCH_STATES)
            if answer is not None:
                return answer
            self._searching = True  # it gave up: searched from now on, as after a finished sweep that big
        answer = self._search(table, rack, staged)
        if answer is not None:
            return answer
        self._searching = False  # over budget: a sweep answers this question and the rest of the turn
        answer = self._record(table, rack, staged, opening, min_initial, None)
        if answer is None:
            raise RuntimeError("TurnSweep: a sweep with no state limit gave up")
        return answer

    def _record(
        self, table, rack, staged, opening: bool, min_initial: int, give_up: int | None
    ) -> tuple[np.ndarray, bool] | None:
        """Record the sweep for ``staged`` (buffers in ``self._spare``, overwritten anew) and answer from it; ``None``
        (nothing recorded) once it holds ``give_up`` states (``None``: never gives up)."""
        self._recorded = self._walked = self._bounds = None
        self._recordings += 1
        self._staged = staged.copy()  # the caller stages into its own array later: keep this one apart
        max_states = None if give_up is None else max(give_up - 1, 1)
        recorded = recorded_sweep(table, rack, self._staged, opening, min_initial, self._spare, max_states)
        self._delta = ZERO_DELTA
        if opening:
            self._recorded = recorded
            return self._walk_opening(ZERO_DELTA)  # a whole walk (nothing walked yet), nothing to prune
        if recorded is not None:
            n_entries = recorded[2][0]
        elif max_states is not None:
            n_entries = max_states + 1
        else:
            raise RuntimeError("TurnSweep: a sweep with no state limit gave up")
        tiles, (last_tiles, most_states) = self._tiles, self._last_sweep
        self._last_sweep = (tiles, n_entries if tiles < last_tiles else max(most_states, n_entries))
        if recorded is None:
            return None
        self._recorded = recorded
        position = self._position
        if position is None:
            raise RuntimeError("TurnSweep: a sweep recorded for no position")
        key = (position[0], position[1], recorded[0].tobytes())  # lo = table + staged
        _latest_recorded.entry = (key, self._weak_self, self._recordings)
        backward = self._words[1]
        if len(backward) < n_entries:
            backward = np.empty(2 * n_entries, np.int64)
        self._words = (self._spare["forward"], backward)  # the sweep wrote the forward words for ``staged``
        self._bounds = self._fresh_bounds
        self._bounds[:] = _FORWARD_KNOWN
        return self._reach(ZERO_DELTA)

    def _search(self, table, rack, staged) -> tuple[np.ndarray, bool] | None:
        """A play onto the table's question answered by ``kernel.witness``: per rack type a path that uses one more
        tile of it, then the commit check (a path in sweep order with every cell at ``table + staged``, which is
        also the arrangement to publish); ``None`` when a search runs out of its budget."""
        if self._dead is None:
            self._dead = np.full(_DEAD_SLOTS, -1, np.int64)
        elif self._dead_fill[0] and (self._dead_staged is None or np.count_nonzero(staged < self._dead_staged)):
            self._dead.fill(-1)
            self._dead_fill[0] = 0
        self._dead_staged = staged.copy()
        lo = table + staged
        candidates = np.flatnonzero(rack > staged)
        found = self._witness(lo, table + rack, candidates, True)
        if np.count_nonzero(found < 0):
            return None
        exact = self._witness(lo, lo, ANY_PATH, False)  # leaves its path in ``_choices``
        if exact[0] < 0:
            return None
        mask = np.zeros(TILE_TYPES, bool)
        mask[candidates[found == 1]] = True
        self._searched = (self._dead_staged, bool(exact[0]))  # a copy of ``staged``, not written again
        return mask, bool(exact[0])

    def _witness(self, lo, hi, candidates, share_dead: bool) -> np.ndarray:
        """``kernel.witness`` for ``candidates`` with this turn's dead states and budget: per candidate 1, 0 or
        ``kernel.OVER_BUDGET``."""
        found = np.empty(len(candidates), np.int64)
        kernel.kernels()[8](
            lo,
            hi,
            candidates,
            _SEARCH_BUDGET,
            self._dead,
            self._dead_fill,
            share_dead,
            found,
            self._choices,
        )
        return found

    def _reach(self, delta) -> tuple[np.ndarray, bool]:
        """``kernel.reach`` on the recorded sweep for ``delta``, from the words it kept for ``self._delta``, at the
        cut it chooses (-1)."""
        if self._recorded is None:
            raise RuntimeError("TurnSweep: no recorded sweep to reach on")
        lo, _, result = self._recorded
        mask, exact = kernel.kernels()[5](
            delta, self._delta, lo[JOKER] + delta[JOKER], *graph(result), *self._words, self._bounds, -1
        )
        return mask, bool(exact)

    def _walk_opening(self, delta) -> tuple[np.ndarray, bool]:
        """An opening's question: the walk from the last one (whole if none), then maybe a pruned copy of a big
        sweep."""
        recorded = self._recorded
        if recorded is None:
            raise RuntimeError("TurnSweep: no recorded sweep to walk")
        mask, exact, best_from_root, best_to_end, exact_to_end, kept = walk(recorded, delta, self._walked)
        self._walked = (delta, best_from_root, best_to_end, exact_to_end)
        edges = recorded[2][6]
        if edges >= _PRUNE_EDGES and kept <= _PRUNE_KEPT * edges and delta.any():
            self._recorded = pruned(recorded, delta, best_from_root, best_to_end)
            self._walked = None  # the copy numbers its entries anew
        return mask, exact

    def played_arrangement(self, table, rack, staged, opening: bool, min_initial: int) -> list[Meld] | None:
        """``solver._arranged(table + staged)`` for the play ``staged`` that ``legal`` was last asked about (and found
        legal), from that question's recorded sweep instead of a sweep of the whole table; ``None`` when it was another
        question, an opening (its sweep holds the rack only) or nothing is kept (a copy).

        The same melds: ``kernel.exact_choices`` follows the first path in sweep order that plays exactly
        ``staged``, the path the table's own sweep backtracks (the tests compare them at every commit of random
        games)."""
        if opening or (table.tobytes(), rack.tobytes(), opening, min_initial) != self._position:
            return None
        if self._searching:  # the last commit check's path, if it was asked about ``staged`` and found one
            asked = self._searched
            if asked is not None and asked[1] and asked[0].tobytes() == staged.tobytes():
                return melds_from_choices(self._choices)
            return None
        if self._bounds is None or (self._staged + self._delta).tobytes() != staged.tobytes():
            return None
        if self._recorded is None:
            raise RuntimeError("TurnSweep: reach bounds kept without their recorded sweep")
        lo, _, result = self._recorded
        found, choices = kernel.kernels()[4](
            self._delta, lo, lo[JOKER] + self._delta[JOKER], *graph(result), self._words[1], self._bounds[1]
        )
        return melds_from_choices(choices) if found else None


# Per thread, the latest sweep a ``TurnSweep`` recorded for a play onto the table: ``(key, owner, recording)`` with
# ``key`` = the bytes of its table, rack and lower bound ``lo``, ``owner`` a weak reference to the ``TurnSweep`` and
# ``recording`` its count of sweeps then (a later sweep of the owner overwrites the buffers). ``solve`` asked about
# the same position (a greedy agent right after the engine's mask) scores this sweep's edges instead of sweeping.
_latest_recorded = threading.local()


def recorded_for(table, rack, lo):
    """The recorded sweep of ``(table, rack, lo)`` if a ``TurnSweep`` of this thread still holds it, else ``None``."""
    latest = getattr(_latest_recorded, "entry", None)
    if latest is None or latest[0] != (table.tobytes(), rack.tobytes(), lo.tobytes()):
        return None
    owner = latest[1]()
    return owner._recorded if owner is not None and owner._recordings == latest[2] else None
