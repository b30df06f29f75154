"""The replay viewer's steps (docs/web.md "Replays"): a records file replayed with every hand face up.

``replay_steps(records, hand)`` checks every record of a file by replaying it from its deck order
(``rummy_env.records.replay``, as ``python -m rummy_env.records check`` does): a record that
disagrees is a 400 naming its line and action. Then it walks hand ``hand`` action by action and
returns one face-up view per step: every hand, the stock's size and top card, the discard pile's
top, the cut card (R2) or wild joker (I2) and the table melds (B3, R5), with the move's words
(``rummy_apps.web.words``). No seed is used and nothing is stored: the reply is the whole replay.
"""

from __future__ import annotations

from rummy_env.cards import parse_card
from rummy_env.encoding import action_layout
from rummy_env.game import DRAW, GameState
from rummy_env.records import RecordError, replay
from .errors import WebError
from .view import revealed, sorted_cards, table_view
from .words import done_words

MAX_ACTIONS = 4000
"""Actions of the hand shown, at most: a whole hand at the default turn cap (G9) has a few hundred."""


def replay_steps(records: list[tuple[int, dict]], hand: int) -> dict:
    """Hand ``hand`` (from 1) of ``records`` ((line, record) of a file) as face-up steps, each record checked first."""
    if not records:
        raise WebError(400, "the file holds no records: a records file is JSON Lines, one hand a line "
                            "(docs/records.md)")
    if not 1 <= hand <= len(records):
        raise WebError(400, f"hand {hand}: the file holds {len(records)} hands, counted from 1")
    hands = []
    for number, (line, record) in enumerate(records, 1):
        try:
            state = replay(record)
        except RecordError as error:
            raise WebError(400, str(error if error.line is not None else error.at_line(line))[:400]) from None
        if number == hand:
            rules = state.rules
        result = state.result
        hands.append({"hand": number, "line": line, "game": record["game"], "players": record["players"],
                      "outcome": result.outcome, "winner": result.winner, "actions": len(record["actions"])})
    line, record = records[hand - 1]
    if len(record["actions"]) > MAX_ACTIONS:
        raise WebError(413, f"line {line}: the hand has {len(record['actions'])} actions: the viewer steps "
                            f"through at most {MAX_ACTIONS}")
    deck = [parse_card(card) for card in record["deck"]]
    rebuilt = None if record["rebuilt_stock"] is None else [parse_card(c) for c in record["rebuilt_stock"]][::-1]
    state = GameState.from_deck(rules, deck[::-1], record["first_player"], rebuilt)
    layout = action_layout(rules.game)
    steps = [dict(face_up(state), step=0, action=None, seat=None, text="the deal")]
    for index, action in enumerate(record["actions"], 1):
        move = layout.move(action)
        player = state.current
        text = done_words(state, move, state.stock[-1] if move[0] == DRAW else None)
        rebuilds = state.rebuilds
        state.apply(move)
        if state.rebuilds != rebuilds:
            text += "; the stock is rebuilt from the discards (G8)"
        steps.append(dict(face_up(state), step=index, action=action, seat=player, text=text))
    return {"hands": hands, "hand": hand, "line": line, "game": rules.game, "title": rules.spec.title,
            "players": record["players"], "options": rules.options, "seed": record["seed"],
            "lowest_wins": rules.low_total_wins, "steps": steps, "result": revealed(state)}


def face_up(state: GameState) -> dict:
    """Everything of ``state`` with every card face up: the hands, the stock's top, the pile, the table."""
    rules = state.rules
    return {
        "hands": [sorted_cards(hand) for hand in state.hands],
        "opened": [bool(o) for o in state.opened] if rules.table_melds else None,
        "stock": len(state.stock),
        "stock_top": state.stock[-1] if state.stock else None,
        "discard_top": state.discard[-1] if state.discard else None,
        "discard_count": len(state.discard),
        "cut_card": None if state.cut_card == -1 else state.cut_card,
        "wild_card": None if state.wild_card == -1 else state.wild_card,
        "table": table_view(state) if rules.table_melds else None,
        "to_act": None if state.is_over else state.current,
        "turn": state.turn,
    }
