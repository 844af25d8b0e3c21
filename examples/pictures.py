"""Make the docs' pictures: each game's table (``render_mode="rgb_array"``) and its replay page in a browser.

python examples/pictures.py [--out docs/img]

Writes ``table_<game>.png`` (the god-view picture of a game between heuristic agents, some moves in) and
``viewer_<game>.png`` (a screenshot of ``tableenvs replay --html`` of that game in Debian's headless Chromium,
driven by Playwright as in ``tests/test_viewer.py``; needs the ``render`` and ``dev`` extras and the
``chromium`` package).
"""

import argparse
import sys
import tempfile
from pathlib import Path

from PIL import Image

from tableenvs.core.table_env import TableEnv
from tableenvs.play.records import record_game, replay
from tableenvs.play.viewer import write_html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from browser import chromium_page  # noqa: E402  (tests/browser.py: the Chromium launch shared with the test)

#: (game, options, seed, the step shown, the seat whose view the screenshot shows)
GAMES = [
    ("pilipili_v0", {"num_players": 4}, 2, 38, 1),
    ("llama_party_v0", {"num_players": 3}, 1, 58, 0),
    ("rummikub_v0", {"num_players": 3}, 4, 90, 2),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    with chromium_page(width=1300, height=820) as page, tempfile.TemporaryDirectory() as work:
        for game, options, seed, shown, seat in GAMES:
            record = record_game(game, "heuristic", seed=seed, options=options)
            record.steps, record.returns, record.outcome = record.steps[:shown], None, None  # the game so far
            env = TableEnv.from_state(replay(record).env.get_state(), render_mode="rgb_array")
            table = args.out / f"table_{game}.png"
            Image.fromarray(env.render()).save(table)
            page.goto(write_html(record, Path(work) / f"{game}.html").as_uri())
            page.select_option("#seat", str(seat))
            page.keyboard.press("End")
            viewer = args.out / f"viewer_{game}.png"
            page.screenshot(path=str(viewer), full_page=True)
            print(f"wrote {table} and {viewer}")


if __name__ == "__main__":
    main()
