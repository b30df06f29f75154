"""Bad input to the single-agent wrapper: a failing opponent, calls out of order, bad seeds.

An opponent's failure must never let the learner's action be played in the opponent's seat: the
wrapper refuses every ``step()`` with a ``RuntimeError`` naming the failure until ``reset()``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rummy_env import make_single_agent


class Flaky:
    """Plays the first legal action, and fails on call number ``fail_at`` (counted from 1)."""

    def __init__(self, fail_at: int, how: str):
        self.fail_at = fail_at
        self.how = how
        self.calls = 0

    def act(self, observation, action_mask):
        self.calls += 1
        if self.calls == self.fail_at:
            if self.how == "raise":
                raise KeyError("the opponent's own bug")
            return int(np.flatnonzero(action_mask == 0)[0])  # an illegal action
        return int(np.flatnonzero(action_mask)[0])


def first_legal(env) -> int:
    return int(np.flatnonzero(env.action_masks())[0])


@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
@pytest.mark.parametrize("how, error", [("raise", KeyError), ("illegal", ValueError)])
def test_an_opponent_failing_in_step_stops_the_episode_until_reset(illegal_action, how, error):
    opponent = Flaky(fail_at=2, how=how)
    env = make_single_agent("indian", opponents=opponent, seat=0, illegal_action=illegal_action)
    env.reset(seed=0)
    env.step(first_legal(env))  # draw
    with pytest.raises(error):
        env.step(first_legal(env))  # discard; the opponent draws, then fails on its discard
    stuck = env.game_state.to_dict()
    assert env.game_state.current == 1  # left in the opponent's seat (player_1)
    for action in range(3):
        with pytest.raises(RuntimeError, match=f"an opponent failed \\({error.__name__}.*call reset"):
            env.step(action)
    with pytest.raises(RuntimeError, match="an opponent failed"):
        env.action_masks()
    assert env.game_state.to_dict() == stuck  # nothing was played in the opponent's seat
    opponent.fail_at = 0
    env.reset(seed=1)
    _, _, terminated, truncated, _ = env.step(first_legal(env))
    assert not (terminated or truncated)


@pytest.mark.parametrize("how", ["raise", "illegal"])
def test_an_opponent_failing_in_reset_leaves_the_wrapper_unusable_until_a_good_reset(how):
    opponent = Flaky(fail_at=1, how=how)
    env = make_single_agent("basic", opponents=opponent, seat=1)  # seat 0, the opponent, starts (G6)
    with pytest.raises((KeyError, ValueError)):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match="an opponent failed"):
        env.step(0)
    opponent.fail_at = 0
    env.reset(seed=0)
    env.step(first_legal(env))


def test_step_before_reset_says_to_reset():
    env = make_single_agent("romi")
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    assert not env.action_masks().any()


@pytest.mark.parametrize("seed", [-1, True, 5.0, "5"])
def test_a_bad_seed_is_refused_naming_it(seed):
    env = make_single_agent("indian")
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)


def test_G10_a_numpy_int_seed_deals_like_the_python_int():
    a, b = make_single_agent("indian"), make_single_agent("indian")
    obs_a, _ = a.reset(seed=5)
    obs_b, _ = b.reset(seed=np.int64(5))
    assert np.array_equal(obs_a, obs_b) and a.learner == b.learner


def test_reset_options_are_not_ignored_silently():
    env = make_single_agent("indian")
    with pytest.warns(UserWarning, match="'seat'"):
        env.reset(seed=0, options={"seat": 1})


def test_a_bool_action_is_illegal_not_action_one():
    env = make_single_agent("indian", seat=0, illegal_action="raise")
    env.reset(seed=0)
    before = env.game_state.to_dict()
    with pytest.raises(ValueError, match="illegal action True"):
        env.step(True)
    assert env.game_state.to_dict() == before


@pytest.mark.parametrize("options, named", [
    ({"illegal_action": "ignore"}, "illegal_action='ignore'"),
    ({"illegal_reward": float("nan")}, "illegal_reward=nan"),
    ({"reward_scale": 0}, "reward_scale=0"),
    ({"max_hands": 0}, "max_hands=0"),
    ({"wild_jokr": True}, "unknown option 'wild_jokr'"),
    ({"seed": 3}, "unknown option 'seed'"),  # a keyword of VectorGame, not an option of this env
    ({"backend": "numba"}, "backend='numba'"),
])
def test_a_bad_option_is_refused_naming_it(options, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        make_single_agent("indian", **options)


def test_an_unknown_game_is_refused_naming_it():
    with pytest.raises(ValueError, match="unknown game 'gin'"):
        make_single_agent("gin")
