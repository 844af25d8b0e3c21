"""Seating designs: which entrant sits in which seat, game by game, so that no entrant is favoured.

Where you are: the tournament's seating plan (pure combinatorics, no envs). :func:`seating_plan` returns a
:class:`SeatingPlan`: one *block* of seatings that the tournament plays again and again (block ``b`` is games
``b * size .. (b + 1) * size - 1``; with duplicate deals every game of a block is dealt the same cards).

A *seating* is a tuple ``entrant of seat 0, entrant of seat 1, ...``. With ``k`` entrants and ``n`` seats the
*lineup* is ``0, 1, ..., n - 1`` when ``n <= k`` and the list repeated round the table, ``j mod k`` for seat
``j``, when ``n > k`` (2 entrants at 5 seats: ``0 1 0 1 0``). Every design below relabels the lineup: a block is
``{(h(lineup[0]), ..., h(lineup[n - 1])) : h in H}`` for a set ``H`` of permutations of the entrants.

==============  ================================================================================================
design          ``H`` and what it guarantees over every block
==============  ================================================================================================
``all``         every permutation of the entrants, duplicates removed: *every distinct seating once*
                (``k!/(k-n)!`` seatings for ``n <= k``, ``k!`` for ``n > k``). Used when that is at most
                :data:`MAX_ALL_SEATINGS`. The block is unchanged by any relabelling of the entrants, so every
                relation between seats (who sits where, who sits directly after whom, the whole relative order)
                occurs equally often for every entrant, and listing the entrants in another order only reorders
                the games of a block.
``affine``      for ``k = q`` a prime power: the maps ``x -> a*x + b`` (``a != 0``) of the field GF(q)
                (``k (k - 1)`` seatings). Sharply 2-transitive: any two seats ``s != t`` hold every ordered pair
                of distinct entrants exactly once per block, so each entrant sits in each seat equally often and
                each ordered neighbour pair (seat ``s`` then seat ``s + 1``, round the table) occurs equally often.
``projective``  for ``k = q + 1``, ``q`` a prime power: the maps ``x -> (a*x + b) / (c*x + d)`` of the
                projective line over GF(q) (``(k) (k - 1) (k - 2)`` seatings). Sharply 3-transitive, so the same
                guarantees as ``affine`` and every ordered triple of seats too.
``gauntlet``    :func:`gauntlet_plan`: each candidate in turn in one seat, a fixed field of opponents in the
                others; a block gives each candidate each seat once (``k n`` seatings).
==============  ================================================================================================

Other entrant counts (15, 21, 22, ... entrants when every seating would be too many) have no exactly balanced
design here and are refused with an error naming the nearest counts that have one.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from tableenvs.core.validation import check_at_least

#: Largest number of distinct seatings played in full (design ``all``): 5 entrants at 5 seats, 120 games a block.
MAX_ALL_SEATINGS = 120

#: Largest field size used by the ``affine`` and ``projective`` designs.
MAX_FIELD = 64


@dataclass(frozen=True)
class SeatingPlan:
    """One block of seatings (entrant per seat), played again and again; see the module docstring."""

    design: str
    num_entrants: int
    num_players: int
    block: tuple[tuple[int, ...], ...]

    @property
    def size(self) -> int:
        """Games per block."""
        return len(self.block)

    def seating(self, game_index: int) -> tuple[int, ...]:
        """The seating of game ``game_index`` (0-based)."""
        return self.block[game_index % len(self.block)]

    def blocks_for(self, games: int) -> int:
        """Whole blocks needed to play at least ``games`` games."""
        return max(1, math.ceil(games / self.size))

    def describe(self) -> str:
        """One line for table headers, e.g. ``all 6 seatings of 3 entrants at 3 seats``."""
        what = {
            "all": "every distinct seating",
            "affine": "affine design (sharply 2-transitive)",
            "projective": "projective design (sharply 3-transitive)",
            "gauntlet": "gauntlet (each candidate in each seat, the field elsewhere)",
        }[self.design]
        return f"{what}, {self.size} seatings per block"


def seating_plan(num_entrants: int, num_players: int) -> SeatingPlan:
    """The balanced design for ``num_entrants`` entrants at ``num_players`` seats (see the module docstring)."""
    k, n = _check_counts(num_entrants, num_players)
    lineup = tuple(j % k for j in range(n)) if n > k else tuple(range(n))
    if math.perm(k, min(k, n)) <= MAX_ALL_SEATINGS:
        if n <= k:
            block = tuple(itertools.permutations(range(k), n))
        else:
            block = tuple(tuple(p[e] for e in lineup) for p in itertools.permutations(range(k)))
        return SeatingPlan("all", k, n, block)
    field = _prime_power(k)
    if field is not None:
        maps = _affine_maps(GaloisField(*field))
        design = "affine"
    else:
        field = _prime_power(k - 1)
        if field is None:
            lower = max(c for c in range(2, k) if _has_design(c))
            upper = min(c for c in range(k + 1, 4 * k) if _has_design(c))
            raise ValueError(
                f"no exactly balanced seating design for {k} entrants at {n} seats; the nearest entrant counts "
                f"with one are {lower} and {upper} (add or drop entrants)"
            )
        maps = _projective_maps(GaloisField(*field))
        design = "projective"
    block = tuple(tuple(h[e] for e in lineup) for h in maps)
    return SeatingPlan(design, k, n, block)


def gauntlet_plan(num_candidates: int, num_players: int, field_size: int = 1) -> SeatingPlan:
    """Candidates ``0 .. k-1`` each in each seat in turn, the field in every other seat.

    ``field_size == 1``: entrant ``k`` holds every other seat. ``field_size == n - 1``: the seat ``j + 1`` places
    to the candidate's left holds entrant ``k + j``. Block order: seat 0 with candidates 0, 1, ..., then seat 1,
    ... (``k n`` seatings).
    """
    k, n = _check_counts(num_candidates, num_players)
    if field_size not in (1, n - 1):
        raise ValueError(f"field_size must be 1 or {n - 1} (one per other seat), got {field_size!r}")

    def holder(seat: int, candidate_seat: int, candidate: int) -> int:
        if seat == candidate_seat:
            return candidate
        return k if field_size == 1 else k + (seat - candidate_seat) % n - 1

    block = tuple(tuple(holder(s, seat, c) for s in range(n)) for seat in range(n) for c in range(k))
    return SeatingPlan("gauntlet", k + field_size, n, block)


def _check_counts(k: int, n: int) -> tuple[int, int]:
    return check_at_least("number of entrants", k, 1), check_at_least("number of players", n, 1)


def _has_design(k: int) -> bool:
    return math.perm(k, 2) <= MAX_ALL_SEATINGS or _prime_power(k) is not None or _prime_power(k - 1) is not None


def _prime_power(q: int) -> tuple[int, int] | None:
    """``(p, e)`` with ``q = p ** e``, p prime, for ``2 <= q <= MAX_FIELD``; None otherwise."""
    if not 2 <= q <= MAX_FIELD:
        return None
    p = next(d for d in range(2, q + 1) if q % d == 0)
    e = 0
    while q % p == 0:
        q //= p
        e += 1
    return (p, e) if q == 1 else None


class GaloisField:
    """GF(p^e): elements ``0 .. p^e - 1`` (base-p digits = polynomial coefficients), full add/mul tables."""

    def __init__(self, p: int, e: int):
        self.p, self.e, self.q = p, e, p**e
        self.add = [[self._add(a, b) for b in range(self.q)] for a in range(self.q)]
        for modulus in range(self.q, 2 * self.q):  # monic polynomials of degree e, as digit vectors
            mul = [[self._mul(a, b, modulus) for b in range(self.q)] for a in range(self.q)]
            if all(sorted(mul[a]) == list(range(self.q)) for a in range(1, self.q)):  # no zero divisors: a field
                self.mul = mul
                break
        self.neg = [next(b for b in range(self.q) if self.add[a][b] == 0) for a in range(self.q)]
        self.inv = [0] + [self.mul[a].index(1) for a in range(1, self.q)]

    def _digits(self, a: int, length: int) -> list[int]:
        return [(a // self.p**i) % self.p for i in range(length)]

    def _add(self, a: int, b: int) -> int:
        da, db = self._digits(a, self.e), self._digits(b, self.e)
        return sum(((x + y) % self.p) * self.p**i for i, (x, y) in enumerate(zip(da, db, strict=True)))

    def _mul(self, a: int, b: int, modulus: int) -> int:
        da, db = self._digits(a, self.e), self._digits(b, self.e)
        product = [0] * (2 * self.e)
        for i, x in enumerate(da):
            for j, y in enumerate(db):
                product[i + j] = (product[i + j] + x * y) % self.p
        m = self._digits(modulus, self.e + 1)  # monic: m[e] == 1
        for degree in range(2 * self.e - 1, self.e - 1, -1):  # reduce modulo m
            factor = product[degree]
            if factor:
                for i in range(self.e + 1):
                    product[degree - self.e + i] = (product[degree - self.e + i] - factor * m[i]) % self.p
        return sum(product[i] * self.p**i for i in range(self.e))


def _affine_maps(field: GaloisField) -> list[tuple[int, ...]]:
    """Every ``x -> a*x + b`` with ``a != 0``, as permutations of ``0 .. q-1``."""
    q, add, mul = field.q, field.add, field.mul
    return [tuple(add[mul[a][x]][b] for x in range(q)) for a in range(1, q) for b in range(q)]


def _projective_maps(field: GaloisField) -> list[tuple[int, ...]]:
    """Every Möbius map ``x -> (a*x + b) / (c*x + d)`` of the projective line ``0 .. q-1`` plus infinity ``q``.

    One representative per map: ``c = 0, d = 1`` (the affine maps, infinity fixed) or ``c = 1`` (any ``d``, and
    ``a*d - b != 0``). Together ``(q + 1) q (q - 1)`` maps.
    """
    q, add, mul, neg, inv = field.q, field.add, field.mul, field.neg, field.inv
    infinity = q
    maps = [(*image, infinity) for image in _affine_maps(field)]
    for d in range(q):
        for a in range(q):
            for b in range(q):
                if add[mul[a][d]][neg[b]] == 0:  # a*d - b*c == 0 with c = 1: not invertible
                    continue
                image = []
                for x in range(q + 1):
                    if x == infinity:
                        image.append(a)  # (a*inf + b) / (inf + d) = a
                        continue
                    denominator = add[x][d]
                    numerator = add[mul[a][x]][b]
                    image.append(infinity if denominator == 0 else mul[numerator][inv[denominator]])
                maps.append(tuple(image))
    return maps
