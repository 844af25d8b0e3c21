"""The replay viewer: a game record as one self-contained HTML page (``tableenvs replay FILE --html OUT.html``).

Where you are: shared plumbing on top of :mod:`tableenvs.play.records` (the game is re-played and checked as
``tableenvs replay`` does) and of each env's :meth:`~tableenvs.core.table_env.TableEnv.render_svg`. The page needs no
server and no network: the pictures are inline SVG and the script is in the page. It shows, step by step, the table
picture, the acting player, the move in words and every seat's return so far; buttons, the left/right arrow keys
(Home and End: the first and last step) and a slider move through the steps (step 0 is the deal, step k the
table after the k-th move), and a switch shows the god view or one seat's view. A seat's view uses that seat's
information only: its picture is ``render_svg(agent)`` and the others' moves read as the table learns them
(``describe_action_public``: ``pass a card``), its own as it made them.

The record's data is embedded as JSON with every ``<`` escaped (:func:`script_json`), so a record's strings stay
data whatever they hold.

Each distinct SVG element is stored once and each picture as the list of its elements (consecutive pictures share
most of their cards and labels): a page is a few hundred KB where whole pictures would take megabytes.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any

from tableenvs.paths import write_text_atomic
from tableenvs.play.records import GameRecord, replay

#: One SVG element as :class:`tableenvs.core.svg.Svg` writes them: ``<text ...>words</text>`` or a single tag.
_ELEMENT = re.compile(r"<text[^>]*>[^<]*</text>|<[^>]*>")


class _Table:
    """Distinct values, each stored once and referred to by its index."""

    def __init__(self) -> None:
        self.values: list = []
        self._index: dict = {}

    def index(self, value) -> int:
        if value not in self._index:
            self._index[value] = len(self.values)
            self.values.append(value)
        return self._index[value]


def _frames(record: GameRecord) -> tuple[list[dict[str, Any]], list[list[int]], list[str], Any]:
    """The record's steps as frames (step 0 = the deal), the distinct pictures they index (each a list of element
    indices), the distinct SVG elements, and the replay's result."""
    elements, pictures = _Table(), _Table()
    frames: list[dict[str, Any]] = []
    words: list[tuple[str, str]] = []  # each move as its mover and as the others read it

    def picture(svg: str) -> int:
        parts = _ELEMENT.findall(svg)
        assert "".join(parts) == svg, "an SVG the viewer cannot split into elements"
        return pictures.index(tuple(elements.index(part) for part in parts))

    def frame(env, step: dict[str, Any] | None) -> dict[str, Any]:
        return {
            "agent": None if step is None else step["agent"],
            "description": None if step is None else words[-1][0],
            "public": None if step is None else words[-1][1],
            "returns": [round(float(x), 6) for x in env._returns],
            "pictures": [picture(env.render_svg(agent)) for agent in (None, *env.possible_agents)],
        }

    def before_step(env, index: int, step: dict[str, Any]) -> None:
        if index == 0:
            frames.append(frame(env, None))
        words.append((env.describe_action(step["action"]), env.describe_action_public(step["action"])))

    result = replay(record, on_step=lambda env, index, step: frames.append(frame(env, step)), before_step=before_step)
    if not frames:  # a record with no steps: the deal only
        frames.append(frame(result.env, None))
    return frames, [list(p) for p in pictures.values], elements.values, result


def viewer_html(record: GameRecord | dict | str | os.PathLike) -> str:
    """The HTML page of ``record`` (a :class:`GameRecord`, its dict or a file path); re-plays and checks it first
    (:class:`tableenvs.play.records.RecordError` if it does not reproduce)."""
    if isinstance(record, dict):
        record = GameRecord.from_dict(record)
    elif not isinstance(record, GameRecord):
        record = GameRecord.load(record)
    frames, pictures, elements, result = _frames(record)
    outcome = result.outcome
    data = {
        "game": record.game,
        "seats": list(result.env.possible_agents),
        "policies": record.policies,
        "frames": frames,
        "pictures": pictures,
        "elements": elements,
        "winners": None if outcome is None else [f"player_{s}" for s in outcome["winners"]],
    }
    title = f"{record.game} record: seed {record.seed}, {len(record.steps)} steps"
    if record.policies:
        title += ", " + ", ".join(f"player_{s} {p}" for s, p in enumerate(record.policies))
    return _PAGE.replace("@TITLE@", html.escape(title)).replace("@DATA@", script_json(data))


