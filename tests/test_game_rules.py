"""Scripted scenarios, one or more per rule id of ``docs/rules.md`` (G1–G10, I1–I9, B1–B6, R1–R8;
matches, I8 B6 R8: ``tests/test_match.py``; römi's owed cards, R4 R5: ``tests/test_romi_owed_cards.py``).

Each test builds a position from a hand diagram in G2 notation (``rummy_env.scenario.make_state``)
and checks what the engine allows and what it does, citing the rule. Diagrams list the hands
before the draw; the stock's last card is its top, and so is the discard pile's.
"""

from __future__ import annotations

import random
import re

import pytest

from conftest import (
    DRAW_STOCK, TAKE, TAKE_CUT_CARD, cites, declare, discard, discards, legal, meld, of_kind, place,
    refuse, table_text,
)
from rummy_env.cards import JOKER, NUM_NATURAL, CardError, format_cards, parse_card, parse_cards
from rummy_env.game import (
    DECLARE, DISCARD, MELD, PLACE, GameState, IllegalMoveError, card_counts, replay,
)
from rummy_env.melds import table_meld_cards
from rummy_env.scenario import make_state
from rummy_env.table import template_index

# ------------------------------------------------------------------------------------- helpers
# (moves in G2 notation, ``legal`` and ``refuse`` are shared: tests/conftest.py; ``card_counts`` is
# rummy_env.game's, the count its state check uses)


def draw_and_discard_drawn(state: GameState) -> None:
    """One quiet turn: draw the stock top and throw it away again."""
    top = state.stock[-1]
    state.apply(DRAW_STOCK)
    state.apply((DISCARD, top, 0))


def test_cites_reads_single_rules_and_ranges():
    assert cites("refused (G7, R4–R6)", "R5")
    assert cites("refused (G7, R4–R6)", "G7")
    assert not cites("refused (G7, R4–R6)", "R3")
    assert not cites("refused (G17)", "G1")


# ------------------------------------------------------------------------------------- G: common


@pytest.mark.parametrize(
    "game, options, decks, jokers",
    [("basic", {}, 1, 0), ("indian", {}, 2, 2), ("indian", {"printed_jokers": 4}, 2, 4),
     ("indian", {"wild_joker": True}, 2, 2), ("romi", {}, 2, 2)],
)
def test_G1_deck_holds_every_card_per_deck_plus_printed_jokers(game, options, decks, jokers):
    # Every card of the deal is somewhere: hands, stock, discard pile, cut card (R2), wild card (I2).
    state = GameState.new(game, seed=11, **options)
    assert card_counts(state) == [decks] * NUM_NATURAL + [jokers]


def test_G2_notation_in_diagrams_and_bad_tokens_named():
    # Ah Td 10c Q♠ * are G2 cards; 'Zh' and '1x' are not, and the error names them.
    state = make_state("romi", hands=["Ah Td 10c Q♠ *", "2s"])
    assert state.hand_cards(0) == sorted(parse_cards("Ah Td Tc Qs *"))
    for bad in ("Zh", "1x", "11h"):
        with pytest.raises(CardError, match=re.escape(repr(bad))):
            make_state("romi", hands=[f"Ah {bad}", "2s"])


def test_G3_set_never_holds_two_identical_cards():
    # römi, two decks.   hand: 9s 9s 9h 9d Kc     stock top: 2c
    # The only set is 9s 9h 9d; the second 9s cannot join it, now or after it is laid (G3).
    state = make_state("romi", hands=["9s 9s 9h 9d Kc", "2d 3d"], stock="2c", opened=[True, False])
    state.apply(DRAW_STOCK)
    assert of_kind(state, MELD) == {meld("romi", "9s 9h 9d")}
    state.apply(meld("romi", "9s 9h 9d"))
    assert legal(state) == discards("9s Kc 2c")
    with pytest.raises(IllegalMoveError):
        state.apply(place("9s", 0))


def test_G4_runs_never_wrap_and_ace_stands_on_one_end():
    # römi (ace high or low).   hand: Qh Kh Ah 2h 3h 9c     stock top: 5d
    # Q-K-A and A-2-3 are runs; K-A-2 and Q-K-A-2 are not (G4).
    state = make_state("romi", hands=["Qh Kh Ah 2h 3h 9c", "2d 3d"], stock="5d")
    state.apply(DRAW_STOCK)
    assert of_kind(state, MELD) == {meld("romi", "Qh Kh Ah"), meld("romi", "Ah 2h 3h")}


def test_G4_longest_run_is_thirteen_cards():
    # römi, two decks.   hand: all thirteen hearts and a second Ah     stock top: 5c
    # A..K and 2..A are 13-card runs; A..K..A (14 cards, the ace at both ends) is not (G4).
    state = make_state("romi", hands=["Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah", "2d 3d"], stock="5c")
    state.apply(DRAW_STOCK)
    templates = template_index(True, 2).templates
    lengths = {len(templates[m[1]].cards) for m in of_kind(state, MELD)}
    assert max(lengths) == 13 and min(lengths) == 3
    assert meld("romi", "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh") in legal(state)
    assert meld("romi", "2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah") in legal(state)


def test_G5_every_meld_holds_a_natural_card():
    # römi.   hand: * * 5c     stock top: 9d
    # Two jokers never meld alone: every meld offered holds 5c or 9d (3 sets + 3 runs each).
    state = make_state("romi", hands=["* * 5c", "2d 3d"], stock="9d")
    state.apply(DRAW_STOCK)
    expected = {meld("romi", t) for t in (
        "5s 5h 5c", "5s 5d 5c", "5h 5d 5c", "3c 4c 5c", "4c 5c 6c", "5c 6c 7c",
        "9s 9h 9d", "9s 9d 9c", "9h 9d 9c", "7d 8d 9d", "8d 9d Td", "9d Td Jd",
    )}
    assert of_kind(state, MELD) == expected


