"""Melds on the table (Basic, römi): which templates a hand can lay, lay-offs and joker swaps.

RULES B3, R3, R5, G5. Templates come from ``melds.meld_templates``; a hand lays one using its
natural cards where it holds them and jokers for the rest (the documented canonicalisation: a
joker is never put where the hand holds the natural card).
"""

from __future__ import annotations

from functools import cache
from itertools import compress

from .cards import JOKER, NUM_RANKS, NUM_SUITS, make_card
from .melds import RUN, SET, Template, meld_templates


_RANK_SUIT_BITS = tuple((c % NUM_RANKS, c // NUM_RANKS, 1 << (c // NUM_RANKS), 1 << (c % NUM_RANKS)) for c in range(52))


def hand_masks(hand, ace_high: bool) -> tuple[list[int], list[int]]:
    """Per rank, the suits held (bit s); per suit, the run positions held (bit p, ace on 0 and 13)."""
    by_rank = [0] * NUM_RANKS
    by_suit = [0] * NUM_SUITS
    for card in compress(range(52), hand):
        rank, suit, suit_bit, rank_bit = _RANK_SUIT_BITS[card]
        by_rank[rank] |= suit_bit
        by_suit[suit] |= rank_bit
    if ace_high:
        for suit in range(NUM_SUITS):
            if by_suit[suit] & 1:
                by_suit[suit] |= 1 << 13
    return by_rank, by_suit


class TemplateIndex:
    """Meld templates of one game, indexed for finding the ones a hand can lay quickly."""

    def __init__(self, ace_high: bool, max_jokers: int | None):
        self.ace_high = ace_high
        self.max_jokers = max_jokers
        self.templates: tuple[Template, ...] = meld_templates(ace_high)
        self.masks: list[int] = []
        self._sets_by_rank: list[list[tuple[int, int, int]]] = [[] for _ in range(NUM_RANKS)]
        self._runs_by_suit: list[list[tuple[int, int, int]]] = [[] for _ in range(NUM_SUITS)]
        for tid, t in enumerate(self.templates):
            if t.kind == SET:
                mask = sum(1 << (c // NUM_RANKS) for c in t.cards)
                self._sets_by_rank[t.key].append((tid, mask, len(t.cards)))
            else:
                mask = sum(1 << (t.low + i) for i in range(len(t.cards)))
                self._runs_by_suit[t.key].append((tid, mask, len(t.cards)))
            self.masks.append(mask)
        self._run_cache: dict[tuple[int, int, int], tuple[tuple[int, int], ...]] = {}
        self._set_cache: dict[tuple[int, int, int], tuple[tuple[int, int], ...]] = {}

    def _fits(self, entries, held: int, jokers: int) -> tuple[tuple[int, int], ...]:
        out = []
        for tid, mask, size in entries:
            naturals = (mask & held).bit_count()
            if naturals and size - naturals <= jokers:
                out.append((tid, size - naturals))
        return tuple(out)

    def usable_jokers(self, hand) -> int:
        """Jokers the hand may put in one meld."""
        jokers = hand[JOKER]
        return jokers if self.max_jokers is None else min(jokers, self.max_jokers)

    def layable(self, hand) -> list[tuple[int, int]]:
        """(template id, jokers it needs) for every template the hand can lay now."""
        jokers = self.usable_jokers(hand)
        out: list[tuple[int, int]] = []
        by_rank, by_suit = hand_masks(hand, self.ace_high)
        for rank, held in enumerate(by_rank):
            if held and (held.bit_count() + jokers >= 3):
                key = (rank, held, jokers)
                hit = self._set_cache.get(key)
                if hit is None:
                    hit = self._set_cache[key] = self._fits(self._sets_by_rank[rank], held, jokers)
                out.extend(hit)
        for suit, held in enumerate(by_suit):
            if held and (held.bit_count() + jokers >= 3):
                key = (suit, held, jokers)
                hit = self._run_cache.get(key)
                if hit is None:
                    hit = self._run_cache[key] = self._fits(self._runs_by_suit[suit], held, jokers)
                out.extend(hit)
        return out

    def physical_cards(self, tid: int, hand) -> list[int]:
        """The cards the hand puts down for template ``tid``: naturals where held, else jokers."""
        return [c if hand[c] else JOKER for c in self.templates[tid].cards]


@cache
def template_index(ace_high: bool, max_jokers: int | None) -> TemplateIndex:
    """The shared index for one game's meld rules."""
    return TemplateIndex(ace_high, max_jokers)


_PLACEMENTS: dict[tuple, tuple[tuple[int, int], ...]] = {}


def placements(meld: list, ace_high: bool, max_jokers: int | None) -> tuple[tuple[int, int], ...]:
    """``meld_placements``, remembered per meld shape (tables repeat across games)."""
    key = (meld[0], meld[1], meld[2], tuple(meld[3]), ace_high, max_jokers)
    hit = _PLACEMENTS.get(key)
    if hit is None:
        if len(_PLACEMENTS) > 200_000:
            _PLACEMENTS.clear()
        hit = _PLACEMENTS[key] = tuple(meld_placements(meld, ace_high, max_jokers))
    return hit


def meld_placements(meld: list, ace_high: bool, max_jokers: int | None) -> list[tuple[int, int]]:
    """(card, how) for each card that can be played onto a table meld; how is 0 lay-off, 1 swap.

    A joker lays off at the high end of a run when there is room, else at the low end, and in a
    set stands for the first missing suit (s h d c).
    """
    kind, key, low, slots = meld
    out: list[tuple[int, int]] = []
    jokers = slots.count(JOKER)
    room_for_joker = max_jokers is None or jokers < max_jokers
    if kind == RUN:
        length = len(slots)
        high = low + length - 1
        top = 13 if ace_high else 12
        if length < 13:
            ends = []
            if low > 0:
                ends.append(make_card(low - 1, key))
            if high < top:
                card = make_card((high + 1) % NUM_RANKS, key)
                if card not in ends:
                    ends.append(card)
            out.extend((card, 0) for card in ends)
            if ends and room_for_joker and max_jokers != 0:
                out.append((JOKER, 0))
        for i, card in enumerate(slots):
            if card == JOKER:
                out.append((make_card((low + i) % NUM_RANKS, key), 1))
    else:
        size = NUM_SUITS - slots.count(-1)
        for suit, card in enumerate(slots):
            if card == -1 and size < 4:
                out.append((make_card(key, suit), 0))
            elif card == JOKER:
                out.append((make_card(key, suit), 1))
        if size < 4 and room_for_joker and max_jokers != 0:
            out.append((JOKER, 0))
    return out


def place_card(meld: list, card: int, ace_high: bool) -> int:
    """Play ``card`` onto ``meld`` in place; returns the joker type taken back by a swap, or -1."""
    kind, key, low, slots = meld
    if kind == RUN:
        length = len(slots)
        if card != JOKER:
            for i, held in enumerate(slots):
                if held == JOKER and make_card((low + i) % NUM_RANKS, key) == card:
                    slots[i] = card
                    return JOKER
            if low > 0 and card == make_card(low - 1, key):
                meld[2] = low - 1
                slots.insert(0, card)
            else:
                slots.append(card)
            return -1
        if low + length - 1 < (13 if ace_high else 12):  # the caller checked there is room
            slots.append(JOKER)
        else:
            meld[2] = low - 1
            slots.insert(0, JOKER)
        return -1
    if card == JOKER:
        slots[slots.index(-1)] = JOKER
        return -1
    suit = card // NUM_RANKS
    taken = JOKER if slots[suit] == JOKER else -1
    slots[suit] = card
    return taken

