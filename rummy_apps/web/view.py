"""One seat's view of a hand, built only from what that seat may see (docs/web.md "What the browser sees").

``seat_view(state, seat)`` reads the seat's own hand and the public facts of the hand: the
discard pile, the stock's size, the table melds (B3, R5), the cut card (R2) or wild joker (I2),
each player's hand size, whether they have opened, and the cards known to be in their hand
(taken from the discard pile or by a joker swap, G7, R5). Other hands and the stock's order are
never read while the hand goes on; only ``revealed(state)``, once the hand is over, shows every
hand with its best arrangement and what it pays (I6, I7, B5, R7).

Cards are card types (``rummy_env.cards``: ``suit * 13 + rank``, 52 the joker); ``card_faces()``
gives the browser their names, so the page holds no copy of G2 notation.
"""

from __future__ import annotations

from rummy_env.cards import JOKER, NUM_TYPES, format_card, from_counts, rank_of, sort_key, suit_of
from rummy_env.encoding import action_layout
from rummy_env.game import (DECLARE, DISCARD, MELD, MOVE_NAMES, PHASE_DRAW, PHASE_PLAY, PLACE, PLACE_JOKER_LOW,
                            TAKE_CUT, GameState)
from rummy_env.melds import SET, table_meld_cards
from rummy_env.solver import best_arrangement
from rummy_env.table import template_index
from .words import card_words, move_words

PHASES = {PHASE_DRAW: "draw", PHASE_PLAY: "play"}


def card_faces() -> list[dict]:
    """Per card type: its G2 name (``Qh``), the name with a suit symbol (``Q♥``), the page's words for it
    (``10♥``, ``joker``: ``rummy_apps.web.words``), rank and suit letters."""
    faces = []
    for card in range(NUM_TYPES):
        if card == JOKER:
            faces.append({"card": card, "name": "*", "symbol": "*", "words": card_words(card), "rank": "*",
                          "suit": None})
        else:
            name = format_card(card)
            faces.append({"card": card, "name": name, "symbol": format_card(card, symbols=True),
                          "words": card_words(card), "rank": name[:-1], "suit": name[-1],
                          "suit_index": suit_of(card), "rank_index": rank_of(card)})
    return faces


def sorted_cards(counts) -> list[int]:
    """The cards of a count array in display order (by suit, then rank; jokers last)."""
    return sorted(from_counts(counts), key=sort_key)


def arrangement(state: GameState, player: int) -> dict:
    """The best arrangement of ``player``'s hand (the solver's): melds, loose cards and what they pay.

    Indian without both lives pays for every card (I7); its melds are still shown (the hand's
    least-deadwood arrangement), as the terminal game does.
    """
    hand = state.hands[player]
    game = state.rules.game
    best = best_arrangement(hand, game, state.wild_rank)
    shown = best
    if state.rules.spec.lives and not best.melds:  # no life (I7): show the cards' melds all the same
        shown = best_arrangement(hand, game, state.wild_rank, lives=False)
    return {"melds": [list(m) for m in shown.melds], "loose": sorted(shown.deadwood, key=sort_key),
            "penalty": best.penalty}


def table_view(state: GameState) -> list[dict]:
    """The melds on the table (B3, R5): per slot its kind and, per card, (stands for, physical card)."""
    return [{"slot": slot, "kind": "set" if meld[0] == SET else "run",
             "cards": [[stands, physical] for stands, physical in table_meld_cards(meld)]}
            for slot, meld in enumerate(state.table)]


def legal_view(state: GameState) -> list[dict]:
    """The legal moves of the player to act, each with its action id, its words, the cards it uses and whether
    it ``finishes`` the hand (a declaration, the hand's last cards, or the cut card taken to go out)."""
    layout = action_layout(state.rules.game)
    rules = state.rules
    hand = state.hands[state.current]
    templates = template_index(rules.ace_high, rules.max_jokers) if rules.table_melds else None
    out = []
    size = sum(hand)
    for move in state.legal_moves():
        kind, a, b = move
        entry = {"action": layout.action(move), "kind": MOVE_NAMES[kind], "text": move_words(state, move)}
        if kind in (DISCARD, DECLARE):
            entry["card"] = a
        elif kind == MELD:
            entry["cards"] = templates.physical_cards(a, hand)
        elif kind == PLACE:
            swap = a != JOKER and (a, JOKER) in table_meld_cards(state.table[b])  # R5: gives a for its joker
            entry.update(card=a, slot=b, end="high" if a == JOKER else None, swap=swap)
        elif kind == PLACE_JOKER_LOW:
            entry.update(card=JOKER, slot=a, end="low", swap=False)
        used = len(entry["cards"]) if "cards" in entry else 1 if "card" in entry else 0
        entry["finishes"] = kind in (DECLARE, TAKE_CUT) or (used == size and not entry.get("swap"))  # I5, R4
        out.append(entry)
    return out


def seat_view(state: GameState, seat: int) -> dict:
    """What ``seat`` may see of ``state``: its own hand and the public facts, never another hand or the stock.

    ``legal``, ``owed`` and ``taken`` are filled only while ``seat`` is to act.
    """
    rules = state.rules
    to_act = None if state.is_over else state.current
    mine = to_act == seat
    players = []
    for p in range(rules.num_players):
        players.append({"seat": p, "hand_size": sum(state.hands[p]),
                        "opened": bool(state.opened[p]) if rules.table_melds else None,
                        "known": sorted_cards(state.known[p])})
    return {
        "phase": "over" if state.is_over else PHASES[state.phase],
        "to_act": to_act,
        "turn": state.turn,
        "hand": sorted_cards(state.hands[seat]),
        "arrangement": arrangement(state, seat),
        "stock": len(state.stock),
        "discard_top": state.discard[-1] if state.discard else None,
        "discard_count": len(state.discard),
        "cut_card": None if state.cut_card == -1 else state.cut_card,
        "wild_card": None if state.wild_card == -1 else state.wild_card,
        "table": table_view(state) if rules.table_melds else None,
        "players": players,
        "owed": state.owed_cards() if mine else [],
        "taken": state.taken_card if mine and state.taken_card != -1 else None,
        "legal": legal_view(state) if mine else [],
    }


def revealed(state: GameState) -> dict | None:
    """Once the hand is over: how it ended, every hand with its arrangement, and what each pays; else None."""
    result = state.result
    if result is None:
        return None
    return {"outcome": result.outcome, "winner": result.winner, "payments": list(result.payments),
            "points": list(result.rewards),
            "hands": [{"seat": p, "cards": sorted_cards(state.hands[p]), "arrangement": arrangement(state, p)}
                      for p in range(state.rules.num_players)]}