def test_G5_joker_keeps_the_card_it_stands_for():
    # römi, player 0 has opened.   table: [0] 5h *=6h 7h
    #   hand: 4h 8h Kd     stock top: Qs
    # Laying off at both ends leaves the joker standing for 6h, and only 6h can swap it.
    state = make_state("romi", hands=["4h 8h Kd", "2d 3d"], stock="Qs", table=["5h * 7h"], opened=[True, True])
    state.apply(DRAW_STOCK)
    state.apply(place("4h", 0))
    state.apply(place("8h", 0))
    assert table_text(state, 0) == ["4h", "5h", "*=6h", "7h", "8h"]


def test_G6_deal_sizes_and_first_player():
    # Three players, seat 2 starts: 13 cards each, one card face up, the rest is the stock,
    # and play goes 2, 0, 1, 2 …
    state = GameState.new("romi", 3, seed=5, first_player=2)
    assert [sum(h) for h in state.hands] == [13, 13, 13]
    assert len(state.discard) == 1
    assert len(state.stock) == 106 - 3 * 13 - 1 - 1  # less the cut card (R2)
    assert state.current == 2 and legal(state) >= {DRAW_STOCK}
    seats = []
    for _ in range(4):
        seats.append(state.current)
        draw_and_discard_drawn(state)
    assert seats == [2, 0, 1, 2]


def test_G6_deal_goes_one_card_at_a_time_from_the_starting_seat():
    # The same shuffle dealt from seat 1 gives seat 1 the cards seat 0 gets when seat 0 starts.
    a = GameState.new("basic", 2, seed=9, first_player=0)
    b = GameState.new("basic", 2, seed=9, first_player=1)
    assert b.hands[1] == a.hands[0] and b.hands[0] == a.hands[1]
    assert b.discard == a.discard and b.stock == a.stock


def test_G6_first_player_out_of_range_is_an_error():
    with pytest.raises(ValueError, match="first_player=2"):
        GameState.new("basic", 2, first_player=2)


def test_G7_card_taken_from_discard_cannot_be_discarded_same_turn():
    # Indian (two decks).   hand: 2s 5s 8s Jd 3h 6h 9h Qc 4d 7d Tc Kc 9d     discard top: 9d
    # After taking 9d neither 9d may be discarded, nor declared on (G7).
    state = make_state("indian", hands=["2s 5s 8s Jd 3h 6h 9h Qc 4d 7d Tc Kc 9d", "2c"], discard="4s 9d", stock="Ah")
    state.apply(TAKE)
    assert legal(state) == discards("2s 5s 8s Jd 3h 6h 9h Qc 4d 7d Tc Kc")
    refuse(state, discard("9d"), "discard 9d", "G7")


def test_G7_play_leaving_only_the_taken_card_is_illegal():
    # basic.   hand: 5h 6h 7h     discard top: Kc
    # Melding 5h 6h 7h would leave only Kc, which may not be discarded this turn (G7).
    state = make_state("basic", hands=["5h 6h 7h", "2d 3d"], discard="Kc", stock="Ah")
    state.apply(TAKE)
    assert legal(state) == discards("5h 6h 7h")
    refuse(state, meld("basic", "5h 6h 7h"), "meld 5h 6h 7h", "G7")


def test_G7_meld_with_a_taken_joker_that_leaves_another_card_is_legal():
    # römi, first turn.   hand: 5h 6h Kd     discard top: *
    # Taking the joker and melding 4h-5h-6h (or 5h-6h-7h) with it leaves Kd to discard: legal.
    state = make_state("romi", hands=["5h 6h Kd", "2d 3d"], discard="*", stock="Ah", turns_taken=[0, 0])
    state.apply(TAKE)
    assert of_kind(state, MELD) == {meld("romi", "4h 5h 6h"), meld("romi", "5h 6h 7h")}


def test_G7_meld_leaving_only_a_joker_identical_to_the_taken_one_is_illegal():
    # römi, first turn.   hand: 5h 6h *     discard top: *
    # Melding 4h-5h-6h with one joker leaves only the other joker, identical to the one just
    # taken: not legal (G7); were it offered, the player would be left with no legal move.
    state = make_state("romi", hands=["5h 6h *", "2d 3d"], discard="*", stock="Ah", turns_taken=[0, 0])
    state.apply(TAKE)
    assert meld("romi", "4h 5h 6h") not in legal(state)
    assert meld("romi", "5h 6h 7h") not in legal(state)
    for move in legal(state):  # and no legal move leads to a dead end
        trial = state.clone()
        trial.apply(move)
        assert trial.legal_moves(), state.describe_move(move)


def test_R4_joker_on_discard_may_be_taken_when_a_meld_places_it():
    # römi, later turn, player 0 has opened.   hand: 5h 6h Kd     discard top: *
    # Take the joker, meld 4h 5h 6h with it, discard Kd: taking it is legal (R4).
    state = make_state("romi", hands=["5h 6h Kd", "2d 3d"], discard="*", stock="Ah", opened=[True, False])
    assert legal(state) == {DRAW_STOCK, TAKE}


def test_R4_joker_cut_card_goes_out_when_a_meld_places_it():
    # römi.   hand: 5h 6h Kd     cut card: *
    # Take the joker, meld 4h 5h 6h with it, discard Kd: out with the cut card (R4).
    state = make_state("romi", hands=["5h 6h Kd", "2d 3d"], discard="Qs", stock="Ah", cut_card="*")
    assert legal(state) == {DRAW_STOCK, TAKE_CUT_CARD}
    state.apply(TAKE_CUT_CARD)
    assert state.result.winner == 0 and state.discard[-1] == parse_card("Kd")
    assert sorted(table_text(state, 0)) in (["*=4h", "5h", "6h"], ["*=7h", "5h", "6h"])


