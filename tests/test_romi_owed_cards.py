"""Römi's revised R4 and R5: cards owed to the table are placed by any play of the turn, and a
joker laid off on a run may stand at either end.

Scenario tests build a position from a hand diagram (``rummy_env.scenario.make_state``); the
property tests check the guarantees on random positions: no listed move leads to a dead end,
and the look-ahead that decides what is listed agrees with an exhaustive search.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DRAW_STOCK, TAKE, discard, discards, legal, meld, place, refuse, table_text
from rummy_env.cards import JOKER, format_card, parse_card
from rummy_env.game import (
    DISCARD, MELD, PHASE_DRAW, PLACE, PLACE_JOKER_LOW, TAKE_CUT, TAKE_DISCARD, GameState, IllegalMoveError,
)
from rummy_env.melds import table_meld_cards
from rummy_env.scenario import make_state
from rummy_env.table import template_index

TEMPLATES = template_index(True, 2).templates


def joker_low(slot: int):
    return (PLACE_JOKER_LOW, slot, 0)


# ------------------------------------------------------------------------- R4: the discard top


def test_R4_unopened_player_takes_top_opens_then_lays_it_off():
    # römi, later turn, player 0 has not opened.   table: [0] 9h 9d 9c (player 1's)
    #   hand: 5h 6h 7h Kd 2c     discard top: 9s
    # 9s fits no meld of the hand, and lay-offs need a meld of one's own (R5); but the turn may
    # open with 5h 6h 7h and then lay 9s off on the nines, so taking it is legal (R4).
    state = make_state("romi", hands=["5h 6h 7h Kd 2c", "2d 3d"], discard="4c 9s", stock="Qh",
                       table=["9h 9d 9c"], opened=[False, True])
    assert legal(state) == {DRAW_STOCK, TAKE}
    state.apply(TAKE)
    assert state.owed_cards() == [parse_card("9s")]
    assert legal(state) == {meld("romi", "5h 6h 7h")}
    refuse(state, discard("Kd"), "discard Kd", "R4")
    state.apply(meld("romi", "5h 6h 7h"))
    assert legal(state) == {place("9s", 0)}  # still owed: no discard yet (R4)
    refuse(state, discard("2c"), "9s must be placed", "R4")
    state.apply(place("9s", 0))
    assert state.owed_cards() == []
    assert table_text(state, 0) == ["9s", "9h", "9d", "9c"]
    assert legal(state) >= discards("Kd 2c")


def test_R4_top_placed_two_plays_later_through_a_run_extended_first():
    # römi, later turn, player 0 has opened.   table: [0] 4c 5c 6c
    #   hand: 7c Kd 2h     discard top: 8c
    # 8c reaches the run only once 7c is laid off on it: two plays, the top placed by the second.
    state = make_state("romi", hands=["7c Kd 2h", "2d 3d"], discard="4h 8c", stock="Qh",
                       table=["4c 5c 6c"], opened=[True, True])
    assert TAKE in legal(state)
    state.apply(TAKE)
    assert legal(state) == {place("7c", 0)}
    state.apply(place("7c", 0))
    assert legal(state) == {place("8c", 0)}
    state.apply(place("8c", 0))
    assert table_text(state, 0) == ["4c", "5c", "6c", "7c", "8c"]
    assert legal(state) == discards("Kd 2h")


def test_R4_no_listed_play_strands_the_top():
    # römi, later turn, player 0 has not opened, the table is empty.
    #   hand: 6h 7h 8h 9h 9d Kc     discard top: 9s
    # 9s can only go in a set with 9h 9d. A run that takes 9h (7h-9h, 6h-9h) would strand it:
    # a dead end, so neither is listed (R4). 9s 9h 9d, or 6h 7h 8h first, are.
    state = make_state("romi", hands=["6h 7h 8h 9h 9d Kc", "2d 3d"], discard="4c 9s", stock="Qh",
                       opened=[False, True])
    state.apply(TAKE)
    assert legal(state) == {meld("romi", "9s 9h 9d"), meld("romi", "6h 7h 8h")}
    refuse(state, meld("romi", "7h 8h 9h"), "could not all be placed", "R4")
    refuse(state, meld("romi", "6h 7h 8h 9h"), "could not all be placed", "R4")
    state.apply(meld("romi", "6h 7h 8h"))
    assert legal(state) == {meld("romi", "9s 9h 9d")}
    state.apply(meld("romi", "9s 9h 9d"))
    assert legal(state) == discards("Kc")


def test_G7_play_leaving_only_the_owed_top_is_refused():
    # römi, later turn, player 0 has not opened.   table: [0] 9h 9d 9c
    #   hand: 5h 6h 7h 8h     discard top: 9s
    # Opening with 5h-8h would leave only 9s, just taken (G7); 5h-7h or 6h-8h leave a card to
    # discard once 9s is laid off on the nines (R4).
    state = make_state("romi", hands=["5h 6h 7h 8h", "2d 3d"], discard="4c 9s", stock="Qh",
                       table=["9h 9d 9c"], opened=[False, True])
    state.apply(TAKE)
    assert legal(state) == {meld("romi", "5h 6h 7h"), meld("romi", "6h 7h 8h")}
    refuse(state, meld("romi", "5h 6h 7h 8h"), "it would leave only 9s", "G7")
    state.apply(meld("romi", "6h 7h 8h"))
    assert legal(state) == {place("9s", 0)}
    state.apply(place("9s", 0))
    assert legal(state) == discards("5h")


def test_R4_top_that_no_plays_can_place_is_refused():
    # römi, later turn, player 0 has not opened.   table: [0] 9h 9d 9c
    #   hand: 5h 6h Kd     discard top: 9s
    # The hand has no meld to open with, so 9s can never reach the nines: it may not be taken.
    state = make_state("romi", hands=["5h 6h Kd", "2d 3d"], discard="4c 9s", stock="Qh",
                       table=["9h 9d 9c"], opened=[False, True])
    assert legal(state) == {DRAW_STOCK}
    refuse(state, TAKE, "take_discard", "R4")


def test_R4_joker_top_placed_after_an_opening_meld_at_either_end():
    # römi, later turn, player 0 has not opened, the table is empty.
    #   hand: 5h 6h 7h Kd Qc     discard top: *
    # The joker taken is owed to the table (R4). Opening with 5h 6h 7h (no joker) is legal: the
    # joker can then go at either end of that run (R5), and Kd or Qc is left to discard.
    state = make_state("romi", hands=["5h 6h 7h Kd Qc", "2d 3d"], discard="4c *", stock="Ah", opened=[False, True])
    state.apply(TAKE)
    assert state.owed_cards() == [JOKER]
    assert meld("romi", "5h 6h 7h") in legal(state)
    refuse(state, discard("Kd"), "must be placed on the table", "R4")
    state.apply(meld("romi", "5h 6h 7h"))
    assert legal(state) == {(PLACE, JOKER, 0), joker_low(0)}
    state.apply(joker_low(0))
    assert table_text(state, 0) == ["*=4h", "5h", "6h", "7h"]
    assert legal(state) == discards("Kd Qc")


# ------------------------------------------------------------------------- R5: swapped jokers


def test_R5_two_swaps_then_one_meld_holding_both_jokers():
    # römi, player 0 has opened.   table: [0] 9s 9h 9d *=9c   [1] Ks Kh Kd *=Kc  (both full)
    #   hand: 9c Kc 5d Jh     stock top: 2s
    # Either swap alone brings back a joker with no home (no meld of two cards and a joker, no
    # room on the table), yet after both, 5d * * (or Jh * *, 2s * *) holds the two jokers and a
    # card is left to discard: both swaps are legal (R5).
    state = make_state("romi", hands=["9c Kc 5d Jh", "2d 3d"], stock="2s",
                       table=["9s 9h 9d *=9c", "Ks Kh Kd *=Kc"], opened=[True, False])
    state.apply(DRAW_STOCK)
    assert legal(state) >= {place("9c", 0), place("Kc", 1)}
    state.apply(place("9c", 0))
    assert state.owed_cards() == [JOKER]
    assert legal(state) == {place("Kc", 1)}  # the only way on: the second swap
    refuse(state, discard("Jh"), "discard Jh", "R5")
    state.apply(place("Kc", 1))
    assert state.owed_cards() == [JOKER, JOKER]
    plays = legal(state)
    assert plays and all(kind == MELD for kind, _, _ in plays)
    index = template_index(True, 2)
    for _, tid, _ in plays:  # every listed meld holds both jokers and one natural card (R3, G5)
        assert sorted(index.physical_cards(tid, state.hands[0]))[1:] == [JOKER, JOKER]
    assert meld("romi", "5d 6d 7d") in plays
    state.apply(meld("romi", "5d 6d 7d"))
    assert table_text(state, 2) == ["5d", "*=6d", "*=7d"] and state.owed_cards() == []
    assert legal(state) == discards("Jh 2s")


def test_R5_swap_refused_when_no_plays_can_place_the_joker():
    # römi, player 0 has opened.   table: [0] 9s 9h 9d *=9c (full)     hand: 9c 5d Jh     stock top: 2s
    # After the swap the joker has no home: no meld with two cards of the hand, no room on the
    # table, and no second swap to pair it with. Not legal (R5).
    state = make_state("romi", hands=["9c 5d Jh", "2d 3d"], stock="2s", table=["9s 9h 9d *=9c"],
                       opened=[True, False])
    state.apply(DRAW_STOCK)
    assert legal(state) == discards("9c 5d Jh 2s")
    refuse(state, place("9c", 0), "place 9c on table meld 0", "R5")


def test_R4_R5_top_and_a_swapped_joker_placed_by_one_meld():
    # römi, later turn, player 0 has opened.   table: [0] 5h *=6h 7h     hand: 6h Qc Kd 2s
    #   discard top: Qs
    # Qs needs a joker: swap 6h for it, then Qs Qc * places both the top and the joker (R4, R5).
    state = make_state("romi", hands=["6h Qc Kd 2s", "2d 3d"], discard="4c Qs", stock="Ah",
                       table=["5h * 7h"], opened=[True, True])
    state.apply(TAKE)
    assert legal(state) == {place("6h", 0)}
    state.apply(place("6h", 0))
    assert state.owed_cards() == [parse_card("Qs"), JOKER]
    qs_qc = [(MELD, tid, 0) for tid, t in enumerate(TEMPLATES)
             if set(t.cards) >= {parse_card("Qs"), parse_card("Qc")} and len(t.cards) == 3]
    assert legal(state) == set(qs_qc)
    state.apply(qs_qc[0])
    assert state.owed_cards() == [] and legal(state) == discards("Kd 2s")


# ------------------------------------------------------------------------- R5: either end of a run


def test_R5_joker_laid_off_at_either_end_of_an_open_run():
    # römi, player 0 has opened.   table: [0] 5h 6h 7h     hand: * Kc 2d     stock top: 9s
    # The joker may stand for 8h (high end) or 4h (low end): two moves, two tables (R5).
    state = make_state("romi", hands=["* Kc 2d", "2s 3s"], stock="9s", table=["5h 6h 7h"], opened=[True, True])
    state.apply(DRAW_STOCK)
    assert {(PLACE, JOKER, 0), joker_low(0)} <= legal(state)
    high, low = state.clone(), state.clone()
    high.apply((PLACE, JOKER, 0))
    low.apply(joker_low(0))
    assert table_text(high, 0) == ["5h", "6h", "7h", "*=8h"]
    assert table_text(low, 0) == ["*=4h", "5h", "6h", "7h"]
    assert high.describe_move(joker_low(0)) == "(place * at the low end of table meld 0)"


@pytest.mark.parametrize("run, open_move, closed_move, words, rule", [
    # Q K A is closed above (the ace is the top, G4): the joker goes below, as J.
    ("Qh Kh Ah", joker_low(0), (PLACE, JOKER, 0), "closed at its high end", "R5"),
    # A 2 3 is closed below (the ace low is the bottom): the joker goes above, as 4.
    ("Ah 2h 3h", (PLACE, JOKER, 0), joker_low(0), "no room below", "G4"),
])
def test_R5_joker_on_a_run_closed_at_one_end_has_one_move(run, open_move, closed_move, words, rule):
    # römi, player 0 has opened.   table: [0] the run     hand: * Kc 2d     stock top: 9s
    state = make_state("romi", hands=["* Kc 2d", "2s 3s"], stock="9s", table=[run], opened=[True, True])
    state.apply(DRAW_STOCK)
    assert open_move in legal(state)
    refuse(state, closed_move, "table meld 0", rule)
    assert words in refuse(state, closed_move, "table meld 0", rule)


def test_R5_joker_low_end_needs_a_run_and_a_joker():
    # römi, player 0 has opened.   table: [0] 9s 9h 9d   [1] 5c 6c 7c     hand: * Kc 2d     stock top: 4s
    # A set has no low end (G4); with no joker in hand there is nothing to lay.
    state = make_state("romi", hands=["* Kc 2d", "2s 3s"], stock="4s", table=["9s 9h 9d", "5c 6c 7c"],
                       opened=[True, True])
    state.apply(DRAW_STOCK)
    assert joker_low(1) in legal(state)
    refuse(state, joker_low(0), "is a set", "G4")
    state = make_state("romi", hands=["Kc 2d", "2s 3s"], stock="4s", table=["9s 9h 9d", "5c 6c 7c"],
                       opened=[True, True])
    state.apply(DRAW_STOCK)
    before = state.to_dict()
    with pytest.raises(IllegalMoveError, match="not in the hand"):
        state.apply(joker_low(1))
    assert state.to_dict() == before


# ------------------------------------------------------------------------- properties


def owed_states(seed: int, count: int) -> list[GameState]:
    """Play-phase römi states of random games in which cards are owed to the table: random legal
    play that takes the discard top and swaps whenever it may."""
    rng = random.Random(seed)
    found: list[GameState] = []
    for hand in range(40):
        state = GameState.new("romi", rng.choice((2, 3, 4)), seed=f"{seed}:{hand}")
        while not state.is_over and len(found) < count:
            moves = state.legal_moves()
            if state.owed_cards():
                found.append(state.clone())
            eager = [m for m in moves if m[0] == TAKE_DISCARD or (m[0] == PLACE and _is_swap(state, m))]
            plays = [m for m in moves if m[0] != DISCARD]
            pick = eager or (plays if plays and rng.random() < 0.7 else moves)
            state.apply(rng.choice(pick))
        if len(found) >= count:
            break
    return found


def _is_swap(state: GameState, move) -> bool:
    _, card, slot = move
    return any(physical == JOKER and stands_for == card for stands_for, physical in table_meld_cards(state.table[slot]))


def finishes(state: GameState) -> bool:
    """Exhaustively: whether some plays place every owed card and leave a card to discard."""
    if not state.owed_cards():
        return True
    for play in state._table_plays()[0]:
        trial = state.clone()
        trial._apply_play(play)
        if finishes(trial):
            return True
    return False


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_R4_R5_every_walk_of_listed_plays_reaches_a_discard(seed):
    """From a state owing cards, any sequence of listed moves ends the turn by a discard."""
    rng = random.Random(seed)
    states = owed_states(seed, 8)
    for state in states:
        for _ in range(3):
            walk = state.clone()
            for _ in range(40):
                moves = walk.legal_moves()
                assert moves, "a listed move led to a dead end"
                if any(m[0] == DISCARD for m in moves):
                    assert not walk.owed_cards()
                    break
                assert walk.owed_cards()
                walk.apply(rng.choice(moves))
            else:
                raise AssertionError("no discard after 40 plays")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_R4_R5_listed_plays_are_exactly_those_that_can_finish(seed):
    """The look-ahead (quick tests, remembered positions, plays tried in order) lists a play
    exactly when an exhaustive search finds the owed cards a way onto the table after it."""
    for state in owed_states(seed, 8):
        listed = set(state.legal_moves())
        for play in state._table_plays()[0]:
            trial = state.clone()
            trial._apply_play(play)
            assert (play in listed) == finishes(trial), state.describe_move(play)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_R4_taking_the_top_is_listed_exactly_when_it_can_be_placed(seed):
    """In random römi draw phases after the first turn, TAKE is listed iff an exhaustive search
    places the top after taking it."""
    rng = random.Random(seed)
    state = GameState.new("romi", 2, seed=seed)
    checked = 0
    while not state.is_over and checked < 12:
        if state.phase == PHASE_DRAW and state.turns_taken[state.current] > 0 and state.discard:
            trial = state.clone()
            trial._apply_take_discard()
            assert (TAKE in state.legal_moves()) == finishes(trial), format_card(state.discard[-1])
            checked += 1
        moves = state.legal_moves()
        plays = [m for m in moves if m[0] not in (DISCARD,)]
        state.apply(rng.choice(plays if plays and rng.random() < 0.8 else moves))
    assert checked == 12 or state.is_over


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_R4_R5_owed_cards_survive_the_to_dict_round_trip(seed):
    """A state owing cards reads back from JSON owing the same cards, with the same moves."""
    for state in owed_states(seed, 6):
        again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
        assert again.owed_cards() == state.owed_cards() != []
        assert again.to_dict() == state.to_dict() and again.legal_moves() == state.legal_moves()


def goes_out(state: GameState, memo: dict) -> bool:
    """Exhaustively: whether some plays leave one card that may be discarded and nothing owed."""
    hand = state.hands[state.current]
    if not state.owed_cards() and sum(hand) == 1 and not hand[state.taken_card]:
        return True
    table = tuple(sorted((kind, key, low, tuple(slots)) for kind, key, low, slots in state.table))
    key = (bytes(hand), table, state.opened[state.current], state.owed_card, state.owed_jokers)
    if key not in memo:
        memo[key] = False
        for play in state._table_plays()[0]:
            trial = state.clone()
            trial._apply_play(play)
            if goes_out(trial, memo):
                memo[key] = True
                break
    return memo[key]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_R4_cut_card_is_offered_exactly_when_an_exhaustive_search_goes_out(seed):
    """The going-out search (quick tests, sleep sets, swaps first) agrees with trying every
    sequence of plays, swaps placed anywhere (R4, R5, R6)."""
    rng = random.Random(seed)
    state = GameState.new("romi", rng.choice((2, 3, 4)), seed=seed)
    checked = 0
    while not state.is_over:
        if state.phase == PHASE_DRAW and state.cut_card != -1:
            trial = state.clone()
            trial._take_cut_card()
            assert ((TAKE_CUT, 0, 0) in state.legal_moves()) == goes_out(trial, {})
            checked += 1
        moves = [m for m in state.legal_moves() if m[0] != TAKE_CUT] or state.legal_moves()
        plays = [m for m in moves if m[0] != DISCARD]
        state.apply(rng.choice(plays if plays and rng.random() < 0.6 else moves))
    assert checked > 0
