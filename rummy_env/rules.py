"""The public rules API: parse cards, check melds, score hands (RULES G2–G5, I5, I7, B5, R7).

``game`` is ``"indian"``, ``"basic"`` or ``"romi"``; ``cards`` is a string in G2 notation
(``"Ah 2h 3h *"``) or a list of such strings; ``wild_rank`` is a rank in G2 notation or None.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import solver
from .cards import JOKER, NUM_NATURAL, CardError, card_values, parse_rank, to_counts
from .cards import parse_cards as _parse_cards
from .melds import is_meld_cards, meld_rules

GAMES = ("indian", "basic", "romi")
_COPIES = {"indian": 2, "basic": 1, "romi": 2}
_MAX_JOKERS = {"indian": None, "basic": 0, "romi": 2}


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Card types (ints, see ``rummy_env.cards``) from G2 notation; a bad token is an error naming it."""
    return _parse_cards(text)


def _check_game(game: str) -> None:
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: expected one of {', '.join(map(repr, GAMES))}")


def _wild(wild_rank: str | None) -> int | None:
    return None if wild_rank is None else parse_rank(wild_rank)


def _counts(game: str, cards: str | Iterable[str]) -> list[int]:
    counts = to_counts(_parse_cards(cards))
    copies = _COPIES[game]
    for card in range(NUM_NATURAL):
        if counts[card] > copies:
            raise CardError(f"{counts[card]} copies of one card in {game!r}, which has {copies} per card")
    max_jokers = _MAX_JOKERS[game]
    if max_jokers is not None and counts[JOKER] > max_jokers:
        raise CardError(f"{counts[JOKER]} jokers in {game!r}, which has {max_jokers}")
    return counts


def is_meld(game: str, cards: str | Iterable[str], wild_rank: str | None = None) -> bool:
    """Whether ``cards`` form one set or run under ``game``'s rules (G3–G5, I3, B2, R3)."""
    _check_game(game)
    return is_meld_cards(_parse_cards(cards), meld_rules(game), _wild(wild_rank))


def hand_penalty(game: str, cards: str | Iterable[str], wild_rank: str | None = None) -> int:
    """What ``cards`` pay when the hand ends.

    Indian: the lives rule on the best arrangement (I7, no cap). Basic and römi: the sum of the
    card values (B5, R7), whatever melds the cards could make.
    """
    _check_game(game)
    counts = _counts(game, cards)
    wild = _wild(wild_rank)
    if game == "indian":
        return solver.indian_penalty(counts, wild)
    values = card_values(game)
    return sum(values[c] * n for c, n in enumerate(counts) if n)


def can_declare(cards: str | Iterable[str], wild_rank: str | None = None) -> bool:
    """Whether 13 Indian cards are all in melds with two runs, one of them pure (I5)."""
    counts = _counts("indian", cards)
    if sum(counts) != 13:
        raise ValueError(f"can_declare takes the 13 cards shown, not {sum(counts)}")
    return solver.can_declare(counts, _wild(wild_rank))
