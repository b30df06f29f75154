"""Look-ahead cannot leak into the real game, and one field table drives copying and serialising
(``rummy_env/game.py``: ``STATE_FIELDS``, ``GameState._trial``, ``legal_moves``).

Listing legal moves in römi plays trial copies of the state ahead within the turn (taking the
discard top after the first turn, R4; going out with the cut card, R4; plays that must leave the
cards owed to the table placeable, R5). A trial shares the fields no play of a turn changes with
the real game; these tests check it can only read them, and that listing moves and the look-ahead
helpers leave every reachable state exactly as it was.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy_env.cards import JOKER
from rummy_env.game import (
    DISCARD, DRAW, PHASE_DRAW, PHASE_PLAY, STATE_FIELDS, GameState, SharedView, TrialWriteError,
)
from rummy_env.ruleset import GAME_SPECS, GAMES
from rummy_env.scenario import make_state

SHARED = [f for f in STATE_FIELDS if f.shared_in_trial]

setups = st.sampled_from(GAMES).flatmap(
    lambda g: st.tuples(st.just(g), st.integers(*GAME_SPECS[g].players), st.integers(0, 2**32 - 1),
                        st.integers(0, 400)))
examples = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reachable(game: str, players: int, seed: int, steps: int) -> GameState:
    """The state after ``steps`` uniformly random legal moves (or the hand's end), rebuilt from its
    dict so that nothing about it is cached yet."""
    state = GameState.new(game, players, seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if state.is_over:
            break
        moves = state.legal_moves()
        state.apply(moves[rng.randrange(len(moves))])
    return GameState.from_dict(state.to_dict())


# ----------------------------------------------------------------------------- the field table


def test_every_slot_of_the_state_is_in_the_field_table_once():
    names = [f.name for f in STATE_FIELDS]
    assert len(names) == len(set(names))
    assert set(GameState.__slots__) == set(names)
    state = GameState.new("romi", 3, seed=1)
    for name in names:
        getattr(state, name)  # set by the constructor: a field the table forgot would be unset


def test_to_dict_writes_exactly_the_keys_the_table_names():
    state = GameState.new("indian", 2, seed=2, wild_joker=True)
    keys = [key for f in STATE_FIELDS for key in f.keys]
    assert list(state.to_dict()) == keys


def test_only_fields_no_play_changes_are_shared_with_trials():
    assert {f.name for f in SHARED} == {"stock", "turns_taken", "has_laid", "discarded", "history"}
    assert all(f.copy in ("list", "rows") for f in SHARED)


@given(setups)
@examples
def test_clone_and_dict_round_trip_are_independent_of_the_original(setup):
    state = reachable(*setup)
    data = state.to_dict()
    assert GameState.from_dict(data).to_dict() == data
    twin = state.clone()
    assert twin.to_dict() == data and type(twin) is GameState
    if not twin.is_over:
        rng = random.Random(setup[2])
        for _ in range(8):
            if twin.is_over:
                break
            moves = twin.legal_moves()
            twin.apply(moves[rng.randrange(len(moves))])
    for name in ("hands", "known", "discarded"):
        for row in getattr(twin, name):
            row[0] += 1  # writing every row of the copy ...
    for name in ("stock", "discard", "history", "turns_taken", "opened", "has_laid"):
        getattr(twin, name).append(0)
    for meld in twin.table:
        meld[3].append(0)
    assert state.to_dict() == data  # ... changes nothing of the original


# ----------------------------------------------------------------------------- listing moves changes nothing


@given(setups)
@examples
def test_listing_moves_and_the_look_aheads_change_nothing(setup):
    state = reachable(*setup)
    before = state.to_dict()
    moves = state.legal_moves()
    assert state.to_dict() == before
    if state.rules.table_melds and state.phase == PHASE_PLAY:
        state._table_plays()
        state._plays()
    if state.phase == PHASE_DRAW and state.rules.later_take_must_be_placed and state.discard:
        state._can_place_top()
    if state.phase == PHASE_DRAW and state.cut_card != -1:
        state._going_out_plays()
    for move in [(DISCARD, c, 0) for c in range(JOKER + 1)] + [(DRAW, 0, 0)]:
        if move not in moves:
            state.why_illegal(move)  # the refusal's explanation looks ahead as well
    assert state.to_dict() == before
    assert state.legal_moves() == moves


@given(setups)
@examples
def test_legal_moves_cannot_be_changed_by_a_caller(setup):
    state = reachable(*setup)
    moves = state.legal_moves()
    assert type(moves) is tuple and all(type(m) is tuple for m in moves)
    with pytest.raises(AttributeError):
        moves.append((DRAW, 0, 0))  # type: ignore[attr-defined]
    assert state.legal_moves() is moves


# ----------------------------------------------------------------------------- trials cannot write shared fields


@given(setups)
@examples
def test_a_trial_reads_shared_fields_and_cannot_write_them(setup):
    state = reachable(*setup)
    before = state.to_dict()
    trial = state._trial()
    again = trial._trial()  # a trial of a trial reads the same real game
    for field in SHARED:
        name = field.name
        for copy in (trial, again):
            view = getattr(copy, name)
            assert isinstance(view, SharedView)
            if field.copy == "rows":
                assert [list(row) for row in view] == getattr(state, name)
            else:
                assert list(view) == getattr(state, name)
            with pytest.raises(TrialWriteError, match=name):
                setattr(copy, name, [])
            with pytest.raises(TrialWriteError, match=name):
                view.append(0)
            if len(view):
                with pytest.raises(TrialWriteError, match=name):
                    view[0] = view[0]
                with pytest.raises(TrialWriteError, match=name):
                    view.pop()
                if field.copy == "rows":
                    with pytest.raises(TrialWriteError, match=rf"{name}\[0\]"):
                        view[0][0] += 1
    assert state.to_dict() == before
    clone = trial.clone()  # an independent whole game again, lists and all
    assert type(clone) is GameState and clone.to_dict() == trial.to_dict()
    assert trial.to_dict() == before


def test_a_trial_that_tries_to_finish_the_turn_raises_and_the_game_is_unchanged():
    # römi, player 0 in the play phase holds 2s 7s 9d: a discard ends the turn, which writes the
    # discards made, the turns taken and the history, all shared with the real game.
    state = make_state("romi", hands=["2s 7s 9d", "Ks Kh Kd 5c"], discard="4c", stock="Ac 3c 4d",
                       opened=[False, False])
    state.apply((DRAW, 0, 0))
    before = state.to_dict()
    trial = state._trial()
    with pytest.raises(TrialWriteError, match="history"):
        trial._apply_unchecked((DISCARD, 0, 0))
    trial = state._trial()
    with pytest.raises(TrialWriteError, match="discarded"):
        trial._discard(0)
    trial = state._trial()
    with pytest.raises(TrialWriteError, match="stock"):
        trial.hands[0][trial.stock.pop()] += 1
    assert state.to_dict() == before
    assert state.legal_moves()  # and the real game plays on
    state.apply(state.legal_moves()[-1])
