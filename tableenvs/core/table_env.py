"""The class every game adapter subclasses, and the one table of the hooks it fills in.

Where you are: :mod:`tableenvs.core`, the shared base under every game. A game package (``tableenvs/<game>/``)
keeps a pure rules engine (the contract: :mod:`tableenvs.core.engine`) and an encoder (:mod:`tableenvs.core.layout`)
and writes a thin adapter class on :class:`TableEnv`. The layers below do the rest once for every game:
PettingZoo's AEC bookkeeping (:mod:`tableenvs.core.aec_base`) and the state API (:mod:`tableenvs.core.state_api`).

Hooks (all seats are integers ``0 .. n-1``; agent names are derived). *Required*: every game; *capability*: the game
declares that capability on its :class:`tableenvs.core.registry.GameSpec` (``views``, ``picture``, ``state``,
``worlds``) and ``tableenvs.testing.check_game`` checks it (``state`` and ``worlds`` by checks of their own, ``views``
and ``picture`` inside the worlds check: a sampled world shows the seat the same view and picture; without
``worlds`` they are drawn but not checked for leaks); *default*: what happens when the adapter leaves it out.

=================================  ===========  ==============================================================
hook                               when         what it does
=================================  ===========  ==============================================================
``_start(rng, options)``           required     begin a new game; ``options`` is the dict given to ``reset``
``_apply(action)``                 required     apply a legal action; return per-seat rewards of this step
                                                (sequence or None)
``_render_text()``                 required     the table as text, god view (``render()``)
``_current_seat()``                default      seat that must act now: ``self.game.to_act``
``_fill_mask(mask)``               default      set 1 at every legal action id (``mask`` arrives zeroed):
                                                ``self.encoder.fill_mask``
``_fill_observation(s, out)``      default      write seat ``s``'s observation into the zeroed float32 ``out``:
                                                ``self.encoder.fill_observation``
``_describe_action(a)``            default      short text for action id ``a`` now: ``self.encoder.describe``
``_is_over()``                     default      the game ended by its rules: ``self.game.over``
``_is_truncated()``                default      the game was cut short (e.g. ``max_rounds``): False
``_final_scores()``                default      each seat's final score in the game's measure: None (the total
                                                reward counts)
``_rules_winners()``               default      the seats the rules name as winners: ``self.game.winners``
``_end_reason(truncated)``         default      the key of the ``end_reasons`` entry the game just ended for
                                                (cut short or not): the only one of that kind
``_render_view_text(s)``           views        the table as text as seat ``s`` may see it (``render_view``)
``_describe_action_public(a)``     views        what the others learn of action ``a`` (default: ``"moves"``)
``_picture_svg(s)``                picture      SVG text, god view (``s`` None) or seat ``s``'s (``render_svg``)
``_is_tentative(a)``               default      action ``a`` only prepares the move, private and deterministic until
                                                the turn's closing move (``is_tentative``): False
``_public_picture_svg()``          default      SVG text as everyone sees it (``render_public_svg``; a spectator's):
                                                ``NotImplementedError``
``_clone_game(new)``               default      give ``new`` (a shallow copy with its own ``_rng``) its own game:
                                                ``self.game.copy(rng)``
``_state_options()``               state        the constructor options but ``render_mode``, as JSON values
``_rules_state()``                 default      the engine's state as JSON values: ``self.game.to_record()``
``_state_reader()``                state        the reader of the engine's records, holding the options
                                                (``tableenvs.core.engine.StateReader``: ``read(record, rng)``)
``_rules_from_state(rules, rng)``  default      the attributes to swap in: ``{"game": reader.read(rules, rng)}``
``_infos_state()``                 state        ``infos`` as JSON values (default: they already are)
``_infos_from_state(infos, a)``    state        ``infos`` back from JSON (default: a dict per agent)
``_resample_hidden(w, s, rng)``    worlds       resample in the clone ``w`` (its engine already re-pointed at its
                                                new generator) everything seat ``s`` cannot know
``_world_event_log(s)``            worlds       the event log as seat ``s`` saw it (default: empty)
=================================  ===========  ==============================================================

The defaults serve an adapter that keeps its rules engine in ``self.game`` (the protocols ``Engine`` and, for the
state API, ``RestorableEngine`` of :mod:`tableenvs.core.engine`) and its encoder in ``self.encoder``;
``docs/adding-a-game.md`` walks through one, and ``tableenvs/toy_game.py`` is a whole game in that shape.

An adapter names itself in its class statement (``class MyGameEnv(TableEnv, name="mygame_v0")``: the base adds
``"name"`` to the inherited ``metadata``) and sets the class attributes ``score_name``,
``higher_is_better`` and ``end_reasons`` (what :meth:`TableEnv.outcome` reports; the default reasons are "the rules
ended it" and "cut short", :mod:`tableenvs.core.outcome`) and, if ``reset`` takes options, ``reset_option_keys``.
``num_players`` and the encoder (or ``observation_size`` and the observation bounds, with the class attribute
``num_actions``) are passed to ``TableEnv.__init__``; the encoder gives the observation's size and bounds and
``num_actions``.
"""

from __future__ import annotations

from tableenvs.core.aec_base import RENDER_MODES
from tableenvs.core.state_api import StateAPI

__all__ = ["RENDER_MODES", "TableEnv"]


class TableEnv(StateAPI):
    """PettingZoo AEC environment for a turn-based table game: subclass it and fill in the hooks of the module's
    table (:mod:`tableenvs.core.table_env`)."""