def test_G8_first_empty_stock_rebuilds_from_discards_keeping_top():
    # basic.   stock: Kc (last card)     discard: 3h 4h 5c 7s (top 7s)
    #   player 0: Ah 5d 9c   draws Kc, discards it: the stock is empty for the first time.
    # The discards under the top (3h 4h 5c 7s) become the new stock; Kc stays face up (G8).
    state = make_state("basic", hands=["Ah 5d 9c", "2h 6d Tc"], discard="3h 4h 5c 7s", stock="Kc")
    draw_and_discard_drawn(state)
    assert not state.is_over
    assert sorted(state.stock) == sorted(parse_cards("3h 4h 5c 7s"))
    assert state.discard == parse_cards("Kc")
    assert state.current == 1 and legal(state) == {DRAW_STOCK, TAKE}


def test_G8_second_empty_stock_is_stalemate():
    # basic.   stock: Kc     discard: 7s
    #   player 0 draws and discards Kc: new stock 7s, discard Kc.
    #   player 1 draws and discards 7s: the stock is empty again, the hand is a stalemate (G8).
    state = make_state("basic", hands=["Ah 5d 9c", "2s 6d Tc"], discard="7s", stock="Kc")
    draw_and_discard_drawn(state)
    assert state.stock == parse_cards("7s") and state.discard == parse_cards("Kc")
    draw_and_discard_drawn(state)
    assert state.is_over and legal(state) == set()
    assert state.result.outcome == "stalemate" and state.result.winner is None
    assert state.result.payments == (0, 0) and state.result.rewards == (0, 0)
    with pytest.raises(IllegalMoveError, match="hand is over"):
        state.apply(DRAW_STOCK)


def test_G9_turn_cap_cuts_off_hand():
    # basic, max_turns=4: four quiet turns and the hand is cut off; nobody scores (G9).
    state = GameState.new("basic", 2, seed=3, max_turns=4)
    for _ in range(3):
        draw_and_discard_drawn(state)
        assert not state.is_over
    draw_and_discard_drawn(state)
    assert state.is_over and state.turn == 4
    assert state.result.outcome == "cut_off" and state.result.winner is None
    assert state.result.rewards == (0, 0) and legal(state) == set()


@pytest.mark.parametrize("game, players", [("indian", 3), ("basic", 2), ("romi", 2)])
def test_G10_same_seed_same_game(game, players):
    # The same seed and the same actions give the same game; another seed another deal.
    state = GameState.new(game, players, seed="g10")
    rng = random.Random(7)
    for _ in range(24):
        if state.is_over:
            break
        state.apply(rng.choice(state.legal_moves()))
    again = replay(game, players, "g10", state.history)
    assert again.to_dict() == state.to_dict()
    assert GameState.new(game, players, seed="g10").to_dict() == GameState.new(game, players, seed="g10").to_dict()
    assert GameState.new(game, players, seed="g10").hands != GameState.new(game, players, seed="g11").hands


def test_G10_shuffle_is_pinned_across_machines():
    # A fixed seed deals fixed cards everywhere (text-seeded generator, no hash randomisation).
    state = GameState.new("basic", 2, seed=2024)
    assert format_cards(state.hand_cards(0)) == format_cards(parse_cards("6s Js 3h 4h 8h Qh Qd 6c 8c Tc"))
    assert state.discard == parse_cards("2h")
    assert state.stock[-3:] == parse_cards("7s 9s 6d")


# ------------------------------------------------------------------------------------- I: Indian


def test_I1_deck_size_and_players():
    assert GameState.new("indian").rules.num_players == 2
    for players in range(2, 7):
        state = GameState.new("indian", players, seed=players)
        assert [sum(h) for h in state.hands] == [13] * players
        assert sum(card_counts(state)) == 106
    assert sum(card_counts(GameState.new("indian", printed_jokers=0))) == 104
    for players in (1, 7):
        with pytest.raises(ValueError, match="num_players"):
            GameState.new("indian", players)


def test_I2_wild_card_is_dealt_beside_the_stock_only_when_asked():
    plain = GameState.new("indian", seed=4)
    assert plain.wild_card == -1 and plain.wild_rank is None
    state = GameState.new("indian", seed=4, wild_joker=True)
    assert 0 <= state.wild_card <= JOKER
    assert state.wild_rank == (0 if state.wild_card == JOKER else state.wild_card % 13)
    assert sum(card_counts(state)) == 106


def test_I2_wild_joker_rank_is_wild():
    # Indian, wild card 4d: every 4 is a joker, and a 4 may still be its natural self.
    #   hand: 3h 4h 5h | 6c 7c * | 9s 9h 9d 9c | Jd 4s=Qd Kd     stock top: Ts
    # 3h 4h 5h is the only pure run (4h natural); Jd 4s Kd is a run with 4s as the joker (I2).
    hand = "3h 4h 5h 6c 7c * 9s 9h 9d 9c Jd Kd 4s"
    state = make_state("indian", hands=[hand, "2c"], discard="8s", stock="Ts", wild_card="4d")
    state.apply(DRAW_STOCK)
    assert of_kind(state, DECLARE) == {declare("Ts")}
    # Without the wild card, 4s is only a four and the hand cannot declare.
    plain = make_state("indian", hands=[hand, "2c"], discard="8s", stock="Ts")
    plain.apply(DRAW_STOCK)
    assert of_kind(plain, DECLARE) == set()


def test_I2_printed_joker_as_wild_card_makes_aces_wild():
    # Indian, wild card *: aces are jokers.
    #   hand: Th Jh Qh | 5c 6c Ad=7c | 9s 9h 9d 9c | 2s 3s 4s     stock top: Ks
    state = make_state("indian", hands=["Th Jh Qh 5c 6c Ad 9s 9h 9d 9c 2s 3s 4s", "2c"],
                       discard="8s", stock="Ks", wild_card="*")
    assert state.wild_rank == 0
    state.apply(DRAW_STOCK)
    assert of_kind(state, DECLARE) == {declare("Ks")}


