"""Melds on the table (Basic, römi): which templates a hand can lay, lay-offs and joker swaps.

RULES B3, R3, R5, G5. Templates come from ``melds.meld_templates``; a hand lays one using its
natural cards where it holds them and jokers for the rest (the documented canonicalisation: a
joker is never put where the hand holds the natural card).
"""

from __future__ import annotations

from functools import cache

from .cards import JOKER, NUM_RANKS, NUM_SUITS, make_card
from .melds import RUN, SET, Template, meld_templates


_HELD_DIGITS = bytes.maketrans(bytes(range(256)), b"0" + b"1" * 255)
"""Byte translation: a count to the digit "1" if any card is held, else "0"."""


def held_bits(hand) -> int:
    """The card types held as bits: bit c is set when ``hand[c]`` (c < 52) is not zero."""
    try:
        counts = bytes(hand) if type(hand) is list else _presence(hand)
    except (TypeError, ValueError):  # a count outside 0..255
        counts = _presence(hand)
    return int(counts[51::-1].translate(_HELD_DIGITS), 2)


def _presence(hand) -> bytes:
    """Bytes that are zero exactly where the counts are (a numpy array's own bytes are not its
    counts, so anything but bytes goes through a list)."""
    return bytes(hand) if isinstance(hand, (bytes, bytearray)) else bytes([1 if n else 0 for n in hand])


def suit_masks(hand, ace_high: bool) -> list[int]:
    """Per suit, the run positions held: bit p for rank p, and the ace also on bit 13 where it may
    stand high."""
    held = held_bits(hand)
    s0, s1, s2, s3 = held & 0x1FFF, held >> 13 & 0x1FFF, held >> 26 & 0x1FFF, held >> 39 & 0x1FFF
    if ace_high:
        return [s0 | (s0 & 1) << 13, s1 | (s1 & 1) << 13, s2 | (s2 & 1) << 13, s3 | (s3 & 1) << 13]
    return [s0, s1, s2, s3]


def suit_mask(hand, suit: int, ace_high: bool) -> int:
    """``suit_masks(hand, ace_high)[suit]``: the run positions held in one suit."""
    mask = held_bits(hand) >> (suit * NUM_RANKS) & 0x1FFF
    return mask | (mask & 1) << 13 if ace_high else mask


def rank_mask(hand, rank: int) -> int:
    """The suits held at one rank (bit s for suit s)."""
    return ((1 if hand[rank] else 0) | (2 if hand[13 + rank] else 0)
            | (4 if hand[26 + rank] else 0) | (8 if hand[39 + rank] else 0))


