"""A text view of a hand for people (docs/env.md "Rendering"): one player's cards, the piles, the table.

Cards are in G2 notation (``docs/rules.md``) with suit symbols (``A♠ T♥ *``); a joker on the table shows what
it stands for (``*=9♦``). With ``color=True`` hearts and diamonds are red and jokers magenta
(ANSI escapes); the env uses colour in ``"human"`` mode when stdout is a terminal and
``NO_COLOR`` is not set, and plain text for ``"ansi"``.
"""

from __future__ import annotations

import os
import sys

from . import solver
from .cards import JOKER, format_card, sort_key, suit_of
from .game import PHASE_DRAW, PHASE_PLAY, GameState
from .melds import table_meld_cards

_RED = "\x1b[31m"
_JOKER = "\x1b[35m"
_RESET = "\x1b[0m"


def terminal_has_color(stream=None) -> bool:
    """Whether ``stream`` (stdout by default) is a terminal that should get colours."""
    stream = sys.stdout if stream is None else stream
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def card_text(card: int, color: bool = False) -> str:
    """One card in G2 notation with a suit symbol, coloured when asked."""
    text = format_card(card, symbols=True)
    if not color:
        return text
    if card == JOKER:
        return f"{_JOKER}{text}{_RESET}"
    if suit_of(card) in (1, 2):  # hearts, diamonds
        return f"{_RED}{text}{_RESET}"
    return text


def cards_text(cards, color: bool = False) -> str:
    """Cards in the order given, space-separated."""
    return " ".join(card_text(c, color) for c in cards)


def hand_text(state: GameState, seat: int, color: bool = False) -> str:
    """``seat``'s hand sorted, with the melds of its best arrangement in brackets first."""
    arranged = hand_arrangements(state, seat)
    if arranged is not None:
        arrangement = arranged[1]
        groups = [f"[{cards_text(meld, color)}]" for meld in arrangement.melds]
        loose = sorted(arrangement.deadwood, key=sort_key)
    else:  # an arrangement is a courtesy: show the plain hand instead
        groups, loose = [], sorted(state.hand_cards(seat), key=sort_key)
    return " ".join(groups + ([cards_text(loose, color)] if loose else []))


def hand_arrangements(state: GameState, seat: int) -> tuple[solver.Arrangement, solver.Arrangement] | None:
    """(the best arrangement of ``seat``'s hand, the one to show people): the same, except that
    where the lives rule leaves every card loose (I5, I7) people are shown the melds the hand holds
    anyway. None when the solver cannot arrange the hand (an arrangement is a courtesy)."""
    hand = state.hands[seat]
    game = state.rules.game
    try:
        best = solver.best_arrangement(hand, game, state.wild_rank)
        shown = best
        if not best.melds and state.rules.spec.lives:
            shown = solver.best_arrangement(hand, game, state.wild_rank, lives=False)
    except (ValueError, KeyError):
        return None
    return best, shown


def table_text(state: GameState, color: bool = False) -> list[str]:
    """One line per table meld, numbered as the action ids number table slots."""
    lines = []
    for slot, meld in enumerate(state.table):
        shown = []
        for stands_for, physical in table_meld_cards(meld):
            if physical == JOKER:
                shown.append(f"{card_text(JOKER, color)}={card_text(stands_for, color)}")
            else:
                shown.append(card_text(physical, color))
        lines.append(f"  {slot:2d}: {' '.join(shown)}")
    return lines


def render_text(state: GameState, seat: int | None = None, match_totals=None, color: bool = False) -> str:
    """The view of ``seat`` (default: the player to act); other hands show only their size."""
    rules = state.rules
    seat = state.current if seat is None else seat
    n = rules.num_players
    if state.is_over:
        status = "hand over"
        if state.result is not None:
            winner = state.result.winner
            status += f": {state.result.outcome}" + ("" if winner is None else f", player_{winner} wins")
    else:
        phase = {PHASE_DRAW: "draw", PHASE_PLAY: "play"}[state.phase]
        status = f"player_{state.current} to {phase}"
    lines = [f"{rules.spec.title} · turn {state.turn} · {status} · stock {len(state.stock)}"]
    top = card_text(state.discard[-1], color) if state.discard else "empty"
    extras = []
    if state.cut_card != -1:
        extras.append(f"cut card {card_text(state.cut_card, color)}")
    if state.wild_card != -1:
        extras.append(f"wild joker {card_text(state.wild_card, color)}")
    if state.must_place != -1:
        extras.append(f"must place {card_text(state.must_place, color)}")
    lines.append(f"discard top {top} ({len(state.discard)} in the pile)" + "".join(f" · {e}" for e in extras))
    if rules.table_melds:
        lines.append("table:" if state.table else "table: empty")
        lines.extend(table_text(state, color))
    players = []
    for p in range(n):
        size = sum(state.hands[p])
        mark = " (opened)" if rules.table_melds and state.opened[p] else ""
        known = [c for c in range(len(state.known[p])) for _ in range(state.known[p][c])]
        known_text = f", holds {cards_text(sorted(known, key=sort_key), color)}" if known and p != seat else ""
        score = f", total {match_totals[p]}" if match_totals is not None else ""
        players.append(f"player_{p}: {size} card{'' if size == 1 else 's'}{mark}{known_text}{score}")
    lines.append("players: " + " · ".join(players))
    lines.append(f"player_{seat}'s hand: {hand_text(state, seat, color) or '(empty)'}")
    return "\n".join(lines)
