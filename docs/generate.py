"""Regenerate the docs' measured blocks from code, so their numbers cannot go stale.

Where you are: the one command that rewrites every generated block of ``README.md`` and ``docs/*.md``::

    python docs/generate.py                 # rewrite every block
    python docs/generate.py eval-example    # rewrite the named blocks
    python docs/generate.py --check         # exit 1 naming each block whose text differs from a fresh run
    python docs/generate.py --list

A generated block sits between two markers in the Markdown file, and everything between them is the generator's
output::

    <!-- generated: NAME (python docs/generate.py NAME; do not edit by hand) -->
    ...
    <!-- end generated: NAME -->

Every block here is seeded and deterministic (tournament tables, no timings), and ``tests/test_docs_generated.py``
runs ``--check`` on them in CI, so a change that moves a number fails until the docs are regenerated. A figure
that depends on the machine (a time, a rate) is never put in a checked block: a benchmark script writes it with the
date and the machine (``docs/benchmarks.md``). Add a block: write its generator below and register it in
``BLOCKS`` with the file it lives in, then put the two markers in that file and run this script.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The Llama Party tournament of docs/evaluation.md (3 players, the two copies of random on either side).
EXAMPLE = ("llama_party_v0", ["random", "heuristic", "random"], 1200, 1)


@functools.cache
def _example(duplicate: bool):
    from tableenvs.evaluation import evaluate

    env, policies, games, seed = EXAMPLE
    return evaluate(env, policies, games, seed=seed, duplicate=duplicate, progress=False)


def eval_example() -> str:
    env, policies, games, seed = EXAMPLE
    command = f"tableenvs eval {env} --policies {','.join(policies)} --games {games} --seed {seed}"
    return f"Output of `{command}`:\n\n```\n{_example(True).format_table()}\n```"


def eval_fairness() -> str:
    def row(label: str, duplicate: bool) -> str:
        result = _example(duplicate)
        first, second = (r for r in result.policies if r["policy"] in ("random", "random#2"))
        (paired,) = (p for p in result.paired if {p["policy"], p["opponent"]} == {"random", "random#2"})

        def points(r):
            return f"{r['score_mean']:.2f} [{r['score_low']:.2f}, {r['score_high']:.2f}]"

        diff = (
            f"{paired['score_diff']:+.2f} [{paired['score_diff_low']:+.2f}, {paired['score_diff_high']:+.2f}] "
            f"(paired, p = {paired['score_p']:.2g})"
        )
        elo = f"{first['elo']:.0f} ± {1.96 * first['elo_se']:.0f} / {second['elo']:.0f} ± {1.96 * second['elo_se']:.0f}"
        return f"| {label} | {points(first)} | {points(second)} | {diff} | {elo} |"

    return "\n".join(
        [
            "| seating, deals | random: points [95%] | random#2: points [95%] | random − random#2 | "
            "Elo random / random#2 |",
            "|---|---|---|---|---|",
            row("every distinct seating, fresh deals (`--no-duplicate`)", False),
            row("every distinct seating, duplicate deals (default)", True),
        ]
    )


def pilipili_missions() -> str:
    """The standard mission deck of docs/pilipili.md, from ``missions.toml`` through the loader the game uses."""
    from tableenvs.pilipili.missions import standard_missions
    from tableenvs.pilipili.rules import effective_hand_size

    deck = standard_missions()
    expert = sum(mission.expert for mission in deck)
    rows = [
        f"{len(deck) - expert} standard cards, {expert} expert cards.",
        "",
        "| id | name | hand | expert | effects | hand at 6 / 7 / 8 players |",
        "|---:|---|---:|:---:|---|---|",
    ]
    for m in deck:
        sizes = " / ".join(str(effective_hand_size(m, n)) for n in (6, 7, 8))
        rows.append(f"| {m.id} | {m.name} | {m.hand_size} | {'yes' if m.expert else ''} | {m.describe()} | {sizes} |")
    return "\n".join(rows)


#: A Llama Party bottom rule's kind, by the letter counts its combination needs (sorted, zeros dropped).
COMBINATION_KINDS = {(2,): "pair", (3,): "set", (1, 1): "2 different", (1, 1, 1): "3 different", (2, 2): "double pair"}


def llama_party_deck() -> str:
    """The standard deck of docs/llama_party.md, from ``standard_deck.toml`` through the loader the game uses
    (negative rules in bold)."""
    from tableenvs.llama_party.cards import LETTERS, load_cards

    rows = [
        "| # | id | letter | top rule (per card of letter) | bottom rule (per complete combination) |",
        "|---:|---|:-:|---|---|",
    ]
    for card in load_cards():
        top = f"{card.top_points:+d} per {LETTERS[card.top_letter]}"
        top = top if card.top_points > 0 else f"**{top} (penalty)**"
        kind = COMBINATION_KINDS[tuple(sorted(n for n in card.combo_need if n))]
        bottom = f"{card.combo} {card.combo_points:+d} ({kind}"
        bottom = f"{bottom})" if card.combo_points > 0 else f"**{bottom}, negative)**"
        rows.append(f"| {card.index} | {card.id} | {card.letter_name} | {top} | {bottom} |")
    return "\n".join(rows)


def observation_table(name: str) -> Callable[[], str]:
    """The observation table of a game whose size does not depend on the player count: its encoder's
    ``observation_layout.markdown_table()``."""

    def table() -> str:
        import tableenvs

        return tableenvs.make_raw(name).encoder.observation_layout.markdown_table()

    return table


#: name -> (file under the repository root, generator)
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "eval-example": ("docs/evaluation.md", eval_example),
    "eval-fairness": ("docs/evaluation.md", eval_fairness),
    "pilipili-missions": ("docs/pilipili.md", pilipili_missions),
    "llama-party-deck": ("docs/llama_party.md", llama_party_deck),
    "llama-party-observation": ("docs/llama_party.md", observation_table("llama_party_v0")),
    "rummikub-observation": ("docs/rummikub.md", observation_table("rummikub_v0")),
}


def _pattern(name: str) -> re.Pattern:
    return re.compile(
        rf"(<!-- generated: {re.escape(name)} [^\n]*-->\n)(.*?)(\n<!-- end generated: {re.escape(name)} -->)", re.S
    )


def current(name: str) -> str:
    """The text of block ``name`` as the file holds it; ``LookupError`` if its markers are missing."""
    file, _ = BLOCKS[name]
    match = _pattern(name).search((ROOT / file).read_text(encoding="utf-8"))
    if match is None:
        raise LookupError(f"{file} has no markers for the generated block {name!r}")
    return match.group(2)


def rewrite(name: str, text: str) -> bool:
    """Put ``text`` in block ``name``; whether the file changed."""
    file, _ = BLOCKS[name]
    path = ROOT / file
    before = path.read_text(encoding="utf-8")
    current(name)  # the markers exist
    after = _pattern(name).sub(lambda m: m.group(1) + text + m.group(3), before)
    if after != before:
        from tableenvs.paths import write_text_atomic

        write_text_atomic(path, after)
    return after != before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python docs/generate.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"blocks to generate (default all: {', '.join(BLOCKS)})")
    parser.add_argument("--check", action="store_true", help="compare instead of rewriting; exit 1 if any differs")
    parser.add_argument("--list", action="store_true", help="list the blocks and their files")
    args = parser.parse_args(argv)
    if args.list:
        for name, (file, _) in BLOCKS.items():
            print(f"{name}  {file}")
        return 0
    unknown = [name for name in args.names if name not in BLOCKS]
    if unknown:
        parser.error(f"unknown block(s) {', '.join(unknown)}; blocks: {', '.join(BLOCKS)}")
    stale = []
    for name in args.names or list(BLOCKS):
        file, generate = BLOCKS[name]
        print(f"{name} ({file}) ...", file=sys.stderr, flush=True)
        text = generate()
        if args.check:
            if current(name) != text:
                stale.append(name)
        elif rewrite(name, text):
            print(f"  rewrote {name} in {file}", file=sys.stderr)
    if stale:
        print(f"stale: {', '.join(stale)} (regenerate with: python docs/generate.py {' '.join(stale)})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
