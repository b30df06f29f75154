"""``rules.hand_penalty`` on count arrays (the observation's card order) and on text agree, and a
bad count array is an error naming what is wrong (G1, G2, I1, I7, B5, R7)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from rummy_env.ruleset import make_ruleset
from rummy_env import rules, solver
from rummy_env.cards import JOKER, NUM_TYPES, CardError, format_cards, from_counts, to_counts
from rummy_env.encoding import ObservationEncoder
from rummy_env.game import GameState
from agents.view import ObservationReader

DECKS = {"indian": [c for c in range(52) for _ in range(2)] + [JOKER] * 2,
         "basic": list(range(52)),
         "romi": [c for c in range(52) for _ in range(2)] + [JOKER] * 2}


@pytest.mark.parametrize("game", list(DECKS))
def test_count_arrays_pay_what_the_text_pays(game):
    rng = random.Random(game)
    for _ in range(300):
        cards = rng.sample(DECKS[game], rng.randrange(1, 15))
        wild = rng.choice([None, "A", "7", "K"]) if game == "indian" else None
        text = format_cards(cards)
        want = rules.hand_penalty(game, text, wild_rank=wild)
        counts = np.asarray(to_counts(cards))
        for array in (counts, counts.astype(np.int8), counts.astype(np.uint8), counts.astype(np.float32)):
            assert rules.hand_penalty(game, array, wild_rank=wild) == want, (text, wild, array.dtype)


def test_I7_an_observation_hand_plane_is_a_count_array():
    state = GameState.new("indian", 2, seed=5)
    observation = ObservationEncoder(state.rules).encode(state, 0)
    reader = ObservationReader(make_ruleset("indian", 2))
    plane = observation[reader.slices["hand"]]
    assert plane.dtype == np.float32
    text = format_cards(c for c in range(NUM_TYPES) for _ in range(int(plane[c])))
    assert rules.hand_penalty("indian", plane) == rules.hand_penalty("indian", text)


def test_I7_a_known_hand_as_counts():
    counts = np.zeros(NUM_TYPES, np.int64)
    for card in rules.parse_cards("Ah 2h 3h 5c 6c * 9s 9h 9d Kd Kc 4s 8d"):
        counts[card] += 1
    assert rules.hand_penalty("indian", counts) == 32  # both lives: Kd Kc 4s 8d loose (README)


@pytest.mark.parametrize("array, named", [
    (np.zeros(52, np.int64), r"53 counts .* not an array of shape \(52,\)"),
    (np.zeros((2, 53), np.int64), r"not an array of shape \(2, 53\)"),
    (np.zeros(53, bool), "not dtype bool"),
    (np.array(["0"] * 53), "not dtype <U1"),
    (np.zeros(53, object), "not dtype object"),
])
def test_G2_a_count_array_of_the_wrong_shape_or_dtype_is_an_error_naming_it(array, named):
    with pytest.raises(CardError, match=named):
        rules.hand_penalty("indian", array)


def test_G2_a_count_that_is_not_a_whole_number_or_negative_is_an_error_naming_the_card():
    half = np.zeros(53, np.float32)
    half[13] = 0.5
    with pytest.raises(CardError, match=r"count of Ah \(index 13\) is 0\.5, not a whole number"):
        rules.hand_penalty("indian", half)
    nan = np.zeros(53)
    nan[JOKER] = np.nan
    with pytest.raises(CardError, match=r"count of \* \(index 52\) is nan"):
        rules.hand_penalty("romi", nan)
    negative = np.zeros(53, np.int64)
    negative[1] = -1
    with pytest.raises(CardError, match=r"-1 copies of 2s \(index 1\): a count is never negative"):
        rules.hand_penalty("basic", negative)


@pytest.mark.parametrize("game, card, count, named", [
    ("indian", 0, 3, "3 copies of As in 'indian'"),
    ("basic", 13, 2, "2 copies of Ah in 'basic'"),
    ("romi", JOKER, 3, "3 jokers in 'romi'"),
    ("basic", JOKER, 1, "1 jokers in 'basic'"),
    ("indian", JOKER, 9, "9 jokers in 'indian'"),
])
def test_G1_a_count_array_with_more_copies_than_the_deck_holds_is_an_error_naming_the_card(game, card, count, named):
    counts = np.zeros(53, np.int64)
    counts[card] = count
    with pytest.raises(CardError, match=named):
        rules.hand_penalty(game, counts)


def test_I1_an_indian_count_array_of_more_than_14_cards_is_an_error_naming_the_count():
    counts = np.zeros(53, np.int64)
    counts[:15] = 1
    with pytest.raises(CardError, match="at most 14 cards.*not 15"):
        rules.hand_penalty("indian", counts)


def test_G2_remembered_tokens_change_no_answer_and_bad_tokens_are_still_named():
    for _ in range(2):  # the second time from the token memo
        assert rules.hand_penalty("basic", "ah 10D Kc") == 1 + 10 + 10
        with pytest.raises(CardError, match="bad card 'Xh'"):
            rules.hand_penalty("basic", "Ah Xh")
        with pytest.raises(CardError, match="2 copies of Ah"):
            rules.hand_penalty("basic", "ah AH")


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_solver import structured_hand  # noqa: E402


@pytest.mark.parametrize("compiled", [True, False])
def test_I7_structured_count_arrays_pay_what_the_text_pays_with_either_search(compiled):
    """Count arrays of mid-game hands (runs half built, pairs, jokers, wild cards: the compiled
    fast path of ``hand_penalty``) against the same hands as text, whose path checks every card."""
    rng = random.Random(f"structured {compiled}")
    before = solver.use_compiled(compiled)
    try:
        for i in range(300):
            counts, wild = structured_hand(rng, "indian", 13 + i % 2, wild=i % 3 == 0)
            wild_text = None if wild is None else "A23456789TJQK"[wild]
            want = rules.hand_penalty("indian", format_cards(from_counts(counts)), wild_rank=wild_text)
            for dtype in (np.float32, np.uint8, np.int64):
                got = rules.hand_penalty("indian", np.asarray(counts, dtype), wild_rank=wild_text)
                assert got == want, (counts, wild_text, dtype)
    finally:
        solver.use_compiled(before)


def test_G2_a_bad_count_array_is_named_before_a_bad_wild_rank():
    counts = np.zeros(53, np.int64)
    counts[0] = 3
    for wild in (None, "7", "X"):
        with pytest.raises(CardError, match="3 copies of As in 'indian'"):
            rules.hand_penalty("indian", counts, wild_rank=wild)
    with pytest.raises(CardError, match="wild_rank"):
        rules.hand_penalty("indian", np.zeros(53, np.int64), wild_rank="X")


def test_I1_a_float16_or_big_endian_count_array_is_read_like_any_other():
    counts = np.zeros(53, np.int64)
    for card in rules.parse_cards("Ah 2h 3h 5c 6c * 9s 9h 9d Kd Kc 4s 8d"):
        counts[card] += 1
    for array in (counts.astype(np.float16), counts.astype(">i4")):
        assert rules.hand_penalty("indian", array) == 32
