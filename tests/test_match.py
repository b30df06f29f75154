"""Matches: running totals, the starting seat (G6), match end, winners and ties (I8, B6, R8)."""

from __future__ import annotations

import random

import pytest

from rummy_env.game import MELD, PLACE, GameState, HandResult
from rummy_env.match import Match


def out(winner: int, *payments: int) -> HandResult:
    return HandResult("out", winner, tuple(payments))


def nothing(players: int, outcome: str = "stalemate") -> HandResult:
    return HandResult(outcome, None, (0,) * players)


@pytest.mark.parametrize("game, target, lowest_wins",
                         [("indian", 400, True), ("basic", 100, False), ("romi", 250, True)])
def test_I8_B6_R8_default_targets_and_who_wins(game, target, lowest_wins):
    # Indian to 400 and römi to 250 add penalties, lowest wins; Basic to 100 adds scores, highest wins.
    match = Match.new(game, 2)
    assert match.rules.match_target == target and match.rules.low_total_wins == lowest_wins
    match.record(out(0, 0, target - 1))
    assert not match.is_over
    match.record(out(0, 0, 1))  # player 0 wins both hands
    assert match.totals == ([0, target] if lowest_wins else [target, 0])
    assert match.is_over and match.winners == [0]


def test_new_match_starts_at_zero():
    match = Match.new("romi", 3)
    assert match.totals == [0, 0, 0] and match.hands_played == 0
    assert not match.is_over and match.winners == []


@pytest.mark.parametrize("game, players", [("indian", 3), ("basic", 4), ("romi", 2)])
def test_G6_starting_seat_moves_one_place_each_hand(game, players):
    match = Match.new(game, players, seed="rot")
    firsts = []
    for _ in range(players + 2):
        state = match.deal()
        assert state.current == state.first_player
        firsts.append(state.first_player)
        match.record(nothing(players))
    assert firsts == [k % players for k in range(players + 2)]


def test_hand_k_is_dealt_from_its_own_seed():
    match = Match.new("romi", 2, seed=42)
    for k in range(3):
        state = match.deal()
        expected = GameState(match.rules, f"42:{k}", k % 2)
        assert state.to_dict() == expected.to_dict()
        match.record(nothing(2))


def test_G10_same_match_seed_same_deals():
    a, b, c = Match.new("indian", seed=5), Match.new("indian", seed=5), Match.new("indian", seed=6)
    assert a.deal().to_dict() == b.deal().to_dict()
    assert a.deal().hands != c.deal().hands
    # Dealing twice without recording deals the same hand again: the match moves on by record().
    assert a.deal().to_dict() == a.deal().to_dict()


def test_R8_penalties_add_up_lowest_total_wins():
    # römi, target 250: totals add what each player pays; the lowest total wins (R8).
    match = Match.new("romi", 3)
    match.record(out(0, 0, 80, 35))
    match.record(out(2, 120, 80, 0))
    assert match.totals == [120, 160, 35] and not match.is_over
    match.record(out(1, 130, 0, 0))
    assert match.totals == [250, 160, 35] and match.is_over and match.winners == [2]


def test_I8_match_ends_when_any_total_reaches_the_target_not_before():
    match = Match.new("indian", 2)
    match.record(out(0, 0, 399))
    assert not match.is_over and match.winners == []
    match.record(out(1, 0, 0))
    assert not match.is_over
    match.record(out(0, 0, 1))
    assert match.totals == [0, 400] and match.is_over and match.winners == [0]


@pytest.mark.parametrize("game", ["indian", "romi"])
def test_I8_R8_players_tied_on_lowest_total_share_the_win(game):
    match = Match.new(game, 4, match_target=200)
    match.record(out(3, 40, 40, 120, 0))
    match.record(out(3, 10, 10, 0, 50))
    assert match.totals == [50, 50, 120, 50] and not match.is_over
    match.record(out(0, 0, 0, 90, 0))
    assert match.totals == [50, 50, 210, 50]
    assert match.winners == [0, 1, 3]


def test_I8_lowest_total_wins_even_below_another_over_the_target():
    match = Match.new("indian", 3, match_target=100)
    match.record(out(1, 120, 0, 130))
    assert match.is_over and match.winners == [1]


def test_B6_winner_scores_the_hand_highest_total_wins():
    # basic, target 100: the winner adds what the others pay; others add nothing (B5, B6).
    match = Match.new("basic", 3)
    match.record(out(1, 12, 0, 30))
    match.record(out(0, 0, 25, 20))
    assert match.totals == [45, 42, 0] and not match.is_over
    match.record(out(1, 40, 0, 18))
    assert match.totals == [45, 100, 0] and match.is_over and match.winners == [1]


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_stalemate_and_cut_off_hands_score_nothing_but_count(game):
    match = Match.new(game, 2)
    match.record(nothing(2, "stalemate"))
    match.record(nothing(2, "cut_off"))
    assert match.totals == [0, 0] and match.hands_played == 2
    assert match.deal().first_player == 0


def test_no_hands_after_the_match_is_over():
    match = Match.new("romi", 2, match_target=80)
    match.record(out(0, 0, 80))
    assert match.is_over
    with pytest.raises(ValueError, match="over"):
        match.deal()
    with pytest.raises(ValueError, match="over"):
        match.record(out(1, 10, 0))
    assert match.totals == [0, 80] and match.hands_played == 1


def test_unfinished_hand_cannot_be_recorded():
    match = Match.new("basic", 2)
    state = match.deal()
    with pytest.raises(ValueError, match="no result"):
        match.record(state.result)
    assert match.hands_played == 0


@pytest.mark.parametrize("game, players", [("basic", 3), ("romi", 2)])
def test_played_hands_add_up(game, players):
    # Random legal play (melding whenever it can) through a short match; the totals follow each
    # hand's payments (B5, B6, R7, R8).
    match = Match.new(game, players, seed=3, match_target=60, max_turns=60)
    rng = random.Random(1)
    expected = [0] * players
    won = []
    for _ in range(8):
        if match.is_over:
            break
        state = match.deal()
        while not state.is_over:
            moves = state.legal_moves()
            plays = [m for m in moves if m[0] in (MELD, PLACE)]
            state.apply(rng.choice(plays or moves))
        result = state.result
        if result.winner is not None:
            if game == "basic":
                expected[result.winner] += sum(result.payments)
            else:
                expected = [t + p for t, p in zip(expected, result.payments)]
        match.record(result)
        assert match.totals == expected
        won.append(result.winner is not None)
    assert any(won)
