"""Bad input to the PettingZoo env: each is an error naming the problem, and changes nothing.

The documented types (``rummy_env.aec_env`` "Errors"): bad arguments raise ``ValueError``
(``IllegalActionError`` for actions), calls out of order raise ``RuntimeError``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env import encoding
from rummy_env.aec_env import IllegalActionError, raw_env


def started(game: str = "indian", seed: int = 3, **options) -> raw_env:
    e = raw_env(game, **options)
    e.reset(seed=seed)
    return e


def play_to_the_end(e: raw_env) -> None:
    rng = np.random.default_rng(0)
    for _ in e.agent_iter(100_000):
        observation, _, terminated, truncated, _ = e.last()
        e.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"]))))


# ----------------------------------------------------------------------------- rewards and seeds


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 0.0, -1.0, True, "1"])
def test_reward_scale_must_be_a_finite_number_above_zero(value):
    with pytest.raises(ValueError, match="reward_scale"):
        raw_env("indian", reward_scale=value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, "-5"])
def test_illegal_reward_must_be_a_finite_number(value):
    with pytest.raises(ValueError, match="illegal_reward"):
        raw_env("indian", illegal_reward=value)


def test_a_cut_off_hand_gives_finite_zero_rewards_at_the_largest_scale_allowed():
    # G9: the turn cap is a truncation with 0 for all; a huge but finite scale keeps it 0, not NaN.
    e = started("basic", max_turns=2, reward_scale=1e300)
    play_to_the_end(e)
    e.reset(seed=3)
    for _ in range(4):
        observation, *_ = e.last()
        e.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert all(e.truncations.values())
    assert all(r == 0.0 for r in e.rewards.values())


@pytest.mark.parametrize("seed", [-1, -5, True, False, 5.0, "5", [5]])
def test_a_seed_that_is_not_an_int_from_zero_up_is_refused_and_the_hand_goes_on(seed):
    e = started()
    before = e.game_state.to_dict()
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=seed)
    assert e.game_state.to_dict() == before


def test_G10_numpy_int_seeds_deal_like_python_ints():
    a, b = started(seed=5), started(seed=np.int64(5))
    assert a.game_state.to_dict() == b.game_state.to_dict()


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=2**70))
def test_G10_a_negative_seed_never_deals_like_its_absolute_value(seed):
    e = raw_env("basic")
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=-seed)
    assert e.state_ is None  # nothing was dealt


def test_reset_options_are_not_ignored_silently():
    e = started()
    with pytest.warns(UserWarning, match="'wild_joker'"):
        e.reset(seed=1, options={"wild_joker": True})
    assert not e.rules.wild_joker
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e.reset(seed=1, options={})
        e.reset(seed=1, options=None)


@pytest.mark.parametrize("action", [True, False, np.bool_(True)])
def test_a_bool_is_not_an_action_id(action):
    e = started()
    before = e.game_state.to_dict()
    with pytest.raises(IllegalActionError, match=f"illegal action {action!r}"):
        e.step(action)
    assert e.game_state.to_dict() == before and e.agent_selection == "player_0"


# ----------------------------------------------------------------------------- errors that say what is wrong


def test_last_before_reset_says_to_reset():
    with pytest.raises(RuntimeError, match=r"reset\(\) before last\(\)"):
        raw_env("indian").last()


@pytest.mark.parametrize("call", ["step", "last"])
def test_step_and_last_once_every_agent_is_done_say_so(call):
    e = started("indian")
    play_to_the_end(e)
    assert e.agents == []
    with pytest.raises(RuntimeError, match="every agent is done"):
        e.step(None) if call == "step" else e.last()


@pytest.mark.parametrize("agent", ["player_9", "player_-1", 0, None])
def test_observe_of_an_unknown_agent_names_it(agent):
    e = started()
    with pytest.raises(ValueError, match=f"observe\\({agent!r}\\): no such agent.*player_0, player_1"):
        e.observe(agent)


@pytest.mark.parametrize("action", ["x", None, 1.5, True, -1, 108])
def test_describe_action_of_a_non_action_names_it(action):
    e = started()
    with pytest.raises(ValueError, match=r"describe_action\(.*expected an action id, an int in 0\.\.107"):
        e.describe_action(action)
    with pytest.raises(encoding.EncodingError, match="action"):
        encoding.describe_action(e.game_state, action)


def test_describe_action_takes_numpy_ints():
    e = started()
    assert e.describe_action(np.int64(3)) == e.describe_action(3) == "action 3 (discard 2s)"


# ----------------------------------------------------------------------------- observations are read-only


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_the_observation_handed_out_cannot_be_written_into(game):
    e = started(game)
    first = e.observe("player_0")
    kept = {key: value.copy() for key, value in first.items()}
    for key in ("observation", "action_mask"):
        with pytest.raises(ValueError, match="read-only"):
            first[key][0] = 7
    first["action_mask"] = np.ones_like(kept["action_mask"])  # replacing a value in the dict
    again, *_ = e.last()
    for key in kept:
        assert np.array_equal(again[key], kept[key])
    assert not again["action_mask"].flags.writeable
    assert not e.observe("player_1")["action_mask"].flags.writeable  # a seat not to act


def test_a_copy_of_the_observation_may_be_changed():
    e = started()
    observation = e.observe("player_0")["observation"].copy()
    observation *= 2
    assert observation.flags.writeable
