"""Bad input to ``make_ruleset`` (and so to ``GameState.new`` and ``Match.new``): every error names the bad thing."""

from __future__ import annotations

import re

import pytest

from rummy_env.game import GameState
from rummy_env.match import Match
from rummy_env.ruleset import game_options, make_ruleset

PLAYER_RANGE = {"indian": (2, 6), "basic": (2, 4), "romi": (2, 4)}


def test_defaults_match_the_rule_book():
    # I1, I7, I8, B1, B6, R1, R8, G9: the defaults RULES.md names.
    assert game_options("indian") == {"printed_jokers": 2, "wild_joker": False, "penalty_cap": None,
                                      "match_target": 400, "max_turns": 500}
    assert game_options("basic") == {"rummy_bonus": False, "match_target": 100, "max_turns": 500}
    assert game_options("romi") == {"match_target": 250, "max_turns": 500}
    for game in PLAYER_RANGE:
        rules = make_ruleset(game)
        assert rules.num_players == 2 and rules.options == game_options(game)


@pytest.mark.parametrize("game", ["poker", "rummy", ""])
def test_unknown_game_is_named(game):
    for make in (make_ruleset, game_options, GameState.new, Match.new):
        with pytest.raises(ValueError, match=re.escape(repr(game))):
            make(game)


@pytest.mark.parametrize("game", sorted(PLAYER_RANGE))
def test_player_counts_in_range_are_accepted(game):
    low, high = PLAYER_RANGE[game]
    for players in range(low, high + 1):
        assert make_ruleset(game, players).num_players == players


@pytest.mark.parametrize("game, players", [
    (game, players)
    for game, (low, high) in sorted(PLAYER_RANGE.items())
    for players in (low - 1, high + 1, 0, -2)
])
def test_player_count_out_of_range_is_named(game, players):
    low, high = PLAYER_RANGE[game]
    with pytest.raises(ValueError) as err:
        make_ruleset(game, players)
    message = str(err.value)
    assert f"num_players={players}" in message and repr(game) in message and f"{low}..{high}" in message


@pytest.mark.parametrize("players", ["2", 2.0, True, None])
def test_player_count_of_the_wrong_type_is_named(players):
    with pytest.raises(ValueError, match=re.escape(f"num_players={players!r}")):
        make_ruleset("basic", players)


@pytest.mark.parametrize("game, option", [
    ("indian", "rummy_bonus"), ("indian", "max_turn"),
    ("basic", "wild_joker"), ("basic", "printed_jokers"), ("basic", "penalty_cap"),
    ("romi", "wild_joker"), ("romi", "penalty_cap"), ("romi", "rummy_bonus"), ("romi", "printed_jokers"),
])
def test_unknown_option_is_named(game, option):
    with pytest.raises(ValueError) as err:
        make_ruleset(game, **{option: 1})
    message = str(err.value)
    assert f"unknown option {option!r}" in message and repr(game) in message
    with pytest.raises(ValueError, match=re.escape(repr(option))):
        GameState.new(game, **{option: 1})


@pytest.mark.parametrize("game, option, value", [
    ("indian", "match_target", 0), ("indian", "match_target", -400), ("indian", "match_target", "400"),
    ("indian", "match_target", 400.0), ("indian", "match_target", True), ("indian", "match_target", None),
    ("basic", "match_target", 0), ("romi", "match_target", -1),
    ("indian", "max_turns", 0), ("basic", "max_turns", -5), ("romi", "max_turns", "500"), ("romi", "max_turns", None),
    ("indian", "printed_jokers", -1), ("indian", "printed_jokers", 9), ("indian", "printed_jokers", "2"),
    ("indian", "printed_jokers", False), ("indian", "printed_jokers", 1.5),
    ("indian", "penalty_cap", 0), ("indian", "penalty_cap", -80), ("indian", "penalty_cap", "80"),
    ("indian", "penalty_cap", 80.5),
    ("indian", "wild_joker", 1), ("indian", "wild_joker", "yes"), ("indian", "wild_joker", None),
    ("basic", "rummy_bonus", 0), ("basic", "rummy_bonus", "true"),
])
def test_bad_option_value_is_named(game, option, value):
    with pytest.raises(ValueError) as err:
        make_ruleset(game, **{option: value})
    assert f"{option}={value!r}" in str(err.value)


@pytest.mark.parametrize("game, options", [
    ("indian", {"printed_jokers": 0}), ("indian", {"printed_jokers": 8}), ("indian", {"penalty_cap": 80}),
    ("indian", {"penalty_cap": None}), ("indian", {"wild_joker": True}), ("indian", {"match_target": 1}),
    ("basic", {"rummy_bonus": True, "max_turns": 1}), ("romi", {"match_target": 1000}),
])
def test_good_option_values_are_kept(game, options):
    rules = make_ruleset(game, **options)
    for key, value in options.items():
        assert rules.options[key] == value


def test_match_passes_options_through_and_checks_them():
    assert Match.new("indian", 3, match_target=101, penalty_cap=80).rules.options["match_target"] == 101
    with pytest.raises(ValueError, match="match_target=0"):
        Match.new("romi", match_target=0)
    with pytest.raises(ValueError, match="num_players=5"):
        Match.new("basic", 5)
