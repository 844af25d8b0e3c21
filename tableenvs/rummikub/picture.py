"""Rummikub's table as an SVG picture (``render_svg``, ``render_mode="rgb_array"``).

Where you are: the Rummikub package's drawing, built on :mod:`tableenvs.core.svg`. From the top: the status line
and pool size, the melds on the table (tiles with their number in the tile's colour, a joker as a purple ``J``
with the tile it stands for below it), then one rack per seat (score, opened or not, its tiles) and the tiles
staged this turn. A seat's picture shows what ``Rummikub.seen_by`` says, as its text view
(``RummikubEnv.render_view``) does: the table, its own rack (and its own staging), and only the tile counts of the
others' racks, drawn face down. The public picture (``public=True``, a spectator's) shows every rack face down and
no staging.

In the picture of the seat to act, every legal move is clickable (``data-action``, the action id): a rack tile stages
one of its type, the buttons commit or draw. Each staged tile carries ``data-undo`` (the action that staged it), for
a front end that lets a player take a staged tile back, and while the staged tiles make a legal play the picture
shows the table as committing them will leave it (the solver's arrangement, the one the commit publishes).
"""

from __future__ import annotations

import numpy as np

from tableenvs.core.svg import GOLD, LIGHT, Svg
from tableenvs.rummikub.encoder import COMMIT, DRAW
from tableenvs.rummikub.solver import arrange
from tableenvs.rummikub.tiles import COLOURS, JOKER, TILE_TYPES, colour_of, number_of

#: Ink of each colour (black, red, blue, orange), in :data:`tableenvs.rummikub.tiles.COLOURS` order.
INKS = ("#1b1b1b", "#c8281e", "#1f57c3", "#e07800")
JOKER_INK = "#8a2be2"
TILE_W, TILE_H, STEP = 26, 38, 28
WIDTH = 1000
PER_ROW = (WIDTH - 120) // STEP  # tiles in one rack row
LEGEND = (
    "reading the table: a tile shows its number in its colour (black, red, blue, orange); J is a joker, with the tile"
    " it stands for under it (r7: red 7)"
)
assert len(INKS) == len(COLOURS)


def _short(t: int) -> str:
    """A tile type as a joker's note: ``r7`` for red 7."""
    return f"{COLOURS[colour_of(t)][0]}{number_of(t)}"


def _tile(picture: Svg, x: float, y: float, t: int, stands_for: int | None = None, stroke: str = "#1b1b1b") -> None:
    if t == JOKER:
        note = None if stands_for is None else _short(stands_for)
        picture.card(x, y, "J", w=TILE_W, h=TILE_H, ink=JOKER_INK, stroke=stroke, size=15, note=note)
    else:
        picture.card(x, y, str(number_of(t)), w=TILE_W, h=TILE_H, ink=INKS[colour_of(t)], stroke=stroke, size=15)


