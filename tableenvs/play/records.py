"""Game records: a whole game as JSON, and a replay that checks it reproduces exactly.

Where you are: shared plumbing used by ``tableenvs play --record FILE`` and ``tableenvs replay FILE``, and usable
from Python:

* :func:`record_game` — play one game between policies and return its :class:`GameRecord`.
* :class:`Recorder` — record a game you drive yourself: ``add(env, action)`` before each ``env.step(action)``
  (or ``on_step`` as :func:`tableenvs.policies.play_game`'s hook), ``finish(env)`` at the end.
* :class:`GameRecord` — ``save(path)`` / ``GameRecord.load(path)`` / ``to_dict()`` / ``from_dict()``.
* :func:`record_tournament` — records of games of a finished tournament (``tableenvs eval --records DIR``).
* :func:`replay` — re-play a record on a fresh env (same game, options and seed) and check that every step
  (agent, legal action, its description) and the result (per-seat returns and the outcome) come out the same;
  :class:`RecordError` (a ``ValueError``) names the first step that differs, or what is wrong with the file.

A record holds the game name, its constructor options, the reset seed (the deal), the policies' names (for
reading only), every action with its agent and its description, and the per-seat returns and outcome. Only the
seed and the actions are needed to reproduce the game; policies are not re-run. Records carry the tableenvs
version that wrote them: a record from another version is refused (the rules or the action tables may differ).

A record file is data, never trusted: loading checks every field's type (``game`` a known environment,
``options`` the game's constructor options as the command line takes them, checked by building the env, with no
``render_mode``; ``seed`` as ``reset`` takes it; ``policies`` one text per seat; ``returns`` one finite number per
seat; ``outcome`` the fields of :class:`tableenvs.core.outcome.Outcome` with finite scores and winners among the seats;
every step ``{"agent": str, "action": int, "description": str}``), each failure a :class:`RecordError` naming the
field. NaN and Infinity are not JSON and are refused. Text from a record is shown through :func:`printable`
(control characters such as ANSI escapes written as ``\\x1b``), and the HTML page embeds its JSON with every ``<``
escaped (:mod:`tableenvs.play.viewer`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.paths import write_text_atomic
from tableenvs.play.text import printable  # records' text is printed through it

FORMAT = "tableenvs-game-record"
FORMAT_VERSION = 1
#: The fields of a record besides ``format`` and ``format_version`` (others are ignored).
_FIELDS = ("game", "options", "seed", "steps", "policies", "returns", "outcome", "version")


class RecordError(ValueError):
    """A record that cannot be read, or that does not reproduce (names the first differing step)."""


def _version() -> str:
    import tableenvs

    return tableenvs.__version__


@dataclass
class GameRecord:
    """One whole game. ``steps``: ``{"agent": "player_k", "action": id, "description": text}`` in play order
    (the dead steps after the game ends are not recorded). ``returns``: each seat's total reward; ``outcome``:
    :meth:`tableenvs.core.table_env.TableEnv.outcome` as a dict (None if the game did not finish)."""

    game: str
    options: dict[str, Any]
    seed: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    policies: list[str] | None = None
    returns: list[float] | None = None
    outcome: dict[str, Any] | None = None
    version: str = field(default_factory=_version)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}

    def to_json(self) -> str:
        """The record as JSON text, one line per step."""
        data = self.to_dict()
        steps = data.pop("steps")
        data["steps"] = "@steps@"
        body = ",\n  ".join(json.dumps(step) for step in steps)
        return json.dumps(data, indent=1).replace('"@steps@"', f"[\n  {body}\n ]" if steps else "[]")

    def save(self, path: str | os.PathLike) -> Path:
        return write_text_atomic(path, self.to_json() + "\n")  # never a truncated record, an old one survives

    @classmethod
    def from_dict(cls, data: Any, source: str = "record") -> GameRecord:
        """Check and read a record dict; :class:`RecordError` for anything that is not a record of this version."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordError(f'{source} is not a tableenvs game record (no "format": "{FORMAT}" field)')
        if data.get("format_version") != FORMAT_VERSION:
            raise RecordError(
                f"{source} has record format version {_show(data.get('format_version'))}; this tableenvs reads "
                f"version {FORMAT_VERSION}"
            )
        if data.get("version") != _version():
            raise RecordError(
                f"{source} was written by tableenvs {_show(data.get('version'))}, this is tableenvs {_version()}: "
                "records replay only on the version that wrote them"
            )
        missing = [key for key in ("game", "options", "seed", "steps") if key not in data]
        if missing:
            raise RecordError(f"{source} lacks the field(s) {', '.join(missing)}")
        fields = {key: value for key, value in data.items() if key in _FIELDS}
        check_fields(fields, source)
        return cls(**fields)

    @classmethod
    def load(cls, path: str | os.PathLike) -> GameRecord:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or error
            raise RecordError(f"cannot read record {str(path)!r}: {reason}") from None
        return cls.from_dict(parse_json(text, f"record {str(path)!r}"), f"record {str(path)!r}")


