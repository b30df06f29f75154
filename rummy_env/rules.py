"""The public rules API: parse cards, check melds, score hands (``docs/rules.md`` G2–G5, I5, I7, B5, R7).

``game`` is a registered game's name (``rummy_env.games``: ``"indian"``, ``"basic"``, ``"romi"``);
``cards`` is a string in G2 notation (``"Ah 2h 3h *"``) or a list of such strings; ``wild_rank``
is a rank in G2 notation or None (Indian Rummy only, I2).

``hand_penalty`` also takes the cards as a *count array*: a numpy array of 53 whole numbers, the
copies held of each card type in the order of ``rummy_env.cards`` (``suit * 13 + rank``, suits
``s h d c``, ranks ``A 2 … K``, then the joker at 52), which is also the order of every card plane
of the observation (``rummy_env.encoding``): an observation's ``hand`` plane can be passed as it
is. Integer arrays, and float arrays holding whole numbers, are accepted; anything else (another
shape, dtype, a negative count, more copies than the deck holds) is a ``CardError`` naming it.

Input is bounded by what the games' decks and hands hold, so that every answer comes quickly: no
more copies of a card than the game's decks have (two in Indian and römi, one in Basic), no more
jokers than its deck can hold (Indian 8, the most of option ``printed_jokers``; römi 2; Basic
none), and for the Indian penalty at most 14 cards (13 in a hand, 14 mid-turn: I1, I4). Cards
beyond these raise ``CardError`` (a ``ValueError``) naming them. ``is_meld`` asks only whether
the cards have the shape of a meld: a meld never holds more than 13 cards (G4), so more is False,
and its check takes time linear in the cards, wild ones included.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from . import solver
from .cards import JOKER, NUM_NATURAL, NUM_TYPES, CardError, format_card, parse_card, parse_rank, rank_of
from .cards import parse_cards as _parse_cards
from .cards import to_counts
from .games import GameSpec, game_spec
from .melds import MAX_RUN, is_meld_cards
from .ruleset import make_ruleset

MAX_INDIAN_HAND = 14
"""The most cards an Indian hand holds (13, and one drawn mid-turn: I1, I4): the bound on a hand
scored by the lives rule."""


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Card types (ints, see ``rummy_env.cards``) from G2 notation; a bad token is an error naming it."""
    return _parse_cards(text)


def _wild(spec: GameSpec, wild_rank: str | None) -> int | None:
    if wild_rank is None:
        return None
    if not spec.has_wild_joker:
        raise CardError(f"wild_rank={wild_rank!r}: only Indian Rummy has a wild rank (I2), not {spec.name!r}")
    if type(wild_rank) is str:
        got = _WILD_RANKS.get(wild_rank)
        if got is not None:
            return got
    try:
        rank = parse_rank(wild_rank)
    except CardError as error:
        raise CardError(f"wild_rank: {error}") from None
    _WILD_RANKS[wild_rank] = rank
    return rank


_TOKENS: dict[str, int] = {}
"""Card tokens already parsed (only valid ones, so at most every spelling of the 53 cards)."""
_WILD_RANKS: dict[str, int] = {}


def _text_counts(cards: str | Iterable[str]) -> list[int]:
    """``to_counts(parse_cards(cards))``, with each token's card looked up once per process."""
    if not isinstance(cards, str):
        return to_counts(_parse_cards(cards))
    counts = [0] * NUM_TYPES
    known = _TOKENS.get
    for token in cards.split():
        card = known(token)
        if card is None:
            card = _TOKENS[token] = parse_card(token)  # a bad token raises, naming it
        counts[card] += 1
    return counts


def _array_counts(cards: np.ndarray) -> list[int]:
    """A count array (see the module docstring) as a list of 53 ints; a bad one names what is wrong."""
    if cards.shape != (NUM_TYPES,):
        raise CardError(f"a count array holds {NUM_TYPES} counts (one per card type, rummy_env.cards order), "
                        f"not an array of shape {cards.shape}")
    kind = cards.dtype.kind
    if kind == "f":
        if not np.isfinite(cards).all() or (cards != np.floor(cards)).any():
            bad = int(np.flatnonzero(~np.isfinite(cards) | (cards != np.floor(cards)))[0])
            raise CardError(f"count array: the count of {format_card(bad)} (index {bad}) is {cards[bad].item()!r}, "
                            "not a whole number")
    elif kind not in "iu":
        raise CardError(f"a count array holds whole numbers (an integer or float dtype), not dtype {cards.dtype}")
    counts = cards.astype(np.int64).tolist()
    if min(counts) < 0:
        bad = next(c for c, n in enumerate(counts) if n < 0)
        raise CardError(f"count array: {counts[bad]} copies of {format_card(bad)} (index {bad}): "
                        "a count is never negative")
    return counts


