"""The OpenSpiel bridge's observer: a seat's observation vector and text view of a ``TableState``.

Where you are: the observer of :mod:`tableenvs.openspiel`, which ``TableGame.make_py_observer`` builds for
OpenSpiel (observation tensor and string, information state tensor and string). It reads a state's env through the
state's ``_table`` (:mod:`tableenvs.openspiel.state`) and asks it for nothing the seat may not see.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from tableenvs.openspiel.state import Shared, TableState


class TableObserver:
    """OpenSpiel's PyObserver for these games: ``tensor`` (and ``dict``, its named sections from the encoder's
    layout) is the seat's observation vector; ``string_from`` its ``render_view`` text, plus the recall line when
    the observation type asks for perfect recall (the information state). Only the seat's own view exists:
    ``private_info`` must be ``SINGLE_PLAYER`` and ``public_info`` true."""

    def __init__(self, shared: Shared, iig_obs_type: Any = None, params: Any = None):
        if params:
            raise ValueError(f"{shared.title.short_name}: observation parameters are not supported; got {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                f"{shared.title.short_name}: only a seat's own view is available (public_info=True, "
                f"private_info=SINGLE_PLAYER); got public_info={iig_obs_type.public_info}, "
                f"private_info={iig_obs_type.private_info}"
            )
        self.shared = shared
        self.perfect_recall = iig_obs_type.perfect_recall
        encoder = shared.template.encoder
        self.tensor = np.zeros(shared.template.observation_size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        layout = getattr(encoder, "observation_layout", None)
        if layout is not None and layout.size == self.tensor.size:
            for section in layout:
                self.dict[section.name] = self.tensor[section.slice].reshape(section.shape)
        else:
            self.dict["observation"] = self.tensor

    def set_from(self, state: TableState, player: int) -> None:
        env = state._table.env
        if env is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = env.observe(self.shared.agents[player])["observation"]

    def string_from(self, state: TableState, player: int) -> str:
        table = state._table
        agent = self.shared.agents[player]
        if table.env is None:
            return f"{agent}'s view: before the deal"
        text = table.env.render_view(agent)
        if self.perfect_recall:
            text += f"\nrecall {table.recall[player].hex()}"
        return text
