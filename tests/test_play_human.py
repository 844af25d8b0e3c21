"""A human seat in ``tableenvs play``, driven through stdin: a monkeypatched ``input`` for whole
games of every title, and one real subprocess with piped stdin."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from load_bounds import HANG

from tableenvs.cli import main
from tableenvs.testing import per_game

ROOT = Path(__file__).resolve().parent.parent


def scripted_input(monkeypatch, answers):
    """Feed ``input()`` from ``answers`` (an iterator of strings); EOF when it runs out."""
    prompts = []

    def fake_input(prompt=""):
        prompts.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    return prompts


def numbers(seed, high=3):
    rng = np.random.default_rng(seed)
    while True:
        yield str(int(rng.integers(1, high + 1)))


#: The policies of each game's game with a human seat, one a seat
SEATS = per_game(
    {"pilipili_v0": "human,heuristic,random", "llama_party_v0": "heuristic,human", "rummikub_v0": "human,heuristic"},
    "builtin",
    "heuristic",
    "views",
)


@pytest.mark.parametrize("game, policies", list(SEATS.items()))
def test_a_human_plays_a_whole_game_against_built_in_agents(game, policies, monkeypatch, capsys, tmp_path):
    prompts = scripted_input(monkeypatch, numbers(0))
    record = tmp_path / "game.json"
    players = str(len(policies.split(",")))
    code = main(["play", game, "--players", players, "--policies", policies, "--seed", "5", "--record", str(record)])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    human = f"player_{policies.split(',').index('human')}"
    assert prompts and set(prompts) == {f"{human}> "}
    assert f"{human}'s view" in out and "your legal actions:" in out
    assert "total reward:" in out and f"wrote {record}" in out
    # the other seats' moves are shown as the table sees them: no passed card, goal or staged tile
    secret = re.compile(r"^  player_\d: (pass \d|give \d|stage |choose goal|pass [A-H]\d)", re.M)
    assert not secret.search(out), secret.search(out).group(0)
    assert re.search(r"^  player_\d: \S", out, re.M)
    # the record of a game with a human seat replays like any other
    assert main(["replay", str(record), "--quiet"]) == 0
    assert "reproduces exactly" in capsys.readouterr().out


def test_the_human_sees_only_its_own_view_and_never_the_god_view(monkeypatch, capsys):
    scripted_input(monkeypatch, iter(["q"]))
    assert (
        main(["play", "pilipili_v0", "--players", "3", "--policies", "heuristic,human,heuristic", "--seed", "2"]) == 0
    )
    out = capsys.readouterr().out
    assert "player_1's view" in out
    assert "player_0's view" not in out and "player_2's view" not in out
    assert re.search(r"^  player_0: \S", out, re.M)  # the others' moves, as the table sees them
    assert "previous round" not in out and out.count("round 1 | mission") == 1  # no god view before the quit
    assert "tableenvs: player_1 quit the game" in out


def test_words_help_bad_input_and_quit(monkeypatch, capsys):
    answers = iter(["", "xyz", "0", "99", "?", "help", "view", "bid", "q"])
    scripted_input(monkeypatch, answers)
    deck = ["--players", "2", "--policies", "human", "--seed", "1"]
    assert main(["play", "rummikub_v0", *deck]) == 0
    out = capsys.readouterr().out
    assert "'xyz' is not one of your legal actions" in out
    assert "no action 0: type a number from 1 to" in out and "no action 99" in out
    assert out.count("Type the number of an action, or its words") == 2
    assert "'bid' is not one of your legal actions" in out
    assert "tableenvs: player_0 quit the game" in out


def test_typing_the_words_of_an_action(monkeypatch, capsys):
    """Two humans (hot seat) typing the words of an action, in any case."""
    scripted_input(monkeypatch, iter(["draw", "DRAW", "q"]))
    code = main(["play", "rummikub_v0", "--policies", "human,human", "--players", "2", "--seed", "4"])
    out = capsys.readouterr().out
    assert code == 0
    assert "player_0's turn (other players, look away)" in out and "player_1's turn" in out
    assert out.count("your legal actions:") == 3  # draw accepted for both seats, then player_0 quits
    assert "is not one of your legal actions" not in out


def test_eof_on_stdin_quits_cleanly(monkeypatch, capsys):
    scripted_input(monkeypatch, iter([]))
    assert main(["play", "llama_party_v0", "--players", "2", "--policies", "human,random", "--seed", "0"]) == 0
    assert "tableenvs: player_0 quit the game" in capsys.readouterr().out


def test_bad_pause_is_a_user_error(capsys):
    assert main(["play", "pilipili_v0", "--policies", "human", "--pause", "-1"]) == 2
    assert "--pause must be a number of seconds >= 0" in capsys.readouterr().err


def test_the_cli_through_a_real_pipe():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    answers = "\n".join(["nonsense", "?"] + ["1"] * 400) + "\n"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tableenvs.cli",
            "play",
            "llama_party_v0",
            "--players",
            "2",
            "--agents",
            "human,heuristic",
        ]
        + ["--seed", "7"],
        input=answers,
        capture_output=True,
        text=True,
        timeout=HANG,
        env=env,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "'nonsense' is not one of your legal actions" in result.stdout
    assert "game over" in result.stdout and "total reward:" in result.stdout
    assert result.stderr == ""


def test_quitting_with_record_writes_the_game_so_far_and_it_replays(monkeypatch, capsys, tmp_path):
    record = tmp_path / "partial.json"
    scripted_input(monkeypatch, iter(["1", "1", "q"]))
    args = ["play", "pilipili_v0", "--players", "3", "--policies", "random,human,random", "--record", str(record)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "unfinished" in out and "quit the game" in out
    assert main(["replay", str(record), "--quiet"]) == 0
    assert "reproduces exactly" in capsys.readouterr().out and "unfinished" in out


def test_pause_waits_once_per_automatic_turn(monkeypatch, capsys):
    slept = []
    monkeypatch.setattr("time.sleep", slept.append)
    scripted_input(monkeypatch, iter(["1"] * 6 + ["q"]))
    args = ["play", "pilipili_v0", "--players", "3", "--policies", "random,random,human", "--seed", "0"]
    assert main([*args, "--pause", "0.25"]) == 0
    out = capsys.readouterr().out
    moves = len(re.findall(r"^  player_[01]: ", out, re.M))
    assert slept and set(slept) == {0.25} and len(slept) <= moves


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal test on Linux")
def test_a_whole_game_through_a_pseudo_terminal():
    """stdin and stdout on a pty (a real terminal to the CLI): answer each prompt, play to the end."""
    import pty
    import select
    import time

    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "dumb"}
    command = [sys.executable, "-m", "tableenvs.cli", "play", "rummikub_v0", "--players", "2"]
    command += ["--policies", "heuristic,human", "--seed", "3", "--pause", "0"]
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    output = b""
    answered = 0
    deadline = time.monotonic() + HANG  # only against a hang: the loop ends when the game does
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
                while output.count(b"player_1> ") > answered:
                    os.write(master, b"?\n" if answered == 0 else b"1\n")
                    answered += 1
            elif process.poll() is not None:
                break
        code = process.wait(timeout=HANG / 10)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    text = output.decode(errors="replace")
    assert code == 0, text[-2000:]
    assert "Type the number of an action" in text and "player_1's view" in text
    assert "total reward:" in text and answered > 2
