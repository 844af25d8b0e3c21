"""The shared base under every game: the engine contract, the AEC env base class, the state API, the registry.

Where you are: ``tableenvs/core/``. Nothing here imports anything of tableenvs outside ``core`` (checked by
``tests/test_import_graph.py``), so a game, a policy or a training job can build on it without cycles.

=====================  ==========================================================================================
module                 what it holds
=====================  ==========================================================================================
``engine``             the rules-engine contract (:class:`~tableenvs.core.engine.Engine`, ``RulesError``, the win
                       reward)
``layout``             the observation layout and the encoder protocol (``Layout``, ``Encoder``)
``actions``            the action check and its two errors (``IllegalActionError``, ``InvalidActionError``)
``outcome``            a finished game's ``Outcome``, why it ended (``EndReason``) and the competition ranks
``aec_base``           PettingZoo's AEC bookkeeping over the hooks (``AECBase``)
``state_api``          ``clone``, ``get_state``/``set_state``, ``from_state``, ``sample_world`` (``StateAPI``)
``table_env``          ``TableEnv``, the class a game adapter subclasses, with the one table of its hooks
``state``              helpers of state records: field checks that name the field, generator copies
``validation``         the option checks every constructor and policy uses (``check_int``, ``check_choice``, ...)
``wrappers``           the wrapped env of ``tableenvs.make`` (PettingZoo classic's three wrappers)
``registry``           games by name: ``GameSpec``, ``register_game``, ``make``, ``make_raw``
``svg``                the small SVG builder the pictures use, and its rasteriser
=====================  ==========================================================================================
"""

from tableenvs.core.actions import IllegalActionError, InvalidActionError, check_action
from tableenvs.core.engine import RulesError
from tableenvs.core.outcome import EndReason, Outcome
from tableenvs.core.registry import GameSpec, make, make_raw, names, register_game, spec
from tableenvs.core.state import StateError
from tableenvs.core.table_env import TableEnv

__all__ = [
    "EndReason",
    "GameSpec",
    "IllegalActionError",
    "InvalidActionError",
    "Outcome",
    "RulesError",
    "StateError",
    "TableEnv",
    "check_action",
    "make",
    "make_raw",
    "names",
    "register_game",
    "spec",
]