def test_I3_runs_ace_low_or_high_with_any_number_of_jokers():
    # Indian, 4 printed jokers.   hand: Qh Kh Ah | Ac 2c 3c | 9d 9s 9c | 5s * * *     stock top: Kc
    # Q-K-A and A-2-3 are both pure runs; 5s takes three jokers (no per-meld limit in I3).
    state = make_state("indian", hands=["Qh Kh Ah Ac 2c 3c 9d 9s 9c 5s * * *", "2c"],
                       discard="8s", stock="Kc", printed_jokers=4)
    state.apply(DRAW_STOCK)
    assert declare("Kc") in legal(state)
    state.apply(declare("Kc"))
    assert state.result.outcome == "declare" and state.result.winner == 0


def test_I3_king_ace_two_is_not_a_run():
    # Indian.   hand: Kh Ah 2h | Ac 2c * | 5s 6s * | 9d 9s 9c 9h     stock top: Kc
    # K-A-2 wraps, so no pure run: no declaration.
    state = make_state("indian", hands=["Kh Ah 2h Ac 2c * 5s 6s * 9d 9s 9c 9h", "2c"], discard="8s", stock="Kc")
    state.apply(DRAW_STOCK)
    assert of_kind(state, DECLARE) == set()


def test_I4_turn_draw_then_discard_or_declare():
    # Indian: draw (stock or discard top) first, then discard one card; no melds (I4, I9).
    state = GameState.new("indian", 2, seed=8)
    assert legal(state) == {DRAW_STOCK, TAKE}
    held = state.hand_cards(0)
    refuse(state, (DISCARD, held[0], 0), "discard", "I4")
    drawn = state.stock[-1]
    state.apply(DRAW_STOCK)
    assert of_kind(state, DISCARD) == {(DISCARD, c, 0) for c in held + [drawn]}
    assert {m[0] for m in legal(state)} <= {DISCARD, DECLARE}
    with pytest.raises(IllegalMoveError, match="already drew"):
        state.apply(DRAW_STOCK)
    state.apply((DISCARD, held[0], 0))
    assert state.current == 1 and state.discard[-1] == held[0] and sum(state.hands[0]) == 13


def test_I5_declare_only_with_valid_hand():
    # Indian.   hand: Ah 2h 3h | 5c 6c * | 9s 9h 9d 9c | Jd Qd Kd     stock top: 2s
    # Two runs, one pure (Ah 2h 3h), everything melded once 2s is thrown: declaring is legal.
    state = make_state("indian", hands=["Ah 2h 3h 5c 6c * 9s 9h 9d 9c Jd Qd Kd", "2c"], discard="8s", stock="2s")
    state.apply(DRAW_STOCK)
    assert of_kind(state, DECLARE) == {declare("2s")}
    state.apply(declare("2s"))
    assert state.is_over and state.result.outcome == "declare"
    assert state.result.winner == 0 and state.result.payments[0] == 0
    assert state.discard[-1] == parse_card("2s")


@pytest.mark.parametrize("hand, why", [
    ("Ah 2h 3h 9s 9h 9d 9c 5s 5h 5d Kc Kd Ks", "one run only"),
    ("Ah * 3h 5c * 7c 9s 9h 9d 9c Js Jh Jd", "no pure run"),
    ("Ah 2h 3h 5c 6c 7c 9s 9h 9d 9c Js Jh 4d", "a card outside melds"),
])
def test_I5_invalid_declaration_is_not_a_legal_move(hand, why):
    # Indian.   hand: see parameters     stock top: 2s
    state = make_state("indian", hands=[hand, "2c"], discard="8s", stock="2s")
    state.apply(DRAW_STOCK)
    assert of_kind(state, DECLARE) == set(), why
    refuse(state, declare("2s"), "declare 2s", "I5")


def test_I5_refused_declare_on_card_just_taken():
    # Indian.   hand: Ah 2h 3h | 5c 6c * | 9s 9h 9d 9c | Jd Qd Kd     discard top: 2s
    # Taking 2s and declaring on it would throw the card just taken (G7).
    state = make_state("indian", hands=["Ah 2h 3h 5c 6c * 9s 9h 9d 9c Jd Qd Kd", "2c"], discard="2s", stock="8s")
    state.apply(TAKE)
    assert of_kind(state, DECLARE) == set()
    refuse(state, declare("2s"), "declare 2s", "G7")


# Player 0 declares (discarding 6s). The others are scored on their best arrangement (I6, I7):
#   player 1: 4h 5h 6h | 7h 7s 7d | Tc Jc Qc | 2s 3d Kd 8c   -> 2 + 3 + 10 + 8 = 23
#             (4h-7h as one run would leave 7s 7d too: 37)
#   player 2: Ah 2h 3h | 9s 9h 9d | Kc Kd Ks | 5c 6d 7s 8h   -> one run only: all 13 cards = 98
DECLARER = "Ad 2d 3d 5c 6c * 4s 4h 4d 4c Th Jh Qh"
BEST_ARRANGED = "4h 5h 6h 7h 7s 7d Tc Jc Qc 2s 3d Kd 8c"
NO_SECOND_LIFE = "Ah 2h 3h 9s 9h 9d Kc Kd Ks 5c 6d 7s 8h"


def declared(**options) -> GameState:
    state = make_state("indian", hands=[DECLARER, BEST_ARRANGED, NO_SECOND_LIFE], discard="8s", stock="6s", **options)
    state.apply(DRAW_STOCK)
    state.apply(declare("6s"))
    return state


def test_I6_others_scored_on_best_arrangement():
    state = declared()
    assert state.is_over and legal(state) == set()  # nobody draws again
    assert state.result.payments == (0, 23, 98)
    assert state.result.rewards == (121, -23, -98)
    assert [sum(h) for h in state.hands] == [13, 13, 13]


def test_I7_jokers_and_wild_cards_pay_nothing():
    # Indian, no pure run: all 13 cards pay.   hand: Ah Kd Qc Js Th 2d 3c 4s 5h * 9c 8d 7s
    #   10+10+10+10+10+2+3+4+5+0+9+8+7 = 88; with wild card 9d the 9c pays 0 too: 79.
    hand = "Ah Kd Qc Js Th 2d 3c 4s 5h * 9c 8d 7s"
    for wild, pay in ((None, 88), ("9d", 79)):
        state = make_state("indian", hands=[DECLARER, hand], discard="8s", stock="6s", wild_card=wild)
        state.apply(DRAW_STOCK)
        state.apply(declare("6s"))
        assert state.result.payments == (0, pay)


