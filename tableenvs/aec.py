"""Moved to :mod:`tableenvs.core` (the base class in :mod:`tableenvs.core.table_env`, the errors in
:mod:`tableenvs.core.actions`, the outcome in :mod:`tableenvs.core.outcome`, the wrappers in
:mod:`tableenvs.core.wrappers`); these names keep working from here until tableenvs 0.2."""

from tableenvs.core.actions import IllegalActionError, InvalidActionError, check_action
from tableenvs.core.aec_base import RENDER_MODES
from tableenvs.core.outcome import Outcome
from tableenvs.core.table_env import TableEnv
from tableenvs.core.wrappers import (
    _AssertOutOfBoundsWrapper,
    _OrderEnforcingWrapper,
    _ReadsRawState,
    _TerminateIllegalWrapper,
    wrap,
)

__all__ = [
    "RENDER_MODES",
    "IllegalActionError",
    "InvalidActionError",
    "Outcome",
    "TableEnv",
    "check_action",
    "wrap",
    "_AssertOutOfBoundsWrapper",
    "_OrderEnforcingWrapper",
    "_ReadsRawState",
    "_TerminateIllegalWrapper",
]