def parse_json(text: str, source: str = "record") -> Any:
    """``json.loads(text)`` for a record: :class:`RecordError` if it is not JSON, holds NaN or Infinity (not JSON,
    though Python's reader takes them) or nests too deeply to read."""

    def refuse_constant(name: str) -> Any:
        raise RecordError(f"{source} is not JSON: {name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=refuse_constant)
    except RecordError:
        raise
    except json.JSONDecodeError as error:
        raise RecordError(f"{source} is not JSON: {error}") from None
    except RecursionError:
        raise RecordError(f"{source}: nested too deeply to read (a record nests a few levels)") from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise RecordError(f"{source} cannot be read: {error}") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _show(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a record may hold anything, of any size)."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"<a {type(value).__name__} nested too deeply to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _numbers(value: Any, count: int, name: str, source: str) -> None:
    if not isinstance(value, list) or len(value) != count:
        raise RecordError(f"{source}: {name} must be a list of {count} numbers (one per seat), got {_show(value)}")
    for seat, number in enumerate(value):
        if not _is_number(number):
            raise RecordError(f"{source}: {name}[{seat}] must be a finite number, got {_show(number)}")


_OUTCOME_FIELDS = ("scores", "score_name", "higher_is_better", "winners", "returns", "truncated")


def check_fields(fields: dict[str, Any], source: str = "record") -> int:
    """Check the fields of a record (:class:`GameRecord`'s, as a dict); :class:`RecordError` naming the first bad
    field. Builds the record's env to check the game and its options; returns its number of seats."""
    from tableenvs.core.registry import check_option_names, make_raw
    from tableenvs.core.registry import spec as game_spec

    game = fields["game"]
    if not isinstance(game, str):
        raise RecordError(f"{source}: game must be an environment name (text), got {_show(game)}")
    options = fields["options"]
    if not isinstance(options, dict) or not all(isinstance(key, str) for key in options):
        raise RecordError(f"{source}: options must be an object (option name: value), got {_show(options)}")
    if "render_mode" in options:
        raise RecordError(
            f"{source}: options: render_mode is not an option a record holds (the replay shows the game itself; "
            "tableenvs play --record leaves it out)"
        )
    try:
        game_spec(game)
    except ValueError as error:
        raise RecordError(f"{source}: game: the record's game cannot be set up: {error}") from None
    try:
        check_option_names(game_spec(game), options)
        env = make_raw(game, **options)
    except (ValueError, TypeError) as error:
        raise RecordError(f"{source}: options: the record's game cannot be set up: {printable(error)}") from None
    seats = env.num_players
    seed = fields["seed"]
    if not _is_int(seed) or seed < 0 or seed >= 2**128:
        raise RecordError(f"{source}: seed must be an integer >= 0 (below 2**128), got {_show(seed)}")
    steps = fields["steps"]
    if not isinstance(steps, list):
        raise RecordError(f"{source}: steps must be a list, got {_show(steps)}")
    for index, step in enumerate(steps):
        if not (
            isinstance(step, dict)
            and _is_int(step.get("action"))
            and isinstance(step.get("agent"), str)
            and isinstance(step.get("description", ""), str)
        ):
            raise RecordError(
                f'{source}: step {index} is not {{"agent": str, "action": int, "description": str}}: {_show(step)}'
            )
    policies = fields.get("policies")
    if policies is not None:
        if not isinstance(policies, list) or len(policies) != seats:
            raise RecordError(
                f"{source}: policies must be a list of {seats} names (one per seat) or null, got {_show(policies)}"
            )
        for seat, name in enumerate(policies):
            if not isinstance(name, str):
                raise RecordError(f"{source}: policies[{seat}] must be text, got {_show(name)}")
    if fields.get("returns") is not None:
        _numbers(fields["returns"], seats, "returns", source)
    outcome = fields.get("outcome")
    if outcome is not None:
        if not isinstance(outcome, dict) or set(outcome) != set(_OUTCOME_FIELDS):
            raise RecordError(
                f"{source}: outcome must be null or an object with exactly the fields {', '.join(_OUTCOME_FIELDS)}, "
                f"got {_show(outcome)}"
            )
        _numbers(outcome["scores"], seats, "outcome.scores", source)
        _numbers(outcome["returns"], seats, "outcome.returns", source)
        if not isinstance(outcome["score_name"], str):
            raise RecordError(f"{source}: outcome.score_name must be text, got {_show(outcome['score_name'])}")
        for key in ("higher_is_better", "truncated"):
            if not isinstance(outcome[key], bool):
                raise RecordError(f"{source}: outcome.{key} must be true or false, got {_show(outcome[key])}")
        winners = outcome["winners"]
        if (
            not isinstance(winners, list)
            or not winners
            or not all(_is_int(seat) and 0 <= seat < seats for seat in winners)
            or len(set(winners)) != len(winners)
        ):
            raise RecordError(
                f"{source}: outcome.winners must be a non-empty list of distinct seats 0..{seats - 1}, "
                f"got {_show(winners)}"
            )
    version = fields.get("version")
    if version is not None and not isinstance(version, str):
        raise RecordError(f"{source}: version must be text, got {_show(version)}")
    return seats


def _outcome_dict(env: Any) -> dict[str, Any] | None:
    outcome = env.unwrapped.outcome()
    if outcome is None:
        return None
    fields = {key: getattr(outcome, key) for key in _OUTCOME_FIELDS}  # the record's format: no end reason
    return {key: list(value) if isinstance(value, tuple) else value for key, value in fields.items()}


def _returns(env: Any) -> list[float]:
    return [float(x) for x in env.unwrapped._returns]


class Recorder:
    """Record a game as it is played: ``add(env, action)`` just before each (live) ``env.step(action)``."""

    def __init__(self, game: str, options: dict[str, Any], seed: int, policies: Sequence[str] | None = None):
        self.record = GameRecord(
            game, _json_options(options), int(seed), policies=None if policies is None else [str(p) for p in policies]
        )

    def add(self, env: Any, action: int) -> None:
        raw = env.unwrapped
        self.record.steps.append(
            {"agent": raw.agent_selection, "action": int(action), "description": raw.describe_action(int(action))}
        )

    def on_step(self, env: Any, agent: str, observation: Any, action: int) -> None:
        """:func:`tableenvs.policies.play_game`'s per-step hook: :meth:`add` each action."""
        self.add(env, action)

    def finish(self, env: Any) -> GameRecord:
        self.record.returns = _returns(env)
        self.record.outcome = _outcome_dict(env)
        return self.record


def _json_options(options: dict[str, Any]) -> dict[str, Any]:
    options = {key: value for key, value in options.items() if key != "render_mode"}
    try:
        return json.loads(json.dumps(options))
    except TypeError as error:
        raise ValueError(f"a record needs JSON options (numbers, text, lists, dicts): {error}") from None


def record_game(
    game: str,
    policies: Sequence[Any] | str = "random",
    *,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    rng: np.random.Generator | int | None = None,
    trust_models: bool = False,
) -> GameRecord:
    """Play one game of ``game`` (one policy per seat, or one for all) and return its record.

    ``seed`` deals the game; ``rng`` (default: ``seed``) drives the policies. ``options`` go to the game.
    ``trust_models`` lets SB3 ``.zip`` policies load (:func:`tableenvs.policies.make_policy`).
    """
    from tableenvs.core.registry import make_raw
    from tableenvs.policies import make_policy, play_game

    options = dict(options or {})
    raw_env = make_raw(game, **options)
    agents = raw_env.possible_agents
    specs = [policies] * len(agents) if isinstance(policies, str) or not isinstance(policies, Sequence) else policies
    if len(specs) == 1:
        specs = list(specs) * len(agents)
    if len(specs) != len(agents):
        raise ValueError(f"record_game: {len(specs)} policies for {len(agents)} players")
    names = [spec if isinstance(spec, str) else getattr(spec, "name", type(spec).__name__) for spec in specs]
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(seed if rng is None else rng)
    recorder = Recorder(game, options, seed, names)
    seats = [make_policy(spec, raw_env, trust_models=trust_models) for spec in specs]
    play_game(raw_env, seats, seed=seed, rng=generator, on_step=recorder.on_step)
    return recorder.finish(raw_env)


def record_tournament(
    result: Any,
    specs: Sequence[Any],
    directory: str | os.PathLike,
    *,
    games: Sequence[int] | Any = None,
    deterministic: bool = True,
    trust_models: bool = False,
) -> list[Path]:
    """Write a record of games of a finished tournament (:func:`tableenvs.evaluation.evaluate`) under ``directory``.

    A tournament game depends only on the tournament seed, its index and its seating, so the games are played
    again here, in this process, with every action recorded; each must end with the rewards the tournament
    recorded (else :class:`RecordError`). ``specs``: the policies as given to ``evaluate`` (the candidates, then
    the opponents of a gauntlet); ``games``: game indices, or a predicate on the tournament's per-game result
    (``result.records[i]``, e.g. ``lambda g: set(g.entrants) == {0, 2}``), default all. Files are
    ``game_00012.json``; returns their paths. ``trust_models`` as in ``evaluate``.
    """
    from tableenvs.core.registry import make_raw
    from tableenvs.evaluation.models import labels
    from tableenvs.evaluation.playing import SeatRng, build_policies, game_seeds
    from tableenvs.policies import play_game

    if games is None:
        indices = [g.index for g in result.records]
    elif callable(games):
        indices = [g.index for g in result.records if games(g)]
    else:
        indices = [int(i) for i in games]
    by_index = {g.index: g for g in result.records}
    unknown = [i for i in indices if i not in by_index]
    if unknown:
        raise ValueError(f"record_tournament: no game {unknown[0]} in the tournament (0..{len(result.records) - 1})")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    options = {**result.options, "num_players": result.num_players}
    raw_env = make_raw(result.env, **options)
    policies = build_policies(list(specs), raw_env, deterministic, 1, trust_models=trust_models)
    names = labels(list(specs))
    plan = result.plan
    paths = []
    for index in indices:
        tournament_game = by_index[index]
        entrants = plan.seating(index)
        deal_seed, policy_seed = game_seeds(result.seed, index, plan.size, result.duplicate)
        seat_rngs = [np.random.default_rng(child) for child in policy_seed.spawn(len(entrants))]
        recorder = Recorder(result.env, options, deal_seed, [names[e] for e in entrants])
        seats = [SeatRng(policies[e], r) for e, r in zip(entrants, seat_rngs, strict=True)]
        play_game(raw_env, seats, seed=deal_seed, rng=seat_rngs[0], on_step=recorder.on_step)
        record = recorder.finish(raw_env)
        if not _same_numbers(list(tournament_game.rewards), record.returns):
            raise RecordError(
                f"tournament game {index} played again ended with returns {record.returns}, the tournament recorded "
                f"{list(tournament_game.rewards)}: pass the same policies (and deterministic flag) as to evaluate"
            )
        paths.append(record.save(directory / f"game_{index:05d}.json"))
    return paths


@dataclass(frozen=True)
class ReplayResult:
    """What :func:`replay` checked: the number of steps, the final per-seat returns and the outcome."""

    steps: int
    returns: list[float]
    outcome: dict[str, Any] | None
    env: Any = field(repr=False, compare=False)


def replay(record: GameRecord | dict | str | os.PathLike, on_step: Any = None, before_step: Any = None) -> ReplayResult:
    """Re-play ``record`` (a :class:`GameRecord`, its dict, or a file path) and check that it reproduces exactly.

    Every step must find the recorded agent to act, the recorded action legal and described the same way; the
    game must end exactly after the last step with the recorded returns and outcome. Otherwise
    :class:`RecordError` names the first step that differs. ``on_step(env, index, step)`` is called after each
    step (for printing), ``before_step(env, index, step)`` before it, once the recorded agent and action are checked
    (the HTML viewer reads the public description of the move there).
    """
    from tableenvs.core.actions import IllegalActionError
    from tableenvs.core.registry import make_raw

    record = _checked(record)
    try:
        env = make_raw(record.game, **record.options)
        env.reset(seed=record.seed)
    except (ValueError, TypeError) as error:
        raise RecordError(f"the record's game cannot be set up: {error}") from None
    for index, step in enumerate(record.steps):
        where = printable(f"step {index} ({step['agent']}: {step.get('description', step['action'])})")
        if env.outcome() is not None:
            raise RecordError(f"the record does not reproduce: the game ended before {where}")
        if env.agent_selection != step["agent"]:
            raise RecordError(f"the record does not reproduce at {where}: {env.agent_selection} is to act")
        try:
            description = env.describe_action(step["action"])
            if before_step is not None:
                before_step(env, index, step)
            env.step(step["action"])
        except IllegalActionError as error:
            raise RecordError(f"the record does not reproduce at {where}: {error}") from None
        if "description" in step and description != step["description"]:
            raise RecordError(f"the record does not reproduce at {where}: the action now reads {description!r}")
        if on_step is not None:
            on_step(env, index, step)
    returns = _returns(env)
    outcome = _outcome_dict(env)
    if record.outcome is not None and outcome is None:
        raise RecordError(
            f"the record does not reproduce: the game is not over after its last step ({len(record.steps)} steps)"
        )
    if record.returns is not None and not _same_numbers(returns, record.returns):
        raise RecordError(f"the record does not reproduce: returns {returns}, recorded {record.returns}")
    if record.outcome is not None and outcome != record.outcome:
        raise RecordError(f"the record does not reproduce: outcome {outcome}, recorded {record.outcome}")
    return ReplayResult(len(record.steps), returns, outcome, env)


def _checked(record: GameRecord | dict | str | os.PathLike) -> GameRecord:
    """``record`` as a checked :class:`GameRecord`: a dict through :meth:`GameRecord.from_dict`, a path through
    :meth:`GameRecord.load`, a record object's fields through :func:`check_fields` (one built in Python may hold
    anything too)."""
    if isinstance(record, dict):
        return GameRecord.from_dict(record)
    if not isinstance(record, GameRecord):
        return GameRecord.load(record)
    check_fields({key: getattr(record, key) for key in _FIELDS})
    return record


def _same_numbers(a: Sequence[float], b: Any) -> bool:
    return (
        isinstance(b, list)
        and len(a) == len(b)
        and all(
            isinstance(y, (int, float)) and math.isclose(x, y, rel_tol=0, abs_tol=1e-9)
            for x, y in zip(a, b, strict=True)
        )
    )


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "GameRecord",
    "RecordError",
    "Recorder",
    "ReplayResult",
    "record_game",
    "record_tournament",
    "check_fields",
    "parse_json",
    "printable",
    "replay",
]
