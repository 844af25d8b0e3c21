"""A human seat at the terminal: show the seat its own view and its legal actions, read the action it types.

Where you are: the seat ``tableenvs play --policies human,...`` gives a person (:mod:`tableenvs.commands.play` runs the
game and calls :func:`human_turn` at each of their turns); the browser's seats are :mod:`tableenvs.web.seats`. It may
read stdin (``input``) and print to stdout, and reads the env only through ``legal_actions``, ``describe_action`` and
``render_view`` (the seat's own view, never the table's hidden state). It does not step the env: it returns the action.
"""

from __future__ import annotations

import sys

HUMAN_HELP = """Type the number of an action, or its words (e.g. "bid 2", "commit"; a unique start is enough).
  ?  or help   this help and the list of your actions again
  v  or view   your view of the table again
  q  or quit   leave the game (exit code 0)
Only what your seat may see is shown; the other seats play automatically."""


def human_turn(raw, agent: str, several: bool) -> int | None:
    """Ask the human at ``agent`` for a legal action; None if they quit (or the input ended)."""
    legal = raw.legal_actions()
    choices = [raw.describe_action(action) for action in legal]
    print()
    if several:
        print(f"=== {agent}'s turn (other players, look away) ===")
    print(raw.render_view(agent))
    print_choices(choices)
    while True:
        try:
            text = input(f"{agent}> ")
        except EOFError:
            print()
            return None
        if not stdin_is_tty():  # piped input: echo it so the transcript reads like a terminal session
            print(text)
        answer = " ".join(text.split()).lower()
        if answer in ("q", "quit", "exit"):
            return None
        if answer in ("?", "h", "help"):
            print(HUMAN_HELP)
            print_choices(choices)
            continue
        if answer in ("v", "view"):
            print(raw.render_view(agent))
            continue
        if not answer:
            continue
        if answer.isdigit():
            number = int(answer)
            if 1 <= number <= len(legal):
                return legal[number - 1]
            print(f"no action {number}: type a number from 1 to {len(legal)}, ? for help, q to quit")
            continue
        lowered = [choice.lower() for choice in choices]
        if answer in lowered:
            return legal[lowered.index(answer)]
        matches = [i for i, choice in enumerate(lowered) if choice.startswith(answer)]
        if len(matches) == 1:
            return legal[matches[0]]
        if matches:
            shown = ", ".join(choices[i] for i in matches[:6]) + (", ..." if len(matches) > 6 else "")
            print(f"{text.strip()!r} could be {len(matches)} actions ({shown}); type more of it or the number")
        else:
            print(
                f"{text.strip()!r} is not one of your legal actions; type a number from 1 to {len(legal)}, "
                "? for help, q to quit"
            )


def print_choices(choices: list[str]) -> None:
    """The numbered list of the legal actions; in columns (110 characters wide) when there are more than 12."""
    print("your legal actions:")
    items = [f"{i:>3}. {choice}" for i, choice in enumerate(choices, 1)]
    if len(items) <= 12:
        print("\n".join(items))
        return
    width = max(len(item) for item in items) + 2
    per_row = max(1, 110 // width)
    for start in range(0, len(items), per_row):
        print("".join(item.ljust(width) for item in items[start : start + per_row]).rstrip())


def stdin_is_tty() -> bool:
    """Whether stdin is a terminal (False for piped input, or a stdin that is not a real file)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