def test_I7_penalty_cap_option():
    # The same declaration with penalty_cap=80: 98 is capped at 80, 23 stays 23.
    state = declared(penalty_cap=80)
    assert state.result.payments == (0, 23, 80)
    assert state.result.rewards == (103, -23, -80)


def test_I9_no_melds_on_the_table_in_indian():
    # Indian.   hand: Ah 2h 3h 5c 6c 7c 9s 9h 9d 9c Js Jh 4d     stock top: 2s
    # Ah 2h 3h is a meld, but Indian never lays one down (I9); nor is there a cut card (R2).
    state = make_state("indian", hands=["Ah 2h 3h 5c 6c 7c 9s 9h 9d 9c Js Jh 4d", "2c"], discard="8s", stock="2s")
    refuse(state, TAKE_CUT_CARD, "take_cut", "R2")
    state.apply(DRAW_STOCK)
    assert {m[0] for m in legal(state)} == {DISCARD}
    refuse(state, meld("romi", "Ah 2h 3h"), "meld Ah 2h 3h", "I9")
    refuse(state, place("2s", 0), "place 2s", "I9")


# ------------------------------------------------------------------------------------- B: Basic


@pytest.mark.parametrize("players, size", [(2, 10), (3, 7), (4, 7)])
def test_B1_hand_sizes(players, size):
    state = GameState.new("basic", players, seed=players)
    assert [sum(h) for h in state.hands] == [size] * players
    assert card_counts(state) == [1] * NUM_NATURAL + [0]


def test_B1_player_count_out_of_range():
    for players in (1, 5):
        with pytest.raises(ValueError, match="num_players"):
            GameState.new("basic", players)


def test_B2_runs_ace_low_only():
    # basic.   hand: Qh Kh Ah 2h 3h 9c     stock top: 5d
    # A-2-3 is a run, Q-K-A is not (B2).
    state = make_state("basic", hands=["Qh Kh Ah 2h 3h 9c", "2d 3d"], stock="5d")
    state.apply(DRAW_STOCK)
    assert of_kind(state, MELD) == {meld("basic", "Ah 2h 3h")}


def test_B2_ace_lays_off_below_two_not_above_king():
    # basic.   table: [0] Jh Qh Kh   [1] 2s 3s 4s     hand: Ah As 9c     stock top: 5d
    state = make_state("basic", hands=["Ah As 9c", "2d 3d"], stock="5d", table=["Jh Qh Kh", "2s 3s 4s"])
    state.apply(DRAW_STOCK)
    assert of_kind(state, PLACE) == {place("As", 1)}
    with pytest.raises(IllegalMoveError):
        state.apply(place("Ah", 0))


def test_B3_lay_off_on_anyones_meld():
    # basic, player 0 has laid nothing.   table: [0] 9s 9h 9d   [1] 4c 5c 6c
    #   hand: 9c 3c 7c Th Jh Qh Kh     stock top: 2s
    # Lay off at either end and on the set, lay a new meld, in any order; then discard (B3).
    state = make_state("basic", hands=["9c 3c 7c Th Jh Qh Kh", "2d 5d"], stock="Ad 2s",
                       table=["9s 9h 9d", "4c 5c 6c"])
    state.apply(DRAW_STOCK)
    assert of_kind(state, PLACE) == {place("9c", 0), place("3c", 1), place("7c", 1)}
    state.apply(place("3c", 1))
    state.apply(meld("basic", "Th Jh Qh"))
    state.apply(place("7c", 1))
    state.apply(place("9c", 0))
    assert table_text(state, 1) == ["3c", "4c", "5c", "6c", "7c"]
    assert table_text(state, 0) == ["9s", "9h", "9d", "9c"]
    assert legal(state) == {place("Kh", 2)} | discards("Kh 2s")  # Th Jh Qh grows too
    state.apply(discard("2s"))
    assert state.current == 1 and not state.is_over


def test_B4_out_by_melding_everything_without_discard():
    # basic.   hand: 5h 6h     discard top: 7h     player 1: Ah Kd 7c
    # Taking 7h and melding 5h 6h 7h empties the hand: out at once, no discard (B4).
    state = make_state("basic", hands=["5h 6h", "Ah Kd 7c"], discard="2s 7h", stock="Qs")
    state.apply(TAKE)
    state.apply(meld("basic", "5h 6h 7h"))
    assert state.is_over and state.result.outcome == "out" and state.result.winner == 0
    assert state.discard == parse_cards("2s") and sum(state.hands[0]) == 0
    assert state.result.payments == (0, 18)


def test_B4_out_by_laying_off_the_last_card():
    # basic.   table: [0] 9s 9h 9d   [1] Jd Qd Kd     hand: 9c     stock top: Td
    # Lay off 9c, then Td empties the hand: legal in Basic, the hand is won (B4; cf. R6).
    state = make_state("basic", hands=["9c", "Ah 2d"], stock="Td", table=["9s 9h 9d", "Jd Qd Kd"])
    state.apply(DRAW_STOCK)
    state.apply(place("9c", 0))
    assert legal(state) == {place("Td", 1), discard("Td")}
    state.apply(place("Td", 1))
    assert state.is_over and state.result.winner == 0 and state.result.payments == (0, 3)


def test_B4_out_by_discarding_last_card():
    # basic.   hand: 5h 6h 7h     stock top: Kc     player 1: Ah Kd 7c
    # Meld 5h 6h 7h, discard Kc: the hand is empty and player 0 wins (B4).
    state = make_state("basic", hands=["5h 6h 7h", "Ah Kd 7c"], stock="Kc")
    state.apply(DRAW_STOCK)
    state.apply(meld("basic", "5h 6h 7h"))
    assert legal(state) == discards("Kc")
    state.apply(discard("Kc"))
    assert state.is_over and state.result.outcome == "out" and state.result.winner == 0
    assert state.discard[-1] == parse_card("Kc")


