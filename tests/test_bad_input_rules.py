"""Bad and oversized input to the rules API (``rummy_env.rules``): clear errors, quick answers.

Bounds (the module's docstring): no more copies of a card or jokers than the game's deck holds,
Indian penalties of at most 14 cards (I1, I4); ``is_meld`` is linear in the cards, wild ones too.
"""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env import rules
from rummy_env.cards import JOKER, RANK_CHARS, CardError, format_card, parse_cards
from rummy_env.games import game_spec
from rummy_env.melds import is_meld_cards


@pytest.mark.timeout(10)  # trying every choice of 1000 wild cards would never end
def test_I2_is_meld_with_a_thousand_wild_cards_answers_at_once():
    assert rules.is_meld("indian", ["Ah"] * 1000, wild_rank="A") is False  # G4: no meld holds more than 13 cards


@pytest.mark.timeout(10)  # linear in the cards (rummy_env.rules), not one try per choice of wild cards
def test_I2_is_meld_of_thirteen_wild_cards_is_quick_and_right():
    assert rules.is_meld("indian", ["Ah"] * 12 + ["*"], wild_rank="A") is True  # Ah itself, the rest jokers (I3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*range(52), JOKER]), min_size=1, max_size=7), st.integers(0, 12))
def test_I2_is_meld_with_a_wild_rank_agrees_with_trying_every_choice(cards, wild):
    text = [format_card(c) for c in cards]
    expected = is_meld_cards(cards, game_spec("indian").melds, wild)
    assert rules.is_meld("indian", text, wild_rank=RANK_CHARS[wild]) == expected


def test_I1_an_indian_penalty_of_more_cards_than_a_hand_holds_is_an_error_naming_the_count():
    hand = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks Ad 2d 3d 4d 5d 6d"
    with pytest.raises(CardError, match="at most 14 cards.*not 32"):
        rules.hand_penalty("indian", hand)
    # 14 cards, mid-turn: Ah–6h and 7h–Kh are two pure runs (I5, I7), so only As pays (10)
    assert rules.hand_penalty("indian", hand.split()[:14]) == 10


@pytest.mark.parametrize("game, cards, named", [
    ("indian", "Ah Ah Ah 2c", "3 copies of Ah"),
    ("basic", "Ah Ah 2c", "2 copies of Ah"),
    ("romi", "* * * 2c", "3 jokers"),
    ("basic", "* 2c", "1 jokers"),
    ("indian", "* " * 9, "9 jokers"),
])
def test_G1_more_copies_than_the_deck_holds_are_an_error_naming_the_card(game, cards, named):
    with pytest.raises(CardError, match=named):
        rules.hand_penalty(game, cards)


@pytest.mark.parametrize("wild_rank", [7, 7.0, b"7", ["7"], "X"])
def test_G2_a_wild_rank_not_in_g2_notation_is_an_error_naming_it(wild_rank):
    for call in (lambda: rules.is_meld("indian", "7h 8h 9h", wild_rank=wild_rank),
                 lambda: rules.hand_penalty("indian", "7h 8h 9h", wild_rank=wild_rank),
                 lambda: rules.can_declare("Ah 2h 3h 5c 6c * 9s 9h 9d Kd Kc Ks 4d", wild_rank=wild_rank)):
        with pytest.raises(CardError,
                           match=f"wild_rank: bad rank {wild_rank!r}".replace("[", r"\[").replace(".", r"\.")):
            call()


@pytest.mark.parametrize("game", ["basic", "romi"])
def test_I2_only_indian_has_a_wild_rank(game):
    with pytest.raises(CardError, match=f"only Indian Rummy has a wild rank .*{game!r}"):
        rules.is_meld(game, "7h 8h 9h", wild_rank="7")


@pytest.mark.parametrize("cards", [None, 42, 3.5, b"Ah 2h", object()])
def test_G2_cards_that_are_not_text_are_an_error_naming_them(cards):
    with pytest.raises(CardError, match="bad card"):
        rules.parse_cards(cards)
    with pytest.raises(CardError, match="bad card"):
        parse_cards(cards)


@pytest.mark.parametrize("cards", [[None], ["Ah", 7]])
def test_G2_a_list_holding_a_non_string_names_the_bad_item(cards):
    with pytest.raises(CardError, match=f"bad card {cards[-1]!r}"):
        rules.parse_cards(cards)
