"""SVG primitives for the table pictures, and their rasterisation to an RGB array.

Where you are: shared plumbing. Each game draws its table in ``tableenvs/<game>/picture.py`` with :class:`Svg`
(plain SVG text, no dependency); ``render_mode="rgb_array"`` turns that text into pixels with :func:`rasterise`,
which needs the ``render`` extra (``pip install "tableenvs[render]"``: resvg-py, a self-contained wheel of the
resvg renderer, and Pillow to decode its PNG). The HTML replay viewer (:mod:`tableenvs.play.viewer`) inlines the SVG
text and needs no extra.

Units are SVG user units, one pixel each when rasterised. Text uses the generic ``sans-serif`` family, which
:func:`rasterise` maps to DejaVu Sans (Debian's and most Linux distributions' default font, ``fonts-dejavu-core``).
"""

from __future__ import annotations

import io
from xml.sax.saxutils import escape, quoteattr

import numpy as np

#: The extra that :func:`rasterise` needs, named in its error.
RENDER_EXTRA_HINT = 'render_mode="rgb_array" needs the render extra: pip install "tableenvs[render]"'

SANS_SERIF = "DejaVu Sans"
TABLE_GREEN = "#1e5a3c"
INK = "#1b1b1b"
LIGHT = "#f4f1e8"
GOLD = "#f2c14e"
CARD_BACK = "#3a5a98"


def _attrs(**attributes: object) -> str:
    """``key="value"`` pairs (``_`` in a key becomes ``-``; ``None`` values are left out)."""
    return "".join(
        f" {key.rstrip('_').replace('_', '-')}={quoteattr(str(value))}"
        for key, value in attributes.items()
        if value is not None
    )


class Svg:
    """An SVG picture built element by element; :meth:`text_of` gives the document.

    ``width`` is fixed; the height grows to the lowest element drawn (plus ``margin``), so a layout can simply
    move down the page.
    """

    def __init__(self, width: int, background: str = TABLE_GREEN, margin: int = 12):
        self.width = width
        self.margin = margin
        self.bottom = 0.0
        self.background = background
        self.parts: list[str] = []

    def _extend(self, bottom: float) -> None:
        self.bottom = max(self.bottom, bottom)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str | None = None, rx: float = 0) -> None:
        self.parts.append(f"<rect{_attrs(x=x, y=y, width=w, height=h, rx=rx or None, fill=fill, stroke=stroke)}/>")
        self._extend(y + h)

    def circle(self, cx: float, cy: float, r: float, fill: str, stroke: str | None = None) -> None:
        self.parts.append(f"<circle{_attrs(cx=cx, cy=cy, r=r, fill=fill, stroke=stroke)}/>")
        self._extend(cy + r)

    def text(
        self,
        x: float,
        y: float,
        words: str,
        size: float = 14,
        fill: str = LIGHT,
        anchor: str = "start",
        bold: bool = False,
    ) -> None:
        """``words`` with its baseline at ``y`` (so it occupies about ``y - size .. y + size/4``)."""
        attributes = _attrs(
            x=x,
            y=y,
            font_size=size,
            fill=fill,
            text_anchor=None if anchor == "start" else anchor,
            font_weight="bold" if bold else None,
        )
        self.parts.append(f"<text{attributes}>{escape(words)}</text>")
        self._extend(y + size / 4)

    def card(
        self,
        x: float,
        y: float,
        label: str,
        *,
        w: float = 30,
        h: float = 42,
        fill: str = LIGHT,
        ink: str = INK,
        stroke: str = INK,
        size: float = 15,
        note: str | None = None,
    ) -> None:
        """A card or tile: a rounded box with ``label`` centred (bold) and an optional small ``note`` below it."""
        self.rect(x, y, w, h, fill, stroke, rx=4)
        self.text(x + w / 2, y + h / 2 + size / 3 - (4 if note else 0), label, size, ink, "middle", bold=True)
        if note:
            self.text(x + w / 2, y + h - 4, note, 9, ink, "middle")

    def card_back(self, x: float, y: float, *, w: float = 30, h: float = 42) -> None:
        """A face-down card."""
        self.rect(x, y, w, h, CARD_BACK, LIGHT, rx=4)
        self.rect(x + 4, y + 4, w - 8, h - 8, "none", LIGHT, rx=2)

    def begin(self, **attributes: object) -> None:
        """Open a group ``<g>`` with ``attributes`` (``data_action=7`` writes ``data-action="7"``); :meth:`end`
        closes it. A seat's picture wraps each element that makes a move in a group carrying its action id."""
        self.parts.append(f"<g{_attrs(**attributes)}>")

    def end(self) -> None:
        self.parts.append("</g>")

    def button(self, x: float, y: float, label: str, action: int, *, w: float | None = None, h: float = 26) -> float:
        """A clickable move drawn as a labelled button (gold, rounded) carrying ``data-action``; returns its right
        edge. For the moves no card or tile in the picture stands for (a bid, a wild's value, "draw")."""
        width = w if w is not None else max(30.0, 8.0 * len(label) + 14)
        self.begin(data_action=action, class_="move")
        self.rect(x, y, width, h, GOLD, INK, rx=6)
        self.text(x + width / 2, y + h / 2 + 5, label, 13, INK, "middle", bold=True)
        self.end()
        return x + width

    def buttons(self, x: float, y: float, moves: list[tuple[int, str]], right: float, gap: float = 6) -> float:
        """:meth:`button` for each ``(action, label)`` in rows between ``x`` and ``right``; returns the y below."""
        left, h = x, 26
        for action, label in moves:
            width = max(30.0, 8.0 * len(label) + 14)
            if x > left and x + width > right:
                x, y = left, y + h + gap
            x = self.button(x, y, label, action, w=width) + gap
        return y + h + gap

    def text_of(self) -> str:
        """The SVG document as text."""
        height = int(np.ceil(self.bottom + self.margin))
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{height}" '
            f'viewBox="0 0 {self.width} {height}" font-family="sans-serif">'
        )
        background = f'<rect width="100%" height="100%" fill="{self.background}"/>'
        return "".join([head, background, *self.parts, "</svg>"])


def rasterise(svg: str) -> np.ndarray:
    """The picture ``svg`` (SVG text) as a ``uint8`` array of shape (height, width, 3), RGB.

    Needs the ``render`` extra; without it a :class:`ModuleNotFoundError` names the extra.
    """
    try:
        import resvg_py
        from PIL import Image
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(f"{RENDER_EXTRA_HINT} ({error.name} is missing)", name=error.name) from None
    # resvg's own default sans-serif (Arial) is rarely installed; without a font it silently draws no text.
    png = resvg_py.svg_to_bytes(svg_string=svg, sans_serif_family=SANS_SERIF)
    with Image.open(io.BytesIO(bytes(png))) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
