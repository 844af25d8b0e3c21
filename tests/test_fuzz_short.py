"""The fuzz benchmark (``benchmarks/fuzz.py``) in short: one episode of every game, player count and option set.

The long run (``python benchmarks/fuzz.py --minutes 30``) is recorded in ``docs/benchmarks.md``; this checks that
the entry point runs clean on every configuration and that its checks do catch a broken env.
"""

from __future__ import annotations

import json

import pytest

from benchmarks import fuzz
from tableenvs.testing import games

GAMES = games("builtin")  # the shipped games (tests may register toy ones, which declare nothing)


def test_short_fuzz_run_is_clean_on_every_configuration(tmp_path, capsys):
    out = tmp_path / "fuzz.json"
    # A count of episodes, not a time budget: configurations are visited least-time-first, so the first
    # len(configurations) episodes are one per configuration however loaded the machine is. The minutes are only a
    # stop for a hung run (one episode per configuration takes about 30 CPU-seconds in all).
    episodes = len(fuzz.configurations(GAMES))
    argv = ["--minutes", "30", "--games", str(episodes), "--replays", "1", "--no-progress", "--json", str(out)]
    code = fuzz.main(argv + [arg for game in GAMES for arg in ("--game", game)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    record = json.loads(out.read_text())
    configurations = record["configurations"]
    assert {c["game"] for c in configurations} == set(GAMES)
    assert len(configurations) == len(fuzz.configurations(GAMES)) == 7 * 5 + 3 * 2 + 3 * 5
    assert all(c["episodes"] >= 1 and c["replayed"] >= 1 and not c["violations"] for c in configurations)
    assert "0 violation(s)" in printed and "total" in printed


def test_same_seed_same_trace():
    config = fuzz.Config("pilipili_v0", 4, (("missions", "none"),))
    a, b = fuzz.play_episode(config, 11, deep_every=1), fuzz.play_episode(config, 11)
    assert a.digest == b.digest and a.steps == b.steps > 0 and not a.violations
    assert fuzz.play_episode(config, 12).digest != a.digest


def test_the_checks_catch_a_broken_env(monkeypatch):
    from tableenvs.pilipili.env import PiliPiliEnv

    apply = PiliPiliEnv._apply

    def doubled(self, action):  # rewards twice what the chilis say
        rewards = apply(self, action)
        return None if rewards is None else [2 * r for r in rewards]

    monkeypatch.setattr(PiliPiliEnv, "_apply", doubled)
    episode = fuzz.play_episode(fuzz.Config("pilipili_v0", 3, ()), 5)
    assert any("the game guarantees" in text for text in episode.violations)

    fill = PiliPiliEnv._fill_mask

    def emptied(self, mask):  # no legal action once the bidding is over
        fill(self, mask)
        if self.game.phase.name != "BID":
            mask[:] = 0

    monkeypatch.setattr(PiliPiliEnv, "_fill_mask", emptied)
    episode = fuzz.play_episode(fuzz.Config("pilipili_v0", 3, ()), 5)
    assert any("empty action mask" in text for text in episode.violations)


def test_player_counts_are_probed():
    assert fuzz.player_counts("pilipili_v0") == list(range(2, 9))
    assert fuzz.player_counts("rummikub_v0") == [2, 3, 4]


@pytest.mark.parametrize("argv", [["--minutes", "0"], ["--games", "0"], ["--game", "chess"]])
def test_bad_arguments(argv):
    with pytest.raises((SystemExit, ValueError)):
        fuzz.main(argv)
