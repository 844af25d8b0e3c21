"""Llama Party: resampling what one seat cannot know, for ``LlamaPartyEnv.sample_world`` (determinised search).

Where you are: the Llama Party package, beside the rules engine (``rules.py``); the env's ``_resample_hidden`` hook
calls :func:`resample_hidden` on a copy of the game. Nothing here is reached by normal play.

How a world is sampled (:func:`sample_round`): a whole hidden history of the current round, drawn uniformly among
the histories consistent with everything the observer has seen, when every other choice is uniformly random (the
others' goal and pass picks, the dummies' goals and draws, the goal placement's random order). What the observer has
seen: its dealt 8 (its hand, picks and goal, plus what it passed, less what it received), its own picks, what it
received at each pass, the goals revealed so far and the public counts. The sampler deals the other slots anonymous
tokens (exchangeable: a card the observer has never seen), plays the round forward with uniform choices, forces the
outcomes the observer saw (its right neighbour's picks or its dummy's draw, which become the cards it received; the
face-up goals, whose owners are drawn uniformly among the slots the placement rule allows) and keeps the history with
probability ``C(t, f) / C(h, f)`` at each forced step (``f`` cards seen for the first time, ``t`` tokens among the
``h`` cards they came from): that is the likelihood of the observation given the history up to a constant, so the
kept histories are exactly uniform among the consistent ones (rejection sampling; ``HISTORY_TRIES`` tries). A card
the observer had seen before (one it passed, come back) must be where the history put it. The tokens still
anonymous at the end get the sorted unseen cards in a random order. So where the observer's passed cards are now
(passed on, drawn or not from a dummy), which slot owns each goal and the display's face-down order are all
resampled, and the world depends only on what the observer knows and on ``rng``; the world's state is the state
that history leads to (``tests/test_worlds_history.py`` replays it through the engine and checks the observer's
observation at every step of the round). Hands are sorted, and so is what each seat received at each pass.

Once the game is over (the last round's hands shown), and if no history is kept in ``HISTORY_TRIES`` tries (not
seen in the benchmark), the cards the observer has never seen are relabelled instead (:func:`relabel_unseen`:
places in an order that follows the places get the sorted unseen cards in a random order; uniform given where its
passed cards are). Like every determinised search it ignores what the others' choices say about their cards.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from math import comb

import numpy as np

from tableenvs.llama_party.rules import DEAL_SIZE, NUM_SLOTS, PASS_COUNTS, LlamaParty, SeatView, place_goals

#: Tries of the round sampler (rejection sampling) before the relabelling below is used instead
HISTORY_TRIES = 400
_TOKEN = 1000  # cards the observer has not seen yet are tokens _TOKEN, _TOKEN + 1, ... until they get their card


@dataclass
class RoundHistory:
    """A hidden history of the current round that the observer cannot tell from the real one: the deal (four slot
    hands of 8), the engine's random draws in the order it makes them (dummy goals, goal placement, dummy draws)
    and every pick of the round so far in play order (goal choices, then each pass's picks)."""

    deal: list[list[int]]
    draws: list
    actions: list[int]
    #: the round's state after it (hands, goal_of_slot, display, staged, passed, received), as the engine would
    #: have it after replaying the history (``tests/test_worlds_history.py`` replays it and compares)
    state: dict


class _Uniforms:
    """Uniform draws for the round sampler from blocks of ``rng.random`` (one numpy call per 256 draws, where a
    numpy call per choice would cost most of a sample): ``below(k)`` an int in ``0..k-1``, ``pick(m, c)`` ``c``
    distinct indices of ``range(m)`` in random order (a partial Fisher-Yates shuffle), ``random()`` a float."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.block: list[float] = []

    def random(self) -> float:
        if not self.block:
            self.block = self.rng.random(256).tolist()
        return self.block.pop()

    def below(self, k: int) -> int:
        return min(int(self.random() * k), k - 1)

    def pick(self, m: int, c: int) -> list[int]:
        items = list(range(m))
        for i in range(c):
            j = i + self.below(m - i)
            items[i], items[j] = items[j], items[i]
        return items[:c]


class ScriptedDraws:
    """Stands in for the engine's generator while a :class:`RoundHistory` is replayed: returns its draws in order."""

    def __init__(self, draws: list):
        self.draws = list(draws)
        self.used = 0

    def _next(self):
        draw = self.draws[self.used]
        self.used += 1
        return draw

    def integers(self, *args, **kwargs) -> int:
        return self._next()

    def permutation(self, *args, **kwargs) -> np.ndarray:
        return np.asarray(self._next())


def resample_hidden(game: LlamaParty, seat: int, rng: np.random.Generator) -> LlamaParty:
    """The world's game: the current round replayed from a :class:`RoundHistory` sampled by :func:`sample_round`,
    drawing from ``game.rng`` after it (``game`` is the world's own copy); once the game is over, or if no history
    was accepted, ``game`` with every card of the round ``seat`` has never seen relabelled (:func:`relabel_unseen`)."""
    if not game.over:
        history = sample_round(game, seat, rng)
        if history is not None:
            for key, value in history.state.items():
                setattr(game, key, value)
            _canonical_order(game)
            return game
    relabel_unseen(game, seat, rng)
    return game


def _canonical_order(game: LlamaParty) -> None:
    """Orders no one observes, which still follow the deal and the dummies' draws: the hands are sorted, and so is
    what each seat received at each pass."""
    game.hands = [sorted(hand) for hand in game.hands]
    game.received = [_sorted_by_pass(cards) for cards in game.received]
    game.touch()


def relabel_unseen(game: LlamaParty, seat: int, rng: np.random.Generator) -> None:
    """Relabel in place every card of the round ``seat`` has never seen (the fallback of :func:`resample_hidden`)."""
    if not game.over:
        _move_own_goal(game, seat, rng)
    view = game.seen_by(seat)  # the one visibility decision (rules.SeatView)
    seen = {view.goal, *view.hand, *view.picks, *view.passed, *view.received, *view.revealed}
    if game.over:  # the last round's hands were shown (the dummies' stay hidden)
        seen.update(card for hand in game.shown_hands for card in hand)
    # The places of the unseen cards, in an order that follows the places (other slots' hands, the others' picks,
    # the other slots' goals), get the sorted unseen cards in a uniformly random order: what a place gets depends
    # only on ``rng`` and on what ``seat`` knows, never on the card really there.
    places = [card for slot, hand in enumerate(game.hands) if slot != seat for card in hand]
    places += [card for s, picks in enumerate(game.staged) if s != seat for card in picks]
    places += [goal for slot, goal in enumerate(game.goal_of_slot) if slot != seat and goal >= 0]
    unseen = [card for card in places if card not in seen]
    mapping = dict(zip(unseen, rng.permutation(sorted(unseen)).tolist(), strict=True))

    def relabel(cards: list[int]) -> list[int]:
        return [mapping.get(card, card) for card in cards]

    game.hands = [relabel(hand) for hand in game.hands]
    game.goal_of_slot = relabel(game.goal_of_slot)
    game.display = relabel(game.display)
    for key in ("staged", "passed", "received"):
        setattr(game, key, [relabel(cards) if s != seat else cards for s, cards in enumerate(getattr(game, key))])
    _canonical_order(game)


def _sorted_by_pass(cards: list[int]) -> list[int]:
    out, start = [], 0
    for count in PASS_COUNTS:
        out += sorted(cards[start : start + count])
        start += count
    return out


def _move_own_goal(game: LlamaParty, seat: int, rng: np.random.Generator) -> None:
    """Swap the observer's face-down goal with a random face-down position the placement rule allows it."""
    if not game.display:
        return
    position = game.display.index(game.goal_of_slot[seat])
    if position < game.step:
        return  # revealed
    owner = {goal: slot for slot, goal in enumerate(game.goal_of_slot)}
    n = game.num_players

    def allowed_here(position: int) -> bool:
        slot = owner[game.display[position]]
        return game.round_number == 1 or (slot < n and game.totals[slot] == game.totals[seat])

    allowed = [q for q in range(game.step, len(game.display)) if allowed_here(q)]
    target = allowed[int(rng.integers(len(allowed)))]
    game.display[position], game.display[target] = game.display[target], game.display[position]


def world_event_log(lines: list[str], seat: int, num_players: int) -> list[str]:
    """The event log ``lines`` as ``seat`` saw it: its own picks in full, the others' as ``describe_action_public``
    says them (that a goal was chosen, that a card was picked to pass, which of how many); the rules' lines (deals,
    reveals, passes, shown hands, scores) are public and kept."""
    own = f"player_{seat}: "
    others = tuple(f"player_{s}: " for s in range(num_players) if s != seat)
    out = []
    for line in lines:
        if not line.startswith(others) or line.startswith(own):
            out.append(line)
            continue
        name, _, text = line.partition(": ")
        if text.startswith("choose goal "):
            text = "chooses a goal"
        elif text.startswith("pass ") and text.endswith(")") and " (" in text:
            text = "picks a card to pass (" + text.rsplit(" (", 1)[1]
        else:
            text = "picks a card"
        out.append(f"{name}: {text}")
    return out


def replay_round(game: LlamaParty, history: RoundHistory) -> LlamaParty:
    """A new engine in ``game``'s round (its totals, round number, dummy feeds and earlier rounds' public record)
    that has played ``history``: the round's deal, the engine's draws scripted, every pick so far; it then draws
    from ``game.rng``."""
    new = LlamaParty(game.deck, game.num_players)
    script = ScriptedDraws(history.draws)
    new.start(
        script, hands=history.deal, totals=game.totals, first_round=game.round_number, dummy_feeds=game.dummy_feeds
    )
    for card in history.actions:
        new.act(card)
    assert script.used == len(script.draws), "a sampled round must use every scripted draw"
    new.rng = game.rng
    new.round_scores = [list(scores) for scores in game.round_scores]
    new.shown_hands = [list(hand) for hand in game.shown_hands]
    new.shown_display = list(game.shown_display)
    new.log = []
    _canonical_order(new)
    return new


def sample_round(game: LlamaParty, seat: int, rng: np.random.Generator) -> RoundHistory | None:
    """A uniformly random hidden history of the current round among those consistent with everything ``seat`` has
    seen, when every other choice is uniformly random (the others' goal and pass picks, the dummies' goals and
    draws, the goal placement's random order): exact rejection sampling, None after :data:`HISTORY_TRIES` tries.

    Only the cards ``seat`` has seen have a place in the sampler (its own, and every card it received or saw
    revealed, from then on); every other card is an anonymous token, all of them exchangeable, which gets its card
    at the end (the sorted unseen cards in a random order, by token). The others' choices are drawn uniformly; where
    ``seat`` observed their outcome (what it received at a pass: its right neighbour's picks, or its dummy's draw)
    the outcome is forced and the history kept with probability ``C(t, f) / C(h, f)``, ``f`` the cards it saw for the
    first time, ``t`` the tokens among the ``h`` cards they came from: that is the likelihood of the observation given
    the history up to a constant, so the kept histories are exactly uniform among the consistent ones. A card it had
    seen before (one it passed, come back) must be where the history put it, or the history is dropped."""
    view = game.seen_by(seat)  # the one visibility decision (rules.SeatView)
    dealt = Counter(view.hand) + Counter(view.picks) + Counter(view.passed)
    if view.goal >= 0:
        dealt[view.goal] += 1
    dealt -= Counter(view.received)
    if sum(dealt.values()) != DEAL_SIZE or max(dealt.values()) != 1:
        return None
    uniforms = _Uniforms(rng)
    for _ in range(HISTORY_TRIES):
        history = _try_round(game, seat, view, uniforms, sorted(dealt))
        if history is not None:
            return history
    return None


def _try_round(game: LlamaParty, seat: int, view: SeatView, rng: _Uniforms, dealt: list[int]) -> RoundHistory | None:
    """One try of :func:`sample_round`: a history drawn forward from ``dealt`` (the observer's deal), forced to
    what ``view`` (its :class:`SeatView`) shows, or None when the acceptance test drops it. Of the others it reads
    only the public state: the ring, totals, round and step, who is to act and how many picks it has made."""
    n, o, step, to_act = game.num_players, seat, game.step, game.to_act
    label: dict[int, int] = {}  # token -> the card ``seat`` saw it to be
    known = set(dealt)  # cards with a place in the history
    tokens = iter(range(_TOKEN, _TOKEN + NUM_SLOTS * DEAL_SIZE))
    deal = [list(dealt) if slot == o else [next(tokens) for _ in range(DEAL_SIZE)] for slot in range(NUM_SLOTS)]
    hands = [list(hand) for hand in deal]
    draws: list = []
    actions: list[int] = []
    goal = [-1] * NUM_SLOTS
    staged: list[list[int]] = [[] for _ in range(n)]
    passed: list[list[int]] = [[] for _ in range(n)]
    received: list[list[int]] = [[] for _ in range(n)]
    slots: list[int] = []

    def forced(cards: list[int], wanted: list[int]) -> list[int] | None:
        """Indices in ``cards`` of exactly ``wanted`` (tokens given their cards), or None to drop the history."""
        values = [label.get(x, x) for x in cards]
        fresh = sorted(card for card in wanted if card not in known)
        if any(card in known and card not in values for card in wanted):
            return None
        free = [i for i, x in enumerate(values) if x >= _TOKEN]
        if len(free) < len(fresh) or rng.random() >= comb(len(free), len(fresh)) / comb(len(cards), len(fresh)):
            return None
        chosen = [free[i] for i in rng.pick(len(free), len(fresh))]
        for i, card in zip(chosen, fresh, strict=True):
            label[cards[i]] = values[i] = card
            known.add(card)
        return [values.index(card) for card in wanted]

    for slot in range(n, NUM_SLOTS):
        i = rng.below(DEAL_SIZE)
        draws.append(i)
        goal[slot] = hands[slot].pop(i)
    for s in range(n if step else to_act):  # the goal step
        card = view.goal if s == o else hands[s][rng.below(len(hands[s]))]
        hands[s].remove(card)
        goal[s] = card
        actions.append(card)
    if step:
        own = view.goal
        for _ in range(1000):  # the placement's random order, given which face-up goal is (not) the observer's
            order = [rng.pick(NUM_SLOTS, NUM_SLOTS)] if game.round_number == 1 else [rng.pick(n, n)]
            if game.round_number != 1:
                order.append(rng.pick(NUM_SLOTS - n, NUM_SLOTS - n))
            slots = place_goals(game.round_number, range(NUM_SLOTS), n, game.totals, ScriptedDraws(order))
            if all((slots[j] == o) == (view.revealed[j] == own) for j in range(step)):
                break
        else:
            return None
        draws += order
        for j in range(step):
            if slots[j] != o:
                label[goal[slots[j]]] = view.revealed[j]
                known.add(view.revealed[j])
    taken = 0
    for k in range(1, step + 1):
        count = PASS_COUNTS[k - 1]
        complete = k < step
        seen_now = view.received[taken : taken + count]
        for s in range(n):
            picks_made = count if complete or s < to_act else len(game.staged[s]) if s == to_act else 0
            if not picks_made:
                continue
            hand = hands[s]
            if s == o:
                cards = view.passed[taken : taken + count] if complete else list(view.picks)
                values = [label.get(x, x) for x in hand]
                picks = [hand[values.index(card)] for card in cards]
            elif complete and game.left_of[s] == o:
                at = forced(hand, seen_now)
                if at is None:
                    return None
                picks = [hand[i] for i in at]
                picks = [picks[i] for i in rng.pick(len(picks), len(picks))]  # its order of picking
            else:
                picks = [hand[i] for i in rng.pick(len(hand), picks_made)]
            for card in picks:
                hand.remove(card)
            staged[s] = picks
            actions += picks
        if not complete:
            break
        incoming: list[list[int]] = [[] for _ in range(n)]
        for s in range(n):
            target = game.left_of[s]
            if target < n:
                incoming[target] = staged[s]
            else:
                hands[target].extend(staged[s])
        for dummy in range(n, NUM_SLOTS):
            pool = hands[dummy]
            if game.left_of[dummy] == o:
                at = forced(pool, seen_now)
                if at is None:
                    return None
            else:
                at = rng.pick(len(pool), count)
            draws.append(at + [i for i in range(len(pool)) if i not in at])
            incoming[game.left_of[dummy]] = [pool.pop(i) for i in sorted(at, reverse=True)]
        for s in range(n):
            passed[s] += staged[s]
            received[s] += incoming[s]
            hands[s] += incoming[s]
            staged[s] = []
        taken += count
    # every token still anonymous gets one of the cards ``seat`` has never seen, in a random order
    left = [x for hand in deal for x in hand if x >= _TOKEN and x not in label]
    unseen = sorted(set(range(len(game.deck))) - known)
    if len(left) != len(unseen):
        return None
    label.update(zip(left, [unseen[i] for i in rng.pick(len(unseen), len(unseen))], strict=True))

    def relabelled(group: list[list[int]]) -> list[list[int]]:
        return [[label.get(x, x) for x in items] for items in group]

    goal = [label.get(x, x) for x in goal]
    state = {
        "hands": relabelled(hands),
        "goal_of_slot": goal,
        "display": [goal[slot] for slot in slots],
        "staged": relabelled(staged),
        "passed": relabelled(passed),
        "received": relabelled(received),
    }
    return RoundHistory(relabelled(deal), draws, [label.get(x, x) for x in actions], state)
