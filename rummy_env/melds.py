"""Meld validity (RULES G3–G5, I3, B2, R3), meld templates, and melds on the table.

``is_meld`` is the plain statement of the rules and the reference the solver is tested against;
it is not on any hot path. Meld templates enumerate every set and run by the cards it stands
for; the engine lays a template down using natural cards where the hand holds them and jokers
elsewhere.

A run's cards stand on *positions* 0..13: position p is rank ``p % 13``, so the ace is position 0
(low) or 13 (high, where the game allows it). A run never holds both, and never wraps.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

from .cards import JOKER, NUM_RANKS, NUM_SUITS, make_card, rank_of, suit_of

SET = 0
RUN = 1
MAX_RUN = 13


@dataclass(frozen=True)
class MeldRules:
    """What one game allows in a meld."""

    ace_high: bool
    """Whether Q-K-A is a run (I3, R3); A-2-3 always is."""
    max_jokers: int | None
    """Jokers allowed in one meld; None for any number (I3), 0 when the game has none (B1)."""


def _is_set(naturals: list[int], size: int) -> bool:
    if not 3 <= size <= 4:
        return False
    ranks = {rank_of(c) for c in naturals}
    suits = {suit_of(c) for c in naturals}
    return len(ranks) == 1 and len(suits) == len(naturals)


def _is_run(naturals: list[int], size: int, ace_high: bool) -> bool:
    if not 3 <= size <= MAX_RUN:
        return False
    if len({suit_of(c) for c in naturals}) != 1:
        return False
    ranks = [rank_of(c) for c in naturals]
    if len(set(ranks)) != len(ranks):
        return False
    placements = [ranks]
    if ace_high and 0 in ranks:
        placements.append([13 if r == 0 else r for r in ranks])
    return any(max(p) - min(p) + 1 <= size for p in placements)


def classify(naturals: list[int], jokers: int, rules: MeldRules) -> int | None:
    """``SET``, ``RUN`` or None for natural cards plus ``jokers`` jokers (no wild ranks)."""
    if not naturals or (rules.max_jokers is not None and jokers > rules.max_jokers):
        return None
    size = len(naturals) + jokers
    if _is_set(naturals, size):
        return SET
    if _is_run(naturals, size, rules.ace_high):
        return RUN
    return None


def is_meld_cards(cards: list[int], rules: MeldRules, wild_rank: int | None = None) -> bool:
    """Whether card types ``cards`` form one meld; a wild-rank card may be a joker or itself (I2)."""
    fixed = [c for c in cards if c != JOKER and (wild_rank is None or rank_of(c) != wild_rank)]
    wild = [c for c in cards if c != JOKER and wild_rank is not None and rank_of(c) == wild_rank]
    printed = len(cards) - len(fixed) - len(wild)
    for as_joker in itertools.product((False, True), repeat=len(wild)):
        naturals = fixed + [c for c, j in zip(wild, as_joker) if not j]
        if classify(naturals, printed + sum(as_joker), rules) is not None:
            return True
    return False


@dataclass(frozen=True)
class Template:
    """One set or run, by the card types it stands for (in order)."""

    kind: int
    """``SET`` or ``RUN``."""
    cards: tuple[int, ...]
    """The card each position stands for: a set's suits in order, a run low to high."""
    key: int
    """A set's rank, or a run's suit."""
    low: int
    """A run's lowest position (0..13); 0 for a set."""


@cache
def meld_templates(ace_high: bool) -> tuple[Template, ...]:
    """Every set (3 or 4 suits of a rank) and every run, in a fixed order: sets, then runs."""
    out = []
    for rank in range(NUM_RANKS):
        for size in (3, 4):
            for suits in itertools.combinations(range(NUM_SUITS), size):
                out.append(Template(SET, tuple(make_card(rank, s) for s in suits), rank, 0))
    top = 13 if ace_high else 12
    for suit in range(NUM_SUITS):
        for length in range(3, MAX_RUN + 1):
            for low in range(0, top - length + 2):
                cards = tuple(make_card((low + i) % NUM_RANKS, suit) for i in range(length))
                out.append(Template(RUN, cards, suit, low))
    return tuple(out)


# A meld on the table is a small list, cheap to copy: [kind, key, low, slots].
# For a set, slots has one entry per suit: the physical card there (the natural, or JOKER) or -1.
# For a run, slots holds the physical card at each position from ``low`` upwards.


def table_meld_from_template(template: Template, physical: list[int]) -> list:
    """A table meld laid from ``template`` with the given physical cards per position."""
    if template.kind == SET:
        slots = [-1] * NUM_SUITS
        for stands_for, card in zip(template.cards, physical):
            slots[suit_of(stands_for)] = card
        return [SET, template.key, 0, slots]
    return [RUN, template.key, template.low, list(physical)]


def table_meld_cards(meld: list) -> list[tuple[int, int]]:
    """(stands for, physical card) for each card of a table meld."""
    kind, key, low, slots = meld
    if kind == SET:
        return [(make_card(key, s), card) for s, card in enumerate(slots) if card != -1]
    return [(make_card((low + i) % NUM_RANKS, key), card) for i, card in enumerate(slots)]