def _tiles(picture: Svg, x: float, y: float, counts: np.ndarray, stroke: str = "#1b1b1b", **marks: np.ndarray) -> float:
    """The tiles of a count vector in rows of :data:`PER_ROW`; returns the y below them. ``marks``: an attribute
    name (``data_action``, ``data_undo``) -> a bool per tile type: those tiles carry it, valued by their type."""
    types = np.repeat(np.arange(TILE_TYPES), counts)
    for k, t in enumerate(types.tolist()):
        tx, ty = x + (k % PER_ROW) * STEP, y + (k // PER_ROW) * (TILE_H + 4)
        attributes = {name: t for name, on in marks.items() if on[t]}
        if attributes:
            picture.begin(**attributes, class_="move" if "data_action" in attributes else "staged")
            picture.rect(tx - 2, ty - 2, TILE_W + 4, TILE_H + 4, "none", GOLD, rx=5)
        _tile(picture, tx, ty, t, stroke=stroke)
        if attributes:
            picture.end()
    return y + max(1, -(-len(types) // PER_ROW)) * (TILE_H + 4)


def _melds(picture: Svg, y: float, melds) -> float:
    """Melds in rows across the picture; returns the y below them."""
    x = 12
    for meld in melds:
        width = len(meld.tiles) * STEP
        if x + width > WIDTH - 12:
            x, y = 12, y + TILE_H + 8
        for k, (t, stands_for) in enumerate(zip(meld.tiles, meld.stands_for, strict=True)):
            _tile(picture, x + k * STEP, y, t, stands_for)
        x += width + 14
    return y + TILE_H + 16


def table_svg(env, seat: int | None = None, public: bool = False) -> str:
    """The table of ``env`` (a ``RummikubEnv``) as SVG text: the god view, what ``seat`` may see (its moves
    clickable on its turn), or with ``public`` what everyone sees."""
    game = env.game
    live = not (game.over or game.truncated)
    view = None if seat is None else game.seen_by(seat)  # the one visibility decision (rules.SeatView)
    acting = seat is not None and seat == game.to_act and live
    stage_mask, can_commit, can_draw = game.legal() if acting else (np.zeros(TILE_TYPES, bool), False, False)
    picture = Svg(WIDTH)
    who = "public view" if public else "god view" if seat is None else f"player_{seat}'s view"
    title = f"Rummikub, {env.num_players} players, game {game.game_number}/{game.games_per_episode} ({who})"
    picture.text(12, 24, title, 18, bold=True)
    passes = f", {game.passes} pass(es) in a row" if game.passes else ""
    picture.text(12, 46, f"turn {game.turn}: {env._status_text()}; pool {game.pool_size} tiles{passes}", 13)

    y: float = 58
    picture.text(12, y + 18, f"table: {len(game.arrangement)} melds, {int(game.table.sum())} tiles", 14, bold=True)
    y = _melds(picture, y + 28, game.arrangement)

    for s in range(env.num_players):
        rack = game.racks[s]
        to_act = s == game.to_act and live
        flags = "opened" if game.opened[s] else "not opened"
        you = " (you)" if s == seat else ""
        label = f"player_{s}{you}: score {game.scores[s]:+g}, {flags}, {int(rack.sum())} tiles"
        picture.text(12, y + 16, label, 14, GOLD if to_act else LIGHT, bold=to_act)
        y += 24
        if view is not None and s == seat:
            own = view.rack if view.staged is None else view.rack - view.staged  # staged tiles shown below
            y = _tiles(picture, 12, y, own, data_action=stage_mask & (own > 0))
        elif view is None and not public:
            y = _tiles(picture, 12, y, rack)
        else:
            for k in range(int(rack.sum())):
                picture.card_back(12 + (k % PER_ROW) * STEP, y + (k // PER_ROW) * (TILE_H + 4), w=TILE_W, h=TILE_H)
            y += max(1, -(-int(rack.sum()) // PER_ROW)) * (TILE_H + 4)
        y += 6
    staged = (game.staged if live and not public else None) if view is None else view.staged
    if staged is not None and staged.any():
        title = "your staged tiles" if acting else f"staged by player_{game.to_act}"
        picture.text(12, y + 16, title, 14, GOLD, bold=True)
        y = _tiles(picture, 12, y + 24, staged, stroke=GOLD, data_undo=(staged > 0) & acting)
    if acting:
        x: float = 12
        if can_commit and staged is not None:
            x = picture.button(x, y + 6, f"commit: place {int(staged.sum())} tile(s)", COMMIT) + 10
        if can_draw:
            x = picture.button(x, y + 6, "pass (pool empty)" if game.pool_size == 0 else "draw a tile", DRAW) + 10
        y += 40
        if can_commit and staged is not None:
            after = arrange(game.table + staged)  # None: no arrangement (a failed play under strict_commit=False)
            if after is None:
                picture.text(12, y + 16, "these tiles make no legal play: committing takes them back", 13, GOLD)
                y += 28
            else:
                picture.text(12, y + 16, f"the table after the commit: {len(after)} melds", 14, GOLD, bold=True)
                y = _melds(picture, y + 26, after)
    picture.text(12, y + 16, LEGEND, 11)
    return picture.text_of()