class TemplateIndex:
    """Meld templates of one game, indexed for finding the ones a hand can lay quickly."""

    def __init__(self, ace_high: bool, max_jokers: int | None):
        self.ace_high = ace_high
        self.max_jokers = max_jokers
        self.templates: tuple[Template, ...] = meld_templates(ace_high)
        self._sets_by_rank: list[list[tuple[int, int, int]]] = [[] for _ in range(NUM_RANKS)]
        self._runs_by_suit: list[list[tuple[int, int, int]]] = [[] for _ in range(NUM_SUITS)]
        for tid, t in enumerate(self.templates):
            if t.kind == SET:
                mask = sum(1 << (c // NUM_RANKS) for c in t.cards)
                self._sets_by_rank[t.key].append((tid, mask, len(t.cards)))
            else:
                mask = sum(1 << (t.low + i) for i in range(len(t.cards)))
                self._runs_by_suit[t.key].append((tid, mask, len(t.cards)))
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
        jokers = hand[JOKER]
        if self.max_jokers is not None and jokers > self.max_jokers:
            jokers = self.max_jokers  # ``usable_jokers``
        out: list[tuple[int, int]] = []
        held_cards = held_bits(hand)
        m0, m1 = held_cards & 0x1FFF, held_cards >> 13 & 0x1FFF
        m2, m3 = held_cards >> 26 & 0x1FFF, held_cards >> 39 & 0x1FFF
        # the ranks held in enough suits for a set of three with the jokers
        if jokers >= 2:
            ranks = m0 | m1 | m2 | m3
        elif jokers == 1:
            ranks = (m0 & (m1 | m2 | m3)) | (m1 & (m2 | m3)) | (m2 & m3)
        else:
            ranks = (m0 & m1 & (m2 | m3)) | (m2 & m3 & (m0 | m1))
        set_cache = self._set_cache
        while ranks:
            low = ranks & -ranks
            ranks ^= low
            rank = low.bit_length() - 1
            held = (m0 >> rank & 1) | (m1 >> rank & 1) << 1 | (m2 >> rank & 1) << 2 | (m3 >> rank & 1) << 3
            key = (rank, held, jokers)
            hit = set_cache.get(key)
            if hit is None:
                hit = set_cache[key] = self._fits(self._sets_by_rank[rank], held, jokers)
            out.extend(hit)
        run_cache = self._run_cache
        ace_high = self.ace_high
        for suit, held in enumerate((m0, m1, m2, m3)):
            if ace_high and held & 1:
                held |= 1 << 13  # the ace also stands after the king (as ``suit_masks``)
            if held and (held.bit_count() + jokers >= 3):
                key = (suit, held, jokers)
                hit = run_cache.get(key)
                if hit is None:
                    hit = run_cache[key] = self._fits(self._runs_by_suit[suit], held, jokers)
                out.extend(hit)
        return out

    def layable_with(self, hand, card: int) -> list[tuple[int, int]]:
        """The entries of ``layable(hand)`` whose template holds the natural card ``card``
        (in the same order): only sets of its rank and runs of its suit can."""
        jokers = self.usable_jokers(hand)
        rank, suit = card % NUM_RANKS, card // NUM_RANKS
        out: list[tuple[int, int]] = []
        held = rank_mask(hand, rank)
        if held and (held.bit_count() + jokers >= 3):
            key = (rank, held, jokers)
            hit = self._set_cache.get(key)
            if hit is None:
                hit = self._set_cache[key] = self._fits(self._sets_by_rank[rank], held, jokers)
            out.extend(hit)
        held = suit_mask(hand, suit, self.ace_high)
        if held and (held.bit_count() + jokers >= 3):
            key = (suit, held, jokers)
            hit = self._run_cache.get(key)
            if hit is None:
                hit = self._run_cache[key] = self._fits(self._runs_by_suit[suit], held, jokers)
            out.extend(hit)
        templates = self.templates
        return [entry for entry in out if card in templates[entry[0]].cards]

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


LAY_OFF, SWAP, JOKER_LOW_END = 0, 1, 2
"""How a card goes onto a table meld (``meld_placements``): laid off (a joker: at a run's high
end, or in a set), swapped for the joker standing for it, or a joker laid off at a run's low end."""


def meld_placements(meld: list, ace_high: bool, max_jokers: int | None) -> list[tuple[int, int]]:
    """(card, how) for each card that can be played onto a table meld (how: ``LAY_OFF``, ``SWAP``
    or ``JOKER_LOW_END``).

    A joker may stand at either open end of a run (R5): ``(JOKER, LAY_OFF)`` at the high end,
    ``(JOKER, JOKER_LOW_END)`` at the low end. In a set it stands for the first missing suit
    (s h d c).
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
            out.extend((card, LAY_OFF) for card in ends)
            if room_for_joker and max_jokers != 0:
                if high < top:
                    out.append((JOKER, LAY_OFF))
                if low > 0:
                    out.append((JOKER, JOKER_LOW_END))
        for i, card in enumerate(slots):
            if card == JOKER:
                out.append((make_card((low + i) % NUM_RANKS, key), SWAP))
    else:
        size = NUM_SUITS - slots.count(-1)
        for suit, card in enumerate(slots):
            if card == -1 and size < 4:
                out.append((make_card(key, suit), LAY_OFF))
            elif card == JOKER:
                out.append((make_card(key, suit), SWAP))
        if size < 4 and room_for_joker and max_jokers != 0:
            out.append((JOKER, LAY_OFF))
    return out


def place_card(meld: list, card: int, low_end: bool = False) -> int:
    """Play ``card`` onto ``meld`` in place; returns the joker type taken back by a swap, or -1.

    A joker goes to a run's high end, or its low end with ``low_end``; a natural card goes to the
    end (or the joker's place) it fits, the low end first.
    """
    kind, key, low, slots = meld
    if kind == RUN:
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
        if low_end:
            meld[2] = low - 1
            slots.insert(0, JOKER)
        else:
            slots.append(JOKER)
        return -1
    if card == JOKER:
        slots[slots.index(-1)] = JOKER
        return -1
    suit = card // NUM_RANKS
    taken = JOKER if slots[suit] == JOKER else -1
    slots[suit] = card
    return taken