def _counts(spec: GameSpec, cards: str | Iterable[str] | np.ndarray) -> list[int]:
    counts = _array_counts(cards) if isinstance(cards, np.ndarray) else _text_counts(cards)
    copies = spec.decks
    if max(counts[:NUM_NATURAL]) > copies:
        card = next(c for c in range(NUM_NATURAL) if counts[c] > copies)
        raise CardError(f"{counts[card]} copies of {format_card(card)} in {spec.name!r}, "
                        f"whose deck has {copies} per card")
    max_jokers = spec.most_printed_jokers
    if counts[JOKER] > max_jokers:
        raise CardError(f"{counts[JOKER]} jokers in {spec.name!r}, whose deck has at most {max_jokers}")
    return counts


def is_meld(game: str, cards: str | Iterable[str], wild_rank: str | None = None) -> bool:
    """Whether ``cards`` form one set or run under ``game``'s rules (G3–G5, I3, B2, R3)."""
    spec = game_spec(game)
    parsed = _parse_cards(cards)
    wild = _wild(spec, wild_rank)
    if len(parsed) > MAX_RUN:
        return False
    if wild is None:
        return is_meld_cards(parsed, spec.melds, None)
    # Only Indian has a wild rank, and its melds take any number of jokers (I3): a wild card that
    # fits as itself fits as a joker standing for itself, so only the meld's one required natural
    # card (G5) need be tried among the wild cards. Linear, where trying every choice is exponential.
    naturals = [c for c in parsed if c != JOKER and rank_of(c) != wild]
    wild_cards = [c for c in parsed if c != JOKER and rank_of(c) == wild]
    jokers = [JOKER] * (len(parsed) - len(naturals))
    rules = spec.melds
    if naturals:
        return is_meld_cards(naturals + jokers, rules, None)
    return any(is_meld_cards([card] + jokers[1:], rules, None) for card in set(wild_cards))


def hand_penalty(game: str, cards: str | Iterable[str] | np.ndarray, wild_rank: str | None = None) -> int:
    """What ``cards`` pay when the hand ends.

    Indian: the lives rule on the best arrangement (I7, no cap). Basic and römi: the sum of the
    card values (B5, R7), whatever melds the cards could make. ``cards`` is G2 text, a list of
    G2 strings, or a count array of 53 (module docstring), e.g. an observation's ``hand`` plane.
    """
    rules = (_RULES.get(game) if isinstance(game, str) else None) or _rules_of(game)
    spec = rules.spec
    if spec.lives and type(cards) is np.ndarray and (wild_rank is None or type(wild_rank) is str
                                                     and wild_rank in _WILD_RANKS):
        # a count array within the deck's bounds, in one compiled call; else the checks below name what is wrong
        got = solver.indian_penalty_within(cards, _WILD_RANKS.get(wild_rank), spec.decks,
                                           spec.most_printed_jokers, MAX_INDIAN_HAND)
        if got is not None:
            return got
    counts = _counts(spec, cards)
    wild = _wild(spec, wild_rank)
    if spec.lives:
        size = sum(counts)
        if size > MAX_INDIAN_HAND:
            raise CardError(f"hand_penalty({game!r}, ...) takes at most {MAX_INDIAN_HAND} cards "
                            f"(13 in a hand, 14 mid-turn: I1, I4), not {size}")
    return rules.payment(counts, wild_rank=wild)  # the default rule set: no penalty_cap


_RULES: dict = {}
"""Game name -> its default rule set (for the card values)."""


def _rules_of(game: str):
    rules = _RULES[game] = make_ruleset(game, game_spec(game).default_players)
    return rules


def can_declare(cards: str | Iterable[str], wild_rank: str | None = None) -> bool:
    """Whether 13 Indian cards are all in melds with two runs, one of them pure (I5)."""
    spec = game_spec("indian")
    counts = _counts(spec, cards)
    if sum(counts) != 13:
        raise ValueError(f"can_declare takes the 13 cards shown, not {sum(counts)}")
    return solver.can_declare(counts, _wild(spec, wild_rank))
