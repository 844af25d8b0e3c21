"""Rummikub (《拉密》) as a PettingZoo AEC environment: ``rummikub_v0``.

Where you are: the thin AEC adapter of ``tableenvs/rummikub`` (rules in ``rules.py``, vectors and action ids in
``encoder.py``, legal plays from the solver in ``solver.py``). Rules and every rules decision: ``docs/rummikub.md``.

====================  ===========================================================================================
Import                ``tableenvs.make("rummikub_v0")`` or ``from tableenvs import rummikub_v0``
Agents                ``player_0 .. player_{n-1}``, n = ``num_players`` (2..4); play passes to the next seat
Action space          ``Discrete(55)``: ``0..52`` stage one rack tile of that type (52 = joker), ``53`` commit
                      (end the turn placing the staged tiles), ``54`` draw one tile (pass when the pool is empty)
Observation space     ``Dict(observation=Box(float32, (235,)), action_mask=Box(int8, (55,)))`` seen from the
                      agent's seat: own rack, own staged tiles, table, previous turn's placed tiles (53 counts
                      each), rack sizes, opened flags, player to act, scores by relative seat, pool size, passes
                      in a row, player count, games done, turns done (layout: ``tableenvs.rummikub.encoder``)
Action mask           stage ``t``: some legal play holds the staged tiles plus ``t`` (solver); commit: something
                      is staged and it is a legal play (always, once staged, with ``strict_commit=False``);
                      draw: nothing staged. Every staged prefix can be completed, so an agent never gets stuck
Agent order           one player acts until its turn ends (commit or draw), then the next seat
Rewards               at the end of each game its scores: the player who empties its rack gets the others'
                      rack totals, each other player minus its own (joker 30); pool exhausted: see
                      ``pool_exhausted``; 0 otherwise. An illegal move ends the game with -1 (wrapped env)
Termination           after ``games_per_episode`` games; truncation after ``max_turns`` turns in the episode
Infos                 after a successful commit every agent's info holds ``arrangement`` (the solver's melds of
                      the table, tuple of ``Meld``); after a game ends, ``game_result`` (``GameResult``)
Options               ``num_players`` (2..4, default 4), ``min_initial`` (opening points, 30),
                      ``draw_after_play`` (False), ``strict_commit`` (True), ``pool_exhausted`` ("lowest_rack"
                      or "draw"), ``games_per_episode`` (1), ``max_turns`` (1000), ``end_on_empty_pool``
                      (False: play on until every player passes; True: the game ends when the pool runs out,
                      the write-up's rule), ``render_mode`` ("ansi", "human", "rgb_array")
Reset options         ``racks`` (one tile list per seat, ids or names like "red 7"), ``table`` (tiles of a valid
                      table), ``pool`` (drawing order, exactly the remaining tiles), ``first_player``, ``opened``
                      (per-seat flags); they script the first game only
====================  ===========================================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.core.outcome import EndReason
from tableenvs.core.state import StateError
from tableenvs.core.table_env import TableEnv
from tableenvs.core.wrappers import wrap

from .encoder import COMMIT, Encoder
from .picture import table_svg
from .rules import Rummikub, melds_record, result_record
from .state import RummikubReader, melds_from_record, result_from_record
from .tiles import TILE_TYPES, tile_name
from .worlds import resample_hidden, world_event_log


class RummikubEnv(TableEnv, name="rummikub_v0"):
    """PettingZoo AEC env of Rummikub; see the module docstring."""

    reset_option_keys = ("racks", "table", "pool", "first_player", "opened")

    def __init__(
        self,
        num_players: int = 4,
        min_initial: int = 30,
        draw_after_play: bool = False,
        strict_commit: bool = True,
        pool_exhausted: str = "lowest_rack",
        games_per_episode: int = 1,
        max_turns: int = 1000,
        end_on_empty_pool: bool = False,
        render_mode: str | None = None,
    ):
        self.game = Rummikub(
            num_players,
            min_initial=min_initial,
            draw_after_play=draw_after_play,
            strict_commit=strict_commit,
            pool_exhausted=pool_exhausted,
            games_per_episode=games_per_episode,
            max_turns=max_turns,
            end_on_empty_pool=end_on_empty_pool,
        )
        encoder = Encoder(self.game.num_players, self.game.games_per_episode)
        super().__init__(self.game.num_players, encoder=encoder, render_mode=render_mode)

    # ------------------------------------------------------------------ hooks

    def _start(self, rng: np.random.Generator, options: dict[str, Any]) -> None:
        self.game.start(rng, **options)
        self._drain_log()

    def _fill_mask(self, mask: np.ndarray) -> None:
        if not (self.game.over or self.game.truncated):
            self.encoder.fill_mask(self.game, mask)

    def _apply(self, action: int) -> list[float] | None:
        game = self.game
        commits, games = game.commits, len(game.results)
        scores = self.encoder.apply(game, action)
        if game.commits != commits or len(game.results) != games:
            info: dict[str, Any] = {}
            if len(game.results) != games:
                info["game_result"] = game.results[-1]
            if game.commits != commits:  # the table after this commit (of the game it ended, if it did)
                info["arrangement"] = game.results[-1].arrangement if "game_result" in info else game.arrangement
            self.infos = {agent: dict(info) for agent in self.agents}
        elif any(self.infos.values()):
            self.infos = {agent: {} for agent in self.agents}
        if game.log:
            self._drain_log()
        return scores

    def _is_truncated(self) -> bool:
        return self.game.truncated

    score_name = "points"
    higher_is_better = True

    def _final_scores(self) -> list[float]:
        return [float(x) for x in self.game.scores]

    def _rules_winners(self) -> tuple[int, ...]:
        return ()  # the engine names each game's winners, not the episode's: the best episode score wins

    #: Why an episode ends: how its last game ended, or ``max_turns``.
    end_reasons = (
        EndReason("went_out", "a player emptied its rack"),
        EndReason("blocked", "the pool was empty and every player passed in a row"),
        EndReason("pool_empty", "the pool ran out (end_on_empty_pool)"),
        EndReason("max_turns", "cut short after max_turns turns", truncated=True),
    )

    def _end_reason(self, truncated: bool) -> str:
        if truncated:
            return "max_turns"
        if self.game.results[-1].end == "out":
            return "went_out"
        return "pool_empty" if self.game.end_on_empty_pool else "blocked"

    def _describe_action_public(self, action: int) -> str:
        """Commits and draws are public; a staged tile is named only if the others see the staging
        (``Rummikub.sees_staged``: they don't, staging is private until the commit, which the table then shows)."""
        game = self.game
        if action < COMMIT and not game.sees_staged((game.to_act + 1) % self.num_players):
            return "stages a tile"
        return self._describe_action(action)

    def _status_text(self) -> str:
        """Where the episode stands (public): over, truncated, or who acts."""
        game = self.game
        if game.over:
            return "episode over"
        if game.truncated:
            return f"truncated after {game.turn} turns"
        return f"player_{game.to_act} to act"

    def _public_table_lines(self) -> list[str]:
        """The status line and the melds on the table (public: the same in the god view and every seat's view)."""
        game = self.game
        lines = [
            f"Rummikub, {self.num_players} players, game {game.game_number}/{game.games_per_episode}, "
            f"turn {game.turn}: {self._status_text()}; pool {game.pool_size} tiles"
            + (f", {game.passes} pass(es) in a row" if game.passes else "")
        ]
        melds = [str(meld) for meld in game.arrangement]
        lines.append(f"table ({len(melds)} melds, {int(game.table.sum())} tiles):" if melds else "table: (empty)")
        row: list[str] = []
        for meld in melds:  # pack whole melds into lines of at most ~116 characters
            if row and sum(len(m) + 2 for m in row) + len(meld) > 116:
                lines.append("  " + "  ".join(row))
                row = []
            row.append(meld)
        if row:
            lines.append("  " + "  ".join(row))
        return lines

    def _render_text(self) -> str:
        game = self.game
        lines = self._public_table_lines()
        for seat in range(self.num_players):
            rack = game.racks[seat]
            flags = "opened" if game.opened[seat] else "not opened"
            lines.append(
                f"player_{seat}: score {game.scores[seat]:+g}, {flags}, {int(rack.sum())} tiles: {_tiles_text(rack)}"
            )
        if game.staged.any() and not (game.over or game.truncated):
            lines.append(f"staged by player_{game.to_act}: {_tiles_text(game.staged)}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ state API hooks (see TableEnv.clone)

    def _state_options(self) -> dict[str, Any]:
        game = self.game
        keys = ("min_initial", "draw_after_play", "strict_commit", "pool_exhausted", "games_per_episode", "max_turns")
        return {
            "num_players": self.num_players,
            **{key: getattr(game, key) for key in keys},
            "end_on_empty_pool": game.end_on_empty_pool,
        }

    def _state_reader(self) -> RummikubReader:
        return RummikubReader(self.game)

    def _resample_hidden(self, world: TableEnv, seat: int, rng: np.random.Generator) -> None:
        # What is dealt afresh and why it is uniform: tableenvs/rummikub/worlds.py.
        resample_hidden(world.game, seat, rng)

    def _world_event_log(self, seat: int) -> list[str]:
        return world_event_log(self.game, self.event_log, seat)

    def _infos_state(self) -> dict[str, Any]:
        infos: dict[str, dict[str, Any]] = {}
        for agent, info in self.infos.items():
            entry: dict[str, Any] = {}
            if "game_result" in info:
                entry["game_result"] = result_record(info["game_result"])
            if "arrangement" in info:
                entry["arrangement"] = melds_record(info["arrangement"])
            infos[agent] = entry
        return infos

    def _infos_from_state(self, infos: Any, agents: list[str]) -> dict[str, dict]:
        infos = super()._infos_from_state(infos, agents)
        for agent, info in infos.items():
            unknown = set(info) - {"game_result", "arrangement"}
            if unknown:
                raise StateError(f"infos[{agent!r}]: unknown key(s) {sorted(unknown)}")
            if "game_result" in info:
                info["game_result"] = result_from_record(info["game_result"], f"infos[{agent!r}].game_result")
            if "arrangement" in info:
                info["arrangement"] = melds_from_record(info["arrangement"], f"infos[{agent!r}].arrangement")
        return infos

    def _picture_svg(self, seat: int | None) -> str:
        return table_svg(self, seat)

    def _is_tentative(self, action: int) -> bool:
        """A staged tile: private until the commit (``Rummikub.sees_staged``) and drawing nothing."""
        return action < COMMIT

    def _public_picture_svg(self) -> str:
        return table_svg(self, None, public=True)

    def _render_view_text(self, seat: int) -> str:
        """The table as ``seat`` sees it (``Rummikub.seen_by``): the melds on the table, its own rack (and its
        staged tiles on its turn), the tile counts, opened flags and scores of every rack, the pool size; never the
        others' tiles."""
        game = self.game
        view = game.seen_by(seat)  # the one visibility decision (rules.SeatView)
        lines = [f"player_{seat}'s view", *self._public_table_lines()]
        if game.last_placed.any():
            lines.append(f"placed last turn: {_tiles_text(game.last_placed)}")
        for s in range(self.num_players):
            rack = game.racks[s]
            flags = "opened" if game.opened[s] else "not opened"
            tiles = f": {_tiles_text(view.rack)}" if s == seat else ""
            you = " (you)" if s == seat else ""
            lines.append(f"player_{s}{you}: score {game.scores[s]:+g}, {flags}, {int(rack.sum())} tiles{tiles}")
        if view.staged is not None and view.staged.any():
            lines.append(f"your staged tiles: {_tiles_text(view.staged)}")
        return "\n".join(lines)


def _tiles_text(counts: np.ndarray) -> str:
    return ", ".join(tile_name(t) for t in np.repeat(np.arange(TILE_TYPES), counts).tolist()) or "-"


raw_env = RummikubEnv


def env(**options: Any):
    """The wrapped env (illegal move ends the game with -1 to the mover), as PettingZoo classic envs are."""
    return wrap(raw_env(**options))