def script_json(data: Any) -> str:
    """``data`` as JSON text safe inside ``<script type="application/json">``: every ``<``, ``>`` and ``&`` written
    as ``\\u003c``, ``\\u003e``, ``\\u0026`` (the same string to ``JSON.parse``). With no ``<`` left, nothing in
    the data (``</script>``, ``<!--``, ``<script>``, from a record's policy names say) can end the script element
    or switch the HTML parser into the escaped states where ``<!--<script>`` would hide the rest of the page."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_html(record: GameRecord | dict | str | os.PathLike, path: str | os.PathLike) -> Path:
    """Write :func:`viewer_html` of ``record`` to ``path``; returns the path."""
    text = viewer_html(record)
    return write_text_atomic(path, text)


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>@TITLE@</title>
<style>
body { font-family: sans-serif; margin: 16px; background: #f4f1e8; color: #1b1b1b; }
h1 { font-size: 18px; margin: 0 0 10px; }
#controls { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; }
#slider { width: 360px; }
#move { font-size: 16px; font-weight: bold; margin: 6px 0; min-height: 1.2em; }
#scores { margin: 6px 0 10px; }
#table svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>@TITLE@</h1>
<div id="controls">
  <button id="back" title="previous step (left arrow)">&#9664; back</button>
  <input id="slider" type="range" min="0" value="0" aria-label="step">
  <button id="forward" title="next step (right arrow)">forward &#9654;</button>
  <span id="position"></span>
  <label>view <select id="seat"><option value="-1">god view</option></select></label>
</div>
<div id="move"></div>
<div id="scores"></div>
<div id="table"></div>
<script id="record" type="application/json">@DATA@</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("record").textContent);
const last = data.frames.length - 1;
const slider = document.getElementById("slider");
const seatSelect = document.getElementById("seat");
let current = 0;
slider.max = String(last);
data.seats.forEach((seat, s) => seatSelect.add(new Option(seat + "'s view", String(s))));

function show(index) {
  current = Math.max(0, Math.min(last, index));
  const frame = data.frames[current];
  const seat = Number(seatSelect.value);
  slider.value = String(current);
  document.getElementById("position").textContent = "step " + current + " / " + last;
  let move = "the deal";
  if (frame.agent !== null) {
    const own = seat < 0 || data.seats[seat] === frame.agent;
    move = frame.agent + ": " + (own ? frame.description : frame.public);
  }
  if (current === last && data.winners !== null) move += " \u2014 game over, winner(s): " + data.winners.join(", ");
  document.getElementById("move").textContent = move;
  document.getElementById("scores").textContent = "returns so far: " + data.seats.map(
    (name, s) => name + " " + (frame.returns[s] >= 0 ? "+" : "") + frame.returns[s]).join(", ");
  const picture = data.pictures[frame.pictures[seat + 1]];
  document.getElementById("table").innerHTML = picture.map((element) => data.elements[element]).join("");
}

document.getElementById("back").addEventListener("click", () => show(current - 1));
document.getElementById("forward").addEventListener("click", () => show(current + 1));
slider.addEventListener("input", () => show(Number(slider.value)));
seatSelect.addEventListener("change", () => show(current));
document.addEventListener("keydown", (event) => {
  if (event.target === slider) return;  // the slider moves itself with the arrow keys
  if (event.key === "ArrowLeft") show(current - 1);
  if (event.key === "ArrowRight") show(current + 1);
  if (event.key === "Home") show(0);
  if (event.key === "End") show(last);
});
show(0);
</script>
</body>
</html>
"""
