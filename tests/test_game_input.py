"""Bad input to the engine: ``GameState.apply`` of something that is not a move, and
``GameState.from_dict`` of a state no hand can reach. Each raises the documented error
(``IllegalMoveError``, ``InvalidStateError``, both ``ValueError``) naming the problem, and
changes nothing."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from conftest import DRAW_STOCK
from rummy_env.cards import JOKER, parse_card
from rummy_env.game import DRAW, GameState, IllegalMoveError, InvalidStateError
from rummy_env.scenario import make_state


def played(game: str = "romi", moves: int = 25, seed: int = 3) -> GameState:
    """A hand some way in, by always playing the first legal move."""
    state = GameState.new(game, 2, seed=seed)
    for _ in range(moves):
        state.apply(state.legal_moves()[0])
    return state


# ------------------------------------------------------------------------- apply


@pytest.mark.parametrize("move, words", [
    (None, "a move is a tuple (kind, a, b) of three ints"),
    (5, "a move is a tuple (kind, a, b) of three ints"),
    ((0, 0), "not 2 items"),
    ((0, 0, 0, 0), "not 4 items"),
    ((0.0, 0, 0), "kind=0.0 is not an int"),
    ((0, 0.5, 0), "a=0.5 is not an int"),
    ((True, 0, 0), "kind=True is not an int"),
    (("0", 0, 0), "kind='0' is not an int"),
])
def test_apply_of_something_that_is_not_a_move_names_it_and_changes_nothing(move, words):
    state = played()
    before = state.to_dict()
    with pytest.raises(IllegalMoveError) as err:
        state.apply(move)
    assert words in str(err.value) and repr(move) in str(err.value)
    assert isinstance(err.value, ValueError)
    assert state.to_dict() == before


def test_apply_of_a_float_move_leaves_no_float_in_the_history():
    # (0.0, 0, 0) equals (0, 0, 0) as a tuple, so it used to pass as the draw move.
    state = GameState.new("basic", 2, seed=1)
    with pytest.raises(IllegalMoveError):
        state.apply((0.0, 0, 0))
    assert state.history == []
    state.apply(DRAW_STOCK)
    assert state.history == [(DRAW, 0, 0)] and all(type(x) is int for x in state.history[0])


def test_apply_takes_any_sequence_of_integers_and_records_plain_ints():
    state = GameState.new("basic", 2, seed=1)
    state.apply(np.array([DRAW, 0, 0]))
    assert state.history == [(DRAW, 0, 0)] and all(type(x) is int for x in state.history[0])
    assert json.dumps(state.to_dict())


# ------------------------------------------------------------------------- from_dict


def _set(path, value):
    """A change to a state dict: ``path`` is a list of keys and indexes into it."""
    def change(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value(target[path[-1]]) if callable(value) else value
    return change


def _three_copies(data):
    card = next(c for c in range(52) if data["hands"][0][c])  # two decks: both copies are dealt somewhere
    holders = sum(h[card] for h in data["hands"]) + data["stock"].count(card) + data["discard"].count(card)
    assert holders == 2
    data["hands"][1][card] += 1


@pytest.mark.parametrize("change, words", [
    (_three_copies, "holds 3 copies of"),
    (_set(["hands", 0, JOKER], 3), "copies of *"),
    (_set(["stock"], lambda s: s + [parse_card("Ah")] * 3), "copies of Ah"),
    (lambda d: d.pop("hands"), "lacks 'hands'"),
    (_set(["current"], 2), "current=2 is out of range"),
    (_set(["phase"], 7), "phase=7 is out of range"),
    (_set(["phase"], 1.0), "phase=1.0 is out of range"),
    (_set(["hands"], lambda h: h[:1]), "hands has 1 entries, expected 2"),
    (_set(["hands", 0, 3], -1), "hands[0][3]=-1 is out of range"),
    (_set(["stock", 0], 53), "stock[0]=53 is out of range"),
    (_set(["opened", 0], 1), "opened[0]=1 must be True or False"),
    (_set(["taken_card"], 99), "taken_card=99 is out of range"),
    (_set(["cut_card"], 60), "cut_card=60 is out of range"),
    (_set(["table"], [[1, 0, 4, [4, 7, 8]]]), "is not a meld of 'romi'"),
    (_set(["table"], [[0, 3, 0, [3, 16, -1, -1]]]), "is not a meld of 'romi'"),
    (_set(["table"], [[1, 0, 2, [JOKER, JOKER, JOKER]]]), "is not a meld of 'romi'"),
    (_set(["owed_card"], parse_card("Kc")), "is owed to the table"),
    (_set(["owed_jokers"], 2), "jokers are owed to the table"),
    (_set(["result"], {"outcome": "out", "winner": 0, "payments": [0, 5]}), "disagree"),
    (_set(["history"], [[0.0, 0, 0]]), "history[0]"),
    (_set(["game"], "poker"), "unknown game 'poker'"),
    (_set(["options"], {"wild_joker": True}), "unknown option 'wild_joker'"),
])
def test_from_dict_of_an_impossible_state_names_the_problem(change, words):
    data = played().to_dict()
    data["owed_card"], data["owed_jokers"] = -1, 0
    change(data)
    kept = copy.deepcopy(data)
    with pytest.raises(InvalidStateError) as err:
        GameState.from_dict(data)
    assert words in str(err.value), str(err.value)
    assert isinstance(err.value, ValueError)
    assert data == kept  # the dict is left as it was


def test_from_dict_refuses_table_melds_in_indian_and_a_cut_card_outside_romi():
    indian = played("indian").to_dict()
    indian["table"] = [[0, 3, 0, [3, 16, 29, -1]]]
    with pytest.raises(InvalidStateError, match="lays no melds on the table"):
        GameState.from_dict(indian)
    basic = played("basic").to_dict()
    basic["cut_card"] = 5
    with pytest.raises(InvalidStateError, match="cut_card=5 is out of range"):
        GameState.from_dict(basic)


def test_from_dict_accepts_what_to_dict_writes_including_partial_scenario_decks():
    for game in ("indian", "basic", "romi"):
        state = played(game)
        assert GameState.from_dict(json.loads(json.dumps(state.to_dict()))).to_dict() == state.to_dict()
    # A scenario state holds only the cards its diagram names (rummy_env.scenario).
    state = make_state("romi", hands=["5h 6h 7h", "2d"], discard="Qs", stock="Ac", table=["9s 9h *"],
                       cut_card="Js", opened=[True, False])
    assert GameState.from_dict(state.to_dict()).to_dict() == state.to_dict()


def test_from_dict_reads_a_state_written_before_owed_jokers():
    # römi v0 wrote one "must_place" card instead of owed_card and owed_jokers.
    state = make_state("romi", hands=["5h 6h 7h Kd", "2d 3d"], discard="4c 7h", stock="2s")
    state.apply((1, 0, 0))
    old = state.to_dict()
    del old["owed_card"], old["owed_jokers"]
    old["must_place"] = parse_card("7h")
    again = GameState.from_dict(old)
    assert again.owed_cards() == [parse_card("7h")] and again.legal_moves() == state.legal_moves()