def test_B5_winner_scores_others_hands():
    # basic, 3 players.   table: [0] 9s 9h 9d     player 0: Kd, draws 9c, lays it off, discards Kd.
    #   player 1: Ah Kc 7d      -> 1 + 10 + 7 = 18
    #   player 2: Qs Js Ts 2d   -> 10 + 10 + 10 + 2 = 32 (a meld in hand still counts)
    state = make_state("basic", hands=["Kd", "Ah Kc 7d", "Qs Js Ts 2d"], stock="9c", table=["9s 9h 9d"])
    state.apply(DRAW_STOCK)
    state.apply(place("9c", 0))
    state.apply(discard("Kd"))
    assert state.result.payments == (0, 18, 32)
    assert state.result.rewards == (50, -18, -32)


def out_in_one_turn(**options) -> GameState:
    # basic.   hand: 5h 6h 7h     stock top: Kc     player 1: Ah 2d (3 points)
    state = make_state("basic", hands=["5h 6h 7h", "Ah 2d"], stock="Kc", **options)
    state.apply(DRAW_STOCK)
    state.apply(meld("basic", "5h 6h 7h"))
    state.apply(discard("Kc"))
    return state


def test_B6_rummy_bonus_doubles_going_out_in_one_turn():
    # Going out having laid nothing before this turn doubles the score, only with rummy_bonus (B6).
    assert out_in_one_turn().result.payments == (0, 3)
    doubled = out_in_one_turn(rummy_bonus=True).result
    assert doubled.payments == (0, 6) and doubled.rewards == (6, -6)


def test_B6_no_rummy_bonus_after_laying_in_an_earlier_turn():
    # basic, rummy_bonus.   player 0: 5h 6h 7h 2c     player 1: Ah 2d     stock: 8h Ks Qd (top Qd)
    #   turn 1: player 0 draws Qd, melds 5h 6h 7h, discards Qd.   turn 2: player 1 draws Ks, discards it.
    #   turn 3: player 0 draws 8h, lays it off, discards 2c: out, but not in one turn: no bonus.
    state = make_state("basic", hands=["5h 6h 7h 2c", "Ah 2d"], stock="8h Ks Qd", rummy_bonus=True)
    state.apply(DRAW_STOCK)
    state.apply(meld("basic", "5h 6h 7h"))
    state.apply(discard("Qd"))
    draw_and_discard_drawn(state)
    state.apply(DRAW_STOCK)
    state.apply(place("8h", 0))
    state.apply(discard("2c"))
    assert state.result.payments == (0, 3)


# ------------------------------------------------------------------------------------- R: römi


def test_R1_players_and_cards():
    for players in (2, 3, 4):
        state = GameState.new("romi", players, seed=players)
        assert [sum(h) for h in state.hands] == [13] * players
        assert card_counts(state) == [2] * NUM_NATURAL + [2]
    for players in (1, 5):
        with pytest.raises(ValueError, match="num_players"):
            GameState.new("romi", players)


def test_R2_cut_card_visible_not_in_stock():
    # The cut card is turned before the deal: hands + stock + discard are the deck less that card.
    state = GameState.new("romi", 2, seed="cut")
    cut = state.cut_card
    assert 0 <= cut <= JOKER and state.to_dict()["cut_card"] == cut
    counts = card_counts(state)
    counts[cut] -= 1
    assert sum(counts) == 105 == sum(map(sum, state.hands)) + len(state.stock) + len(state.discard)
    for _ in range(4):
        draw_and_discard_drawn(state)
        assert state.cut_card == cut
    assert GameState.new("basic").cut_card == -1 and GameState.new("indian").cut_card == -1


def test_R3_at_most_two_jokers_per_meld():
    # römi, player 0 has opened.   table: [0] 5d * * 8d     hand: 5h * * *     stock top: Kc
    # 5h or Kc take at most two jokers each (no 4-card meld from one natural); the run
    # holding two jokers takes no third (R3).
    state = make_state("romi", hands=["5h * * *", "2d 3d"], stock="Kc", table=["5d * * 8d"], opened=[True, False])
    state.apply(DRAW_STOCK)
    expected = {meld("romi", t) for t in (
        "5s 5h 5d", "5s 5h 5c", "5h 5d 5c", "3h 4h 5h", "4h 5h 6h", "5h 6h 7h",
        "Ks Kd Kc", "Ks Kh Kc", "Kh Kd Kc", "Jc Qc Kc", "Qc Kc Ac",
    )}
    assert of_kind(state, MELD) == expected
    assert of_kind(state, PLACE) == set()
    with pytest.raises(IllegalMoveError):
        state.apply((PLACE, JOKER, 0))


def test_R4_first_turn_takes_discard_freely():
    # römi, player 0's first turn.   hand: 5h 9c Kd     discard top: Qs (fits nothing)
    # Qs may be taken and kept; it may not be thrown back this turn (G7).
    state = make_state("romi", hands=["5h 9c Kd", "2d 3d"], discard="4c Qs", stock="3d", turns_taken=[0, 0])
    assert legal(state) == {DRAW_STOCK, TAKE}
    state.apply(TAKE)
    assert legal(state) == discards("5h 9c Kd")
    later = make_state("romi", hands=["5h 9c Kd", "2d 3d"], discard="4c Qs", stock="3d", turns_taken=[1, 0])
    assert legal(later) == {DRAW_STOCK}
    refuse(later, TAKE, "take_discard", "R4")


def test_R4_discard_taken_after_first_turn_must_be_placed():
    # römi, later turn.   hand: 5h 6h Kd Qs     discard top: 7h
    # 7h may be taken because 5h 6h 7h can lay it this turn; the turn cannot end before it is laid (R4).
    state = make_state("romi", hands=["5h 6h Kd Qs", "2d 3d"], discard="4c 7h", stock="3d")
    assert legal(state) == {DRAW_STOCK, TAKE}
    state.apply(TAKE)
    assert legal(state) == {meld("romi", "5h 6h 7h")}
    refuse(state, discard("Kd"), "discard Kd", "R4")
    state.apply(meld("romi", "5h 6h 7h"))
    assert legal(state) == discards("Kd Qs")


