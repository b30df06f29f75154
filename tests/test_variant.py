"""A Basic Rummy variant made of one spec plays everywhere, as ``docs/design.md`` ("Adding a game or
a variant") walks through: seven cards a player whatever the table (B1 deals 10 with two players).

The variant is registered here with ``rummy_env.games.register``, the run-time twin of adding it
to ``SPECS`` in ``rummy_env/games/basic.py``; nothing else in the project learns its name.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_vector import _lockstep

import rummy_env
from agents.arena import ArenaConfig, run_arena, summarize
from agents.registry import make_agent
from rummy_env import games, rules
from rummy_env.encoding import action_layout, num_actions, observation_layout
from rummy_env.game import GameState
from rummy_env.games import basic
from rummy_env.ruleset import make_ruleset
from rummy_env.vector import VectorGame

SEVEN = games.replace(basic.SPEC, name="basic_seven", title="Basic Rummy, seven cards", label="Basic 7",
                      env_name="basic_seven_rummy_v0", hand_sizes={2: 7, 3: 7, 4: 7})


@pytest.fixture(autouse=True)
def registered():
    games.register(SEVEN)
    yield
    games.unregister(SEVEN.name)


def test_the_variant_deals_seven_cards_with_basic_rummys_deck_and_actions():
    for players in SEVEN.player_counts:
        state = GameState.new("basic_seven", players, seed=players)
        assert [sum(hand) for hand in state.hands] == [7] * players
        assert len(state.stock) == 52 - 7 * players - 1  # one deck, no jokers (B1)
    assert num_actions("basic_seven") == num_actions("basic")
    assert action_layout("basic_seven").blocks == action_layout("basic").blocks
    assert observation_layout("basic_seven", 2) == observation_layout("basic", 2)
    assert make_ruleset("basic_seven", 2).max_hand_payment == 70  # seven cards of 10 (B5)


def test_the_environment_and_the_batched_loop_play_it_in_lockstep():
    assert _lockstep("basic_seven", 2, num_envs=4, hands=6, seed=7) >= 6
    env = rummy_env.env("basic_seven", 3)
    assert env.metadata["name"] == "basic_seven_rummy_v0"
    env.reset(seed=1)
    assert [sum(hand) for hand in env.game_state.hands] == [7, 7, 7]


def test_the_single_agent_wrapper_plays_it_to_the_end():
    env = rummy_env.make_single_agent("basic_seven", seat=0)
    observation, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(5000):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert terminated or truncated
    assert "hand_result" in info and info["seat"] == "player_0"


def test_the_rules_api_scores_it_as_basic_rummy():
    assert rules.hand_penalty("basic_seven", "Kh Qh Ah") == 21  # J Q K 10, A 1 (B5)
    assert rules.is_meld("basic_seven", "Ah 2h 3h") and not rules.is_meld("basic_seven", "Qh Kh Ah")  # B2


def test_the_rule_agent_beats_random_at_it_in_the_arena():
    config = ArenaConfig("basic_seven", ("rule", "random"), hands=40, seed=5)
    summary = summarize(config, run_arena(config, progress=False))
    rates = {row["agent"]: row["win_rate"] for row in summary["agents"]}
    assert rates["rule"] > rates["random"]
    assert make_agent("rule", make_ruleset("basic_seven", 2)).solver_game == "basic_seven"


def test_the_numba_backend_says_it_has_no_core_for_the_variant():
    with pytest.raises(ValueError, match="basic_seven"):
        VectorGame("basic_seven", 2, 2, backend="numba")


def test_a_name_once_given_is_never_given_to_another_spec():
    with pytest.raises(ValueError, match="taken"):
        games.register(games.replace(SEVEN))
    with pytest.raises(ValueError, match="shipped"):
        games.unregister("basic")
