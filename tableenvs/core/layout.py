"""The shared encoder shape: a :class:`Layout` of named observation sections and the :class:`Encoder` protocol.

Where you are: shared plumbing between each game's rules engine and its adapter. Every game's ``encoder.py``
describes its observation vector once, as a :class:`Layout` (sections in order, each with a size, an optional
shape and a line of content), and implements :class:`Encoder` (what :class:`tableenvs.core.table_env.TableEnv` asks of
it). The docs page's observation table is checked against the layout (``tests/test_conformance.py``) and can be
printed from it (:meth:`Layout.markdown_table`). :func:`layout_version` reads an env's encoder's
``LAYOUT_VERSION`` (1 when the encoder does not say), which saved models record
(:mod:`tableenvs.policies.numpy_policy`).

Example::

    layout = Layout([("hand", 32, "1 for each card in hand"), ("revealed", (4, 32), "revealed goal cards")])
    layout.HAND, layout.REVEALED, layout.size        # 0, 32, 160: upper-case offsets for the hot paths
    layout["revealed"].slice                          # slice(32, 160)
    layout.view(observation, "revealed")              # a (4, 32) view into the observation (no copy)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np


@dataclass(frozen=True)
class Section:
    """One named block of an observation: ``start`` and ``size`` in entries, ``shape`` to read it back as."""

    name: str
    start: int
    shape: tuple[int, ...]
    content: str = ""

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)


class Layout:
    """Named sections of a flat observation vector, laid end to end in the order given.

    ``sections``: ``(name, size or shape, content)`` triples (content optional). Each section's offset is also an
    upper-case attribute (``layout.OWN_HAND``), and ``layout.SIZE == layout.size``, for hot-path indexing.
    """

    def __init__(self, sections: Sequence[tuple[str, int | tuple[int, ...]] | tuple[str, int | tuple[int, ...], str]]):
        self._sections: dict[str, Section] = {}
        start = 0
        for name, shape, *content in sections:
            if name in self._sections or name.upper() == "SIZE":
                raise ValueError(f"layout: section name {name!r} is taken")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            section = Section(name, start, shape, content[0] if content else "")
            self._sections[name] = section
            setattr(self, name.upper(), start)
            start += section.size
        self.size = start
        self.SIZE = start

    if TYPE_CHECKING:
        # The upper-case section offsets are set per layout in __init__ (setattr), so the type checker cannot list
        # them: to it, any other attribute read is an int offset. Type-checking only; no runtime __getattr__.
        def __getattr__(self, name: str) -> int: ...

    def __iter__(self) -> Iterator[Section]:
        return iter(self._sections.values())

    def __len__(self) -> int:
        return len(self._sections)

    def __getitem__(self, name: str) -> Section:
        try:
            return self._sections[name]
        except KeyError:
            raise KeyError(f"no section {name!r}; sections: {', '.join(self._sections)}") from None

    def offsets(self) -> dict[str, int]:
        """Section name -> start, in order."""
        return {section.name: section.start for section in self}

    def view(self, observation: np.ndarray, name: str) -> np.ndarray:
        """Section ``name`` of ``observation`` (a vector of :attr:`size` entries) as an array of its shape; a
        view, so writing to it writes the observation."""
        if observation.shape != (self.size,):
            raise ValueError(f"layout: an observation has shape ({self.size},), got {observation.shape}")
        section = self[name]
        return observation[section.slice].reshape(section.shape)

    def markdown_table(self, label: str = "block", offset: str = "offset") -> str:
        """The docs table: ``| label | offset | size | content |``, one row per section."""
        lines = [f"| {label} | {offset} | size | content |", "| --- | ---: | ---: | --- |"]
        for section in self:
            size = " x ".join(map(str, section.shape))
            lines.append(f"| `{section.name}` | {section.start} | {size} | {section.content} |")
        return "\n".join(lines)


if TYPE_CHECKING:
    # The encoders' hot paths write single entries through ``memoryview(array)``. To the type checker a memoryview's
    # items are ints, and numpy's stubs give ndarray the buffer protocol only from Python 3.12 on; these say what
    # the view of a float32 observation (float entries) or an int8 mask (int entries) is. At runtime both are
    # ``memoryview`` itself.
    def float_entries(array: np.ndarray, /) -> memoryview[float]: ...

    def int_entries(array: np.ndarray, /) -> memoryview[int]: ...

else:
    float_entries = int_entries = memoryview


class Encoder(Protocol):
    """What a game's encoder gives its adapter: the one place where the game meets vectors and action ids.

    ``size``, ``low`` and ``high`` are the observation's length and bounds (float32 arrays of ``size``);
    ``observation_layout`` names its sections; ``num_actions`` is the number of action ids
    (``0..num_actions-1``). The ``fill_*`` methods write into zeroed, contiguous arrays.

    ``LAYOUT_VERSION`` (optional, a class attribute; 1 when absent) says what the observation's entries mean: raise
    it whenever an entry changes meaning, even at the same size, so a model saved for the old layout is refused
    (:func:`layout_version`; saved models record it).
    """

    LAYOUT_VERSION: ClassVar[int] = 1
    size: int
    num_actions: int
    low: np.ndarray
    high: np.ndarray
    observation_layout: Layout

    def fill_observation(self, game: Any, seat: int, out: np.ndarray) -> None:
        """Write what ``seat`` may know of ``game`` into the zeroed float32 vector ``out``."""

    def fill_mask(self, game: Any, mask: np.ndarray) -> None:
        """Set 1 at every legal action id of the player to act (``mask``: zeroed int8, one entry per action)."""

    def apply(self, game: Any, action: int) -> Any:
        """Turn legal action id ``action`` into the engine's move and make it; return what the move returns."""

    def describe(self, game: Any, action: int) -> str:
        """Short human text of action id ``action`` as the player to act in ``game`` would take it."""


def layout_version(env: Any) -> int:
    """The observation layout version of a tableenvs env (raw or wrapped): its encoder's ``LAYOUT_VERSION``, 1 for an
    encoder (or env without one) that does not say."""
    raw = getattr(env, "unwrapped", env)
    version = getattr(getattr(raw, "encoder", None), "LAYOUT_VERSION", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"{type(raw).__name__}'s encoder has LAYOUT_VERSION {version!r}; it must be an integer >= 1")
    return version
