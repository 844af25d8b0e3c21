"""The ``engine`` conformance check: a started game keeps the rules-engine contract of :mod:`tableenvs.core.engine`.

Where you are: ``tableenvs/testing/``, beside :mod:`tableenvs.testing.checks` (the other checks). Over a random game
of every player count and option set: the engine is an :class:`~tableenvs.core.engine.Engine` (with the ``state``
capability a :class:`~tableenvs.core.engine.RestorableEngine`, with ``views`` a
:class:`~tableenvs.core.engine.ViewedEngine` whose ``seen_by`` answers for every seat and changes nothing); every
move's rewards (what the adapter's ``_apply`` returns: :data:`~tableenvs.core.engine.StepRewards`) are ``None`` or
one finite number per seat, and every step's ``rewards`` one finite float per agent. With ``state``, the adapter's
reader (``_state_reader()``, a :class:`~tableenvs.core.engine.StateReader`) reads each sampled engine record, through
JSON, back into an engine of the same type drawing from the generator it is given, whose record is the same, and
leaves the game it read from as it was.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

import tableenvs
from tableenvs.core.engine import Engine, RestorableEngine, StateReader, ViewedEngine
from tableenvs.core.state import copy_generator


def check_engine(name: str, options: dict[str, Any]) -> None:
    spec = tableenvs.spec(name)
    env = tableenvs.make_raw(name, **options)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    kinds = [(Engine, "Engine")]
    kinds += [(RestorableEngine, "RestorableEngine")] if spec.declares("state") else []
    kinds += [(ViewedEngine, "ViewedEngine (seen_by)")] if spec.declares("views") else []
    paid: list[Any] = []
    apply = env._apply

    def recorded(action: int) -> Any:
        paid.append(apply(action))
        return paid[-1]

    env._apply = recorded  # the instance's own: what each move returns is read as the base reads it
    reader = env._state_reader() if spec.declares("state") else None
    if reader is not None:
        assert isinstance(reader, StateReader), f"_state_reader() gave {type(reader).__name__}, no StateReader"

    def reads_back(game: Any, step: int) -> None:
        assert reader is not None
        record = json.loads(json.dumps(game.to_record()))
        before = json.dumps(record, sort_keys=True)
        rng = copy_generator(game.rng)
        restored = reader.read(record, rng)
        assert type(restored) is type(game), f"step {step}: the reader made a {type(restored).__name__}"
        assert restored.rng is rng, f"step {step}: the read engine does not draw from the generator it was given"
        again = json.dumps(json.loads(json.dumps(restored.to_record())), sort_keys=True)
        assert again == before, f"step {step}: the engine read back from its record writes another record"
        assert json.dumps(game.to_record(), sort_keys=True) == before, f"step {step}: reading changed the game"

    for step in range(20_000):
        game = env.game
        if reader is not None and step % 7 == 0:
            reads_back(game, step)
        for kind, said in kinds:
            assert isinstance(game, kind), f"the engine {type(game).__name__} is no {said} (tableenvs.core.engine)"
        if spec.declares("views") and step % 7 == 0:
            before = json.dumps(game.to_record(), sort_keys=True) if spec.declares("state") else None
            for seat in range(env.num_players):
                game.seen_by(seat)
            if before is not None:
                assert json.dumps(game.to_record(), sort_keys=True) == before, f"seen_by changed the game at {step}"
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            if reader is not None:
                reads_back(game, step)  # the ended game too
            break
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
        move = paid[-1]
        if move is not None:
            values = list(move)
            assert len(values) == env.num_players, (
                f"step {step}: the move's rewards {values!r} are not one number per seat ({env.num_players})"
            )
            assert all(math.isfinite(float(value)) for value in values), f"step {step}: the move paid {values!r}"
        assert set(env.rewards) == set(env.agents), f"step {step}: rewards for {sorted(env.rewards)}, not every agent"
        for who, reward in env.rewards.items():
            assert isinstance(reward, float) and math.isfinite(reward), f"step {step}: {who}'s reward is {reward!r}"
    else:
        raise AssertionError("the game did not end in 20,000 random moves")
