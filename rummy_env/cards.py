"""Cards as small integers, and their G2 notation (``docs/rules.md`` G1, G2).

A *card type* is an int: ``suit * 13 + rank`` for the 52 natural cards, with suits ``s h d c``
(0..3) and ranks ``A 2 … K`` (0..12), and ``JOKER = 52`` for a printed joker. In two-deck games
identical cards share one type, so a hand is a count array of length ``NUM_TYPES`` (53).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

NUM_SUITS = 4
NUM_RANKS = 13
NUM_NATURAL = 52
JOKER = 52
NUM_TYPES = 53

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "shdc"
SUIT_SYMBOLS = "♠♥♦♣"
_SUIT_FROM_CHAR = {c: i for i, c in enumerate(SUIT_CHARS)} | {c: i for i, c in enumerate(SUIT_SYMBOLS)}
_RANK_FROM_TEXT = {c: i for i, c in enumerate(RANK_CHARS)} | {"10": 9}


class CardError(ValueError):
    """Card text that is not G2 notation."""


def make_card(rank: int, suit: int) -> int:
    """The card type of a rank (0 = ace … 12 = king) and a suit (0..3)."""
    return suit * NUM_RANKS + rank


def rank_of(card: int) -> int:
    """Rank index 0..12 of a natural card type."""
    return card % NUM_RANKS


def suit_of(card: int) -> int:
    """Suit index 0..3 of a natural card type."""
    return card // NUM_RANKS


def parse_rank(text: str) -> int:
    """A rank in G2 notation (``"A"``, ``"7"``, ``"T"`` or ``"10"``) as 0..12."""
    if not isinstance(text, str):
        raise CardError(f"bad rank {text!r}: expected a string in G2 notation, like 'A', '7' or 'T'")
    key = text.strip().upper()
    if key not in _RANK_FROM_TEXT:
        raise CardError(f"bad rank {text!r}: expected one of A 2 3 4 5 6 7 8 9 T (or 10) J Q K")
    return _RANK_FROM_TEXT[key]


def parse_card(token: str) -> int:
    """One card in G2 notation (``Ah``, ``Td``, ``10d``, ``Q♠``, ``*``) as a card type."""
    if not isinstance(token, str):
        raise CardError(f"bad card {token!r}: expected a string in G2 notation")
    text = token.strip()
    if text == "*":
        return JOKER
    if len(text) < 2 or text[-1].lower() not in _SUIT_FROM_CHAR and text[-1] not in _SUIT_FROM_CHAR:
        raise CardError(f"bad card {token!r}: expected rank then suit, like 'Ah', '10d', 'Q♠' or '*'")
    suit_char = text[-1] if text[-1] in _SUIT_FROM_CHAR else text[-1].lower()
    rank_text = text[:-1].upper()
    if rank_text not in _RANK_FROM_TEXT:
        raise CardError(f"bad card {token!r}: unknown rank {text[:-1]!r}")
    return make_card(_RANK_FROM_TEXT[rank_text], _SUIT_FROM_CHAR[suit_char])


def parse_cards(cards: str | Iterable[str]) -> list[int]:
    """Cards in G2 notation, a space-separated string or a list of strings, as card types."""
    if isinstance(cards, str):
        return [parse_card(token) for token in cards.split()]
    if isinstance(cards, (bytes, bytearray)) or not isinstance(cards, Iterable):
        raise CardError(f"bad cards {cards!r}: expected a string like 'Ah 2h *' or a list of such strings")
    return [parse_card(token) for token in cards]


def format_card(card: int, symbols: bool = False) -> str:
    """A card type in G2 notation (``"Ah"``, or ``"A♥"`` with ``symbols``)."""
    if card == JOKER:
        return "*"
    if not 0 <= card < NUM_NATURAL:
        raise CardError(f"bad card type {card!r}: expected 0..52")
    suits = SUIT_SYMBOLS if symbols else SUIT_CHARS
    return RANK_CHARS[rank_of(card)] + suits[suit_of(card)]


def format_cards(cards: Iterable[int], symbols: bool = False) -> str:
    """Card types in G2 notation, space-separated, in the order given."""
    return " ".join(format_card(c, symbols) for c in cards)


def to_counts(cards: Iterable[int]) -> list[int]:
    """A count array (length 53) from card types."""
    counts = [0] * NUM_TYPES
    for card in cards:
        counts[card] += 1
    return counts


def from_counts(counts: Sequence[int]) -> list[int]:
    """Card types, sorted, from a count array."""
    return [card for card in range(NUM_TYPES) for _ in range(counts[card])]


def sort_key(card: int) -> tuple[int, int]:
    """Display order: by suit, then rank; jokers last."""
    return (NUM_SUITS, 0) if card == JOKER else (suit_of(card), rank_of(card))
