"""Scenario tests of card notation and single melds (RULES G2–G5, I2, I3, B2, R3).

Each test reads as the rule it names; ``is_meld(game, cards)`` is ``rummy_env.rules.is_meld``.
"""

from __future__ import annotations

import pytest

from rummy_env.cards import JOKER, CardError, make_card
from rummy_env.games import game_spec
from rummy_env.melds import is_meld_cards
from rummy_env.rules import is_meld, parse_cards
from rummy_env.ruleset import GAMES


# G2 notation ----------------------------------------------------------------------------------


def test_G2_ranks_suits_and_joker():
    assert parse_cards("Ah Td 10d Q♠ 2c Ks *") == [
        make_card(0, 1),
        make_card(9, 2),
        make_card(9, 2),
        make_card(11, 0),
        make_card(1, 3),
        make_card(12, 0),
        JOKER,
    ]


def test_G2_symbols_and_lists_accepted():
    assert parse_cards(["A♥", "7♦", "J♣", "10♠"]) == parse_cards("Ah 7d Jc Ts")


@pytest.mark.parametrize("token", ["1h", "Ax", "11s", "Z", "h", "**", "A", "10"])
def test_G2_bad_token_is_an_error_naming_it(token):
    with pytest.raises(CardError) as error:
        parse_cards(f"Ah {token} 2h")
    assert repr(token) in str(error.value)


# G3 sets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_G3_three_or_four_suits_of_a_rank(game):
    assert is_meld(game, "7h 7s 7d")
    assert is_meld(game, "7h 7s 7d 7c")
    assert not is_meld(game, "7h 7s")
    assert not is_meld(game, "7h 7s 8d")


@pytest.mark.parametrize("game", ["indian", "romi"])
def test_G3_identical_cards_never_in_one_set(game):
    assert not is_meld(game, "7h 7h 7s")
    assert not is_meld(game, "7h 7h 7s 7d")
    assert not is_meld(game, "7h 7h *")


def test_G3_a_set_holds_four_cards_at_most():
    assert not is_meld("indian", "7h 7s 7d 7c *")
    assert is_meld("indian", "7h 7s 7d *")


# G4 runs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_G4_consecutive_cards_of_one_suit(game):
    assert is_meld(game, "4h 5h 6h")
    assert is_meld(game, "6h 4h 5h")  # order of the cards does not matter
    assert is_meld(game, "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh")  # thirteen cards
    assert not is_meld(game, "4h 5h 6s")
    assert not is_meld(game, "4h 5h 7h")
    assert not is_meld(game, "4h 5h")


@pytest.mark.parametrize("game", GAMES)
def test_G4_no_wrap_around(game):
    assert not is_meld(game, "Kh Ah 2h")
    assert not is_meld(game, "Qh Kh Ah 2h")


@pytest.mark.parametrize("game", ["indian", "romi"])
def test_G4_ace_never_at_both_ends(game):
    assert not is_meld(game, "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah")


def test_G4_a_set_is_not_a_run():
    assert not is_meld("basic", "7h 7s 8h")


# Q-K-A per game: I3, B2, R3


def test_I3_ace_high_or_low():
    assert is_meld("indian", "Qh Kh Ah")
    assert is_meld("indian", "Ah 2h 3h")


def test_B2_ace_low_only():
    assert is_meld("basic", "Ah 2h 3h")
    assert not is_meld("basic", "Qh Kh Ah")


def test_R3_ace_high_or_low():
    assert is_meld("romi", "Qh Kh Ah")
    assert is_meld("romi", "Ah 2h 3h")


# G5 jokers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["indian", "romi"])
def test_G5_joker_stands_for_any_card(game):
    assert is_meld(game, "4h * 6h")
    assert is_meld(game, "7h 7s *")
    assert is_meld(game, "Kh * *")  # a run J-Q-K, Q-K-A or a set of kings


def test_G5_meld_holds_a_natural_card():
    assert not is_meld("indian", "* * *")
    assert not is_meld("romi", "* *") and not is_meld_cards([JOKER] * 3, game_spec("romi").melds)


def test_B1_no_jokers_in_basic():
    # Basic is played without jokers (B1), so a joker never makes a Basic meld.
    assert is_meld("basic", "4h 5h 6h")
    assert not is_meld("basic", "4h * 6h")
    assert not is_meld("basic", "4h 5h 6h *")


def test_I3_any_number_of_jokers():
    assert is_meld("indian", "4h * * *")
    assert is_meld("indian", "4h * * * * * * * * * * * *")  # thirteen long
    assert not is_meld("indian", "4h * * * * * * * * * * * * *")  # fourteen is too long
    assert is_meld("indian", "2h * * * 6h")


def test_R3_at_most_two_jokers_per_meld():
    assert is_meld("romi", "4h * *")
    assert is_meld("romi", "4h 5h * *")
    assert is_meld("romi", "7h 7s * *")
    # three jokers in one meld break R3
    assert not is_meld("romi", "4h * * *")
    assert not is_meld("romi", "4h 5h * * *")
    romi = game_spec("romi").melds
    assert not is_meld_cards(parse_cards("4h * * *"), romi)
    assert not is_meld_cards(parse_cards("2h * * * 6h"), romi)
    assert not is_meld_cards(parse_cards("7h * * *"), romi)


# I2 wild joker ---------------------------------------------------------------------------------


def test_I2_wild_card_as_a_joker():
    # wild rank 5: every five stands for any card
    assert is_meld("indian", "4h 5s 6h", wild_rank="5")  # 5s as 5h
    assert is_meld("indian", "4h 6h 5s 5c 8h", wild_rank="5")  # 5s and 5c as 5h and 7h
    assert not is_meld("indian", "4h 5s 7h", wild_rank="5")  # one joker cannot fill two gaps
    assert not is_meld("indian", "4h 5s 6s", wild_rank="5")  # 4h and 6s are of two suits
    assert not is_meld("indian", "4h 5s 6h")  # without the wild rank, 5s is a spade


def test_I2_wild_card_as_itself():
    # wild rank 5: 5h in 4h 5h 6h may be itself; 5s 5h 5d is a set of fives
    assert is_meld("indian", "4h 5h 6h", wild_rank="5")
    assert is_meld("indian", "5s 5h 5d", wild_rank="5")
    assert is_meld("indian", "5s 5s 5d", wild_rank="5")  # one 5s as a joker
