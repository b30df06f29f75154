"""Moves and refusals in the page's plain words (docs/web.md "The page").

The terminal game speaks in commands (``lay 5h on 2``, ``rummy_env.play.command_text``) and the
engine's refusals in G2 notation for ``player_N``; the page says ``lay 5♥ on meld 3`` and "you".
Table melds are numbered from 1 here, as the page shows them (the engine counts slots from 0).
``move_words`` names a move to make, ``done_words`` a move made, ``turn_words`` a whole turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rummy_env.cards import JOKER, RANK_CHARS, SUIT_SYMBOLS, parse_card, rank_of, suit_of
from rummy_env.game import (DECLARE, DISCARD, DRAW, MELD, PLACE, PLACE_JOKER_LOW, TAKE_CUT, TAKE_DISCARD, GameState,
                    Move)
from rummy_env.melds import table_meld_cards
from rummy_env.table import template_index


def card_words(card: int) -> str:
    """A card as the page names it: ``10♥``, ``Q♠``, ``joker``."""
    if card == JOKER:
        return "joker"
    rank = RANK_CHARS[rank_of(card)]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[suit_of(card)]


def cards_words(cards: Sequence[int]) -> str:
    return " ".join(card_words(c) for c in cards)


def meld_number(slot: int) -> str:
    """A table meld as the page numbers it (from 1)."""
    return f"meld {slot + 1}"


def _meld_cards(state: GameState, template: int) -> str:
    """A meld template's cards as the player to act would lay them (``joker as 8♥`` where the hand lacks one)."""
    rules = state.rules
    hand = state.hands[state.current]
    cards = template_index(rules.ace_high, rules.max_jokers).templates[template].cards
    return " ".join(card_words(c) if hand[c] else f"joker as {card_words(c)}" for c in cards)


def _swaps(state: GameState, card: int, slot: int) -> bool:
    """Whether laying natural ``card`` on table meld ``slot`` frees the joker standing for it (R5)."""
    return card != JOKER and slot < len(state.table) and (card, JOKER) in table_meld_cards(state.table[slot])


def move_words(state: GameState, move: Move) -> str:
    """A legal move of the player to act, as a button or a hint says it (``lay 5♥ on meld 3``)."""
    kind, a, b = move
    if kind == DRAW:
        return "draw from the stock"
    if kind == TAKE_DISCARD:
        return f"take {card_words(state.discard[-1])} from the discard pile"
    if kind == TAKE_CUT:
        return "take the cut card and go out"
    if kind == DISCARD:
        return f"discard {card_words(a)}"
    if kind == DECLARE:
        return f"declare, discarding {card_words(a)}"
    if kind == MELD:
        return f"meld {_meld_cards(state, a)}"
    if kind == PLACE:
        if _swaps(state, a, b):
            return f"swap {card_words(a)} for the joker on {meld_number(b)}"
        return f"lay {card_words(a)} on {meld_number(b)}"
    if kind == PLACE_JOKER_LOW:
        return f"lay a joker at the low end of {meld_number(a)}"
    raise ValueError(f"unknown move {move!r}")


def done_words(state: GameState, move: Move, drawn: int | None = None) -> str:
    """``move`` as the log tells it, said before it is applied to ``state`` (``drawn``: the card the person drew)."""
    kind, a, b = move
    if kind == DRAW:
        return "drew from the stock" + (f" ({card_words(drawn)})" if drawn is not None else "")
    if kind == TAKE_DISCARD:
        return f"took {card_words(state.discard[-1])} from the discard pile"
    if kind == TAKE_CUT:
        return f"took the cut card ({card_words(state.cut_card)})"
    if kind == DISCARD:
        return f"discarded {card_words(a)}"
    if kind == DECLARE:
        return f"declared, discarding {card_words(a)}"
    if kind == MELD:
        return f"laid {_meld_cards(state, a)} as {meld_number(len(state.table))}"
    if kind == PLACE:
        if _swaps(state, a, b):
            return f"swapped {card_words(a)} for the joker on {meld_number(b)}"
        return f"laid off {card_words(a)} on {meld_number(b)}"
    if kind == PLACE_JOKER_LOW:
        return f"laid off a joker at the low end of {meld_number(a)}"
    raise ValueError(f"unknown move {move!r}")


def turn_words(moves: Sequence[tuple[Move, str]]) -> str:
    """A whole turn in one line: its moves' words, a run of new melds counted (``laid 3 melds: …``)."""
    parts: list[str] = []
    melds: list[str] = []

    def close_melds() -> None:
        if len(melds) == 1:
            parts.append(melds[0])
        elif melds:
            parts.append(f"laid {len(melds)} melds ({'; '.join(m.removeprefix('laid ') for m in melds)})")
        melds.clear()

    for move, words in moves:
        if move[0] == MELD:
            melds.append(words)
            continue
        close_melds()
        parts.append(words)
    close_melds()
    return ", ".join(parts)


_REFUSAL_HEAD = re.compile(r"^illegal move \(.*?\)(?: for player_\d+)?: ")
_CARD_CODE = re.compile(r"(?<![\w=*])[A2-9TJQK][shdc](?!\w)")
_LONE_JOKER = re.compile(r"(?<![\w=])\*(?![\w=])")
_TABLE_MELD = re.compile(r"\btable meld (\d+)")
_PLAYER = re.compile(r"\bplayer_(\d+)\b")


def plain_reason(reason: str, names: Sequence[str]) -> str:
    """An engine or terminal refusal's reason in the page's words: card codes, meld numbers and seat names
    become the page's (``Qh`` → ``Q♥``, ``table meld 0`` → ``meld 1``, ``player_0`` → ``you``); rule ids stay,
    for the page to link to the rule book."""
    reason = _REFUSAL_HEAD.sub("", reason)
    reason = _CARD_CODE.sub(lambda m: card_words(parse_card(m[0])), reason)
    reason = _LONE_JOKER.sub("joker", reason)
    reason = _TABLE_MELD.sub(lambda m: meld_number(int(m[1])), reason)
    return _PLAYER.sub(lambda m: names[int(m[1])] if int(m[1]) < len(names) else m[0], reason)


def refusal_words(state: GameState, move: Move, reason: str, names: Sequence[str]) -> str:
    """The engine's refusal of ``move``, said plainly: ``you cannot discard 5♥: draw first (I4, B3, R4)``."""
    try:
        named = move_words(state, move)
    except (IndexError, ValueError):  # a move naming no card of the pile or no meld on the table
        named = "make that move"
    return f"you cannot {named}: {plain_reason(reason, names)}"
