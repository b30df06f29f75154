"""Helpers shared by the rules-engine tests (``from conftest import …``): moves named in G2
notation, the legal-move set, refusals that must cite a rule and change nothing, and where
every card is."""

from __future__ import annotations

import re

import pytest

from rummy_env.cards import format_cards, parse_card, parse_cards
from rummy_env.game import DECLARE, DISCARD, DRAW, MELD, PLACE, TAKE_CUT, TAKE_DISCARD, GameState, IllegalMoveError
from rummy_env.melds import table_meld_cards
from rummy_env.table import template_index

DRAW_STOCK = (DRAW, 0, 0)
TAKE = (TAKE_DISCARD, 0, 0)
TAKE_CUT_CARD = (TAKE_CUT, 0, 0)
TEMPLATES = {
    "basic": template_index(False, 0).templates,
    "romi": template_index(True, 2).templates,
}


def discard(card: str):
    return (DISCARD, parse_card(card), 0)


def discards(cards: str) -> set:
    return {discard(c) for c in cards.split()}


def declare(card: str):
    return (DECLARE, parse_card(card), 0)


def place(card: str, slot: int):
    return (PLACE, parse_card(card), slot)


def meld(game: str, cards: str):
    """The MELD move of the template standing for exactly ``cards`` (a set by suit order, a run low to high)."""
    wanted = tuple(parse_cards(cards))
    for tid, template in enumerate(TEMPLATES[game]):
        if template.cards == wanted:
            return (MELD, tid, 0)
    raise AssertionError(f"no {game} meld template {cards!r}")


def legal(state: GameState) -> set:
    """The legal moves as a set (and none listed twice)."""
    moves = state.legal_moves()
    assert len(moves) == len(set(moves)), "legal_moves lists a move twice"
    return set(moves)


def of_kind(state: GameState, kind: int) -> set:
    return {m for m in legal(state) if m[0] == kind}


def cites(message: str, rule: str) -> bool:
    """Whether ``message`` cites ``rule`` (``"R5"``), alone or inside a range like ``R4–R6``."""
    letter, number = rule[0], int(rule[1:])
    for low, high in re.findall(rf"\b{letter}(\d+)(?:\s*[–-]\s*{letter}?(\d+))?", message):
        if int(low) <= number <= int(high or low):
            return True
    return False


def refuse(state: GameState, move, words: str, rule: str) -> str:
    """``move`` raises IllegalMoveError naming it (``words``) and ``rule``, and changes nothing."""
    assert move not in legal(state)
    before = state.to_dict()
    with pytest.raises(IllegalMoveError) as err:
        state.apply(move)
    message = str(err.value)
    assert words in message, message
    assert cites(message, rule), message
    assert state.to_dict() == before
    return message


def table_text(state: GameState, slot: int) -> list[str]:
    """A table meld as 'card' or '*=card' per position, in table order."""
    out = []
    for stands_for, physical in table_meld_cards(state.table[slot]):
        name = format_cards([stands_for])
        out.append(name if physical == stands_for else "*=" + name)
    return out


def pytest_configure(config):
    """The ``slow`` marker (browser tests and other long ones), registered here if pyproject.toml lacks it."""
    markers = config.getini("markers")
    if not any(str(line).startswith("slow") for line in markers):
        config.addinivalue_line("markers", "slow: a long test (e.g. a real browser); deselect with -m 'not slow'")