@pytest.mark.parametrize("hand, why", [
    ("5h 9h Kd", "7h fits no meld"),
    ("5h 6h", "5h 6h 7h would empty the hand (R6)"),
])
def test_R4_discard_that_cannot_be_placed_cannot_be_taken(hand, why):
    # römi, later turn.   hand: see parameters     discard top: 7h
    state = make_state("romi", hands=[hand, "2d 3d"], discard="4c 7h", stock="3d")
    assert legal(state) == {DRAW_STOCK}, why
    refuse(state, TAKE, "take_discard", "R4")


def test_R4_cut_card_only_to_go_out():
    # römi.   hand: 5h 6h 8h Kc     cut card: 7h     player 1 (not opened): 2s 3d
    # Taking 7h lets player 0 lay 5h-8h and throw Kc: one move takes the card and goes out (R4);
    # player 1 has laid nothing and pays 80 (R7).
    state = make_state("romi", hands=["5h 6h 8h Kc", "2s 3d"], discard="4c Qs", stock="2d", cut_card="7h")
    assert legal(state) == {DRAW_STOCK, TAKE_CUT_CARD}
    state.apply(TAKE_CUT_CARD)
    assert state.is_over and state.result.outcome == "out" and state.result.winner == 0
    assert state.result.payments == (0, 80)
    assert sum(state.hands[0]) == 0 and state.discard[-1] == parse_card("Kc")
    assert len(state.table) == 1 and table_text(state, 0) == ["5h", "6h", "7h", "8h"]
    assert state.stock == parse_cards("2d") and state.history == [TAKE_CUT_CARD]


def test_R4_cut_card_refused_when_going_out_is_impossible():
    # römi.   hand: 5h 6h 8h Kc     cut card: Qd
    # With Qd the hand cannot go out this turn, so the cut card may not be taken (R4).
    state = make_state("romi", hands=["5h 6h 8h Kc", "2s 3d"], discard="4c Qs", stock="2d", cut_card="Qd")
    assert legal(state) == {DRAW_STOCK}
    refuse(state, TAKE_CUT_CARD, "take_cut", "R4")


def test_R4_cut_card_going_out_needs_a_last_discard():
    # römi.   hand: 5h 6h 8h     cut card: 7h
    # 5h 6h 7h 8h would empty the hand (R6), but 5h 6h 7h and a last discard of 8h goes out.
    state = make_state("romi", hands=["5h 6h 8h", "2s 3d"], discard="4c Qs", stock="2d", cut_card="7h",
                       opened=[False, True])
    state.apply(TAKE_CUT_CARD)
    assert state.result.winner == 0 and state.discard[-1] == parse_card("8h")
    assert table_text(state, 0) == ["5h", "6h", "7h"]
    assert state.result.payments == (0, 5)


def test_R5_lay_off_needs_own_meld():
    # römi.   table: [0] 9s 9h 9d (player 1's)     hand: 9c 5h 6h 7h Kd     stock top: 2s
    # Player 0 has no meld of their own: 9c may not be laid off (R5) until 5h 6h 7h is down.
    state = make_state("romi", hands=["9c 5h 6h 7h Kd", "2d 3d"], stock="2s", table=["9s 9h 9d"], opened=[False, True])
    state.apply(DRAW_STOCK)
    assert of_kind(state, PLACE) == set()
    refuse(state, place("9c", 0), "place 9c on table meld 0", "R5")
    state.apply(meld("romi", "5h 6h 7h"))
    assert of_kind(state, PLACE) == {place("9c", 0)}


def test_R5_swap_needs_own_meld():
    # römi.   table: [0] 5h *=6h 7h     hand: 6h 9c Kd     stock top: 2s     player 0 not opened.
    state = make_state("romi", hands=["6h 9c Kd", "2d 3d"], stock="2s", table=["5h * 7h"], opened=[False, True])
    state.apply(DRAW_STOCK)
    refuse(state, place("6h", 0), "place 6h on table meld 0", "R5")


def test_R5_joker_swap_then_joker_must_be_placed():
    # römi, player 0 has opened.   table: [0] 9s 9h *=9d
    #   hand: 5h 6h 7h 9d     stock top: Kd
    # 9d swaps for the joker, which must be back on the table before the turn ends (R5): in a
    # meld, on the set as 9c, or after melding 5h 6h 7h, at either end of that run.
    state = make_state("romi", hands=["5h 6h 7h 9d", "2c 3c"], stock="Kd", table=["9s 9h *=9d"], opened=[True, False])
    state.apply(DRAW_STOCK)
    assert place("9d", 0) in legal(state)
    state.apply(place("9d", 0))
    assert table_text(state, 0) == ["9s", "9h", "9d"]
    assert state.hand_cards(0) == sorted(parse_cards("5h 6h 7h Kd *"))
    assert state.owed_cards() == [JOKER]
    assert legal(state) == {
        meld("romi", "4h 5h 6h"), meld("romi", "6h 7h 8h"), meld("romi", "4h 5h 6h 7h"),
        meld("romi", "5h 6h 7h 8h"), meld("romi", "5h 6h 7h"), (PLACE, JOKER, 0),
    }
    refuse(state, discard("Kd"), "discard Kd", "R5")
    state.apply((PLACE, JOKER, 0))
    assert table_text(state, 0) == ["9s", "9h", "9d", "*=9c"]
    assert legal(state) >= discards("5h 6h 7h Kd") | {meld("romi", "5h 6h 7h")}


def test_R5_swap_illegal_when_joker_cannot_be_placed():
    # römi, player 0 has opened.   table: [0] 9s 9h 9d *=9c   [1] 5d * * 8d
    #   hand: 9c 2s     stock top: Kd
    # Swapping 9c would bring back a joker that fits nowhere: the set is full, the run holds two
    # jokers (R3) and * 2s Kd make no meld. So the swap is not legal (R5).
    state = make_state("romi", hands=["9c 2s", "2c 3c"], stock="Kd", table=["9s 9h 9d *=9c", "5d * * 8d"],
                       opened=[True, False])
    state.apply(DRAW_STOCK)
    assert legal(state) == discards("9c 2s Kd")
    refuse(state, place("9c", 0), "place 9c on table meld 0", "R5")


def test_R6_play_emptying_hand_is_illegal():
    # römi, player 0 has opened.   table: [0] 9s 9h 9d   [1] Jd Qd Kd     hand: 9c     stock top: Td
    # After laying off 9c, laying off Td would empty the hand: going out needs the last discard (R6).
    state = make_state("romi", hands=["9c", "2s 3d"], stock="Td", table=["9s 9h 9d", "Jd Qd Kd"], opened=[True, True])
    state.apply(DRAW_STOCK)
    assert legal(state) == {place("9c", 0), place("Td", 1)} | discards("9c Td")
    state.apply(place("9c", 0))
    assert legal(state) == discards("Td")
    refuse(state, place("Td", 1), "place Td on table meld 1", "R6")
    state.apply(discard("Td"))
    assert state.result.outcome == "out" and state.result.winner == 0 and state.result.payments == (0, 5)


def test_R6_meld_emptying_hand_is_illegal():
    # römi.   hand: 5h 6h     stock top: 7h
    # 5h 6h 7h would leave nothing to discard: only discards are legal (R6).
    state = make_state("romi", hands=["5h 6h", "2s 3d"], stock="7h")
    state.apply(DRAW_STOCK)
    assert legal(state) == discards("5h 6h 7h")
    refuse(state, meld("romi", "5h 6h 7h"), "meld 5h 6h 7h", "R6")


def test_R7_unopened_player_pays_80():
    # römi, 3 players.   table: [0] 9s 9h 9d     player 0: Kd, draws 9c, lays it off, discards Kd.
    #   player 1 (no meld this hand): Ah Kc * 7d   -> flat 80
    #   player 2 (opened):            Ah Kc * 7d   -> 10 + 10 + 0 + 7 = 27
    state = make_state("romi", hands=["Kd", "Ah Kc * 7d", "Ah Kc * 7d"], stock="9c", table=["9s 9h 9d"],
                       opened=[True, False, True])
    state.apply(DRAW_STOCK)
    state.apply(place("9c", 0))
    state.apply(discard("Kd"))
    assert state.result.payments == (0, 80, 27)
    assert state.result.rewards == (107, -80, -27)


# ------------------------------------------------------------------------------------- refusal messages


@pytest.mark.parametrize("game, hand, table, move, words, rule", [
    # römi, opened.   table: [0] 9s 9h 9d     hand: 9s Kc + 4c     a second 9s never joins (G3)
    ("romi", "9s Kc", ["9s 9h 9d"], place("9s", 0), "place 9s", "G3"),
    # basic.          table: [0] Jh Qh Kh     hand: Ah Kc + 4c     the ace is low only (B2)
    ("basic", "Ah Kc", ["Jh Qh Kh"], place("Ah", 0), "place Ah", "B2"),
    # römi, opened.   hand: 5h * * * Kc + 4c     5h-8h would hold three jokers (R3)
    ("romi", "5h * * * Kc", [], meld("romi", "5h 6h 7h 8h"), "meld 5h 6h 7h 8h", "R3"),
    # römi, opened.   table: [0] 5d * * 8d     hand: * Kc + 4c     a third joker on one meld (R3)
    ("romi", "* Kc", ["5d * * 8d"], (PLACE, JOKER, 0), "place * on table meld 0", "R3"),
])
def test_G3_B2_R3_refusal_names_the_meld_rule(game, hand, table, move, words, rule):
    state = make_state(game, hands=[hand, "2d 3d"], stock="4c", table=table, opened=[True, True])
    state.apply(DRAW_STOCK)
    refuse(state, move, words, rule)


def test_R4_cut_card_going_out_may_need_a_joker_swap():
    # römi, player 0 has opened.   table: [0] 5h *=6h 7h     hand: 6h Qc Kc 9d     cut card: Jc
    # Jc Qc Kc alone leaves 6h 9d; going out needs the swap too: 6h for the joker, the joker
    # back on the table, and 9d as the last discard. The one move finds and plays all of it (R4, R5).
    # (The discard top Qs may be taken too: swap 6h, then meld Qs Qc * places it, R4.)
    state = make_state("romi", hands=["6h Qc Kc 9d", "2d 3d"], discard="4c Qs", stock="2s", table=["5h * 7h"],
                       cut_card="Jc", opened=[True, True])
    assert legal(state) == {DRAW_STOCK, TAKE, TAKE_CUT_CARD}
    state.apply(TAKE_CUT_CARD)
    assert state.result.winner == 0 and state.discard[-1] == parse_card("9d")
    assert table_text(state, 0)[:3] == ["5h", "6h", "7h"]
    on_table = sorted(physical for m in state.table for _, physical in table_meld_cards(m))
    assert on_table == sorted(parse_cards("5h 6h 7h Jc Qc Kc *"))
    assert sum(state.hands[0]) == 0 and state.result.payments == (0, 5)


def test_G7_identical_copy_of_taken_card_cannot_be_discarded():
    # römi, later turn.   hand: 5h 6h 7h Kd     discard top: 7h (a second 7h, two decks)
    # The 7h taken must be laid (R4); the 7h left in hand is identical to it, so only Kd may go (G7).
    state = make_state("romi", hands=["5h 6h 7h Kd", "2d 3d"], discard="4c 7h", stock="2s")
    state.apply(TAKE)
    assert legal(state) == {meld("romi", "5h 6h 7h")}
    state.apply(meld("romi", "5h 6h 7h"))
    assert state.hand_cards(0) == parse_cards("7h Kd")
    assert legal(state) == discards("Kd")
    refuse(state, discard("7h"), "discard 7h", "G7")
