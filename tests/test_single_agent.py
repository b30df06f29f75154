"""The Gymnasium single-agent wrapper (docs/env.md "Single-agent (Gymnasium)"): check_env, opponents, masks,
MaskablePPO."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from rummy_env import encoding as E
from rummy_env import make_single_agent
from rummy_env.aec_env import IllegalActionError
from rummy_env.single_agent import RandomOpponent, SingleAgentRummyEnv


def first_legal(observation, action_mask) -> int:
    return int(np.flatnonzero(action_mask)[0])


class CountingAgent:
    """An opponent object: plays the last legal action and counts its hands."""

    def __init__(self):
        self.resets = 0
        self.calls = 0

    def reset(self):
        self.resets += 1

    def act(self, observation, action_mask):
        self.calls += 1
        assert observation.dtype == np.float32 and action_mask.dtype == np.int8
        return int(np.flatnonzero(action_mask)[-1])


def play_episode(env, seed=None, rng=None):
    rng = rng or np.random.default_rng(0)
    obs, info = env.reset(seed=seed)
    total = 0.0
    for _ in range(10_000):
        legal = np.flatnonzero(env.action_masks())
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        total += reward
        if terminated or truncated:
            return total, info
    raise AssertionError("episode did not end")


@pytest.mark.parametrize("game, players", [("indian", 2), ("basic", 3), ("romi", 2)])
def test_gymnasium_check_env_passes(game, players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # check_env's note that the env has no registered spec
        check_env(make_single_agent(game, num_players=players))


def test_spaces_and_masks():
    env = make_single_agent("romi")
    obs, info = env.reset(seed=1)
    assert env.observation_space.shape == (E.observation_size("romi", 2),)
    assert env.action_space.n == E.ROMI_NUM_ACTIONS
    assert env.observation_space.contains(obs)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.any()
    assert np.array_equal(mask, info["action_mask"].astype(bool))
    assert env.metadata["name"] == "indian_romi_v1"


def test_reset_with_a_seed_is_reproducible_and_seats_vary():
    env = make_single_agent("basic")
    runs = [play_episode(env, seed=4, rng=np.random.default_rng(1)) for _ in range(2)]
    assert runs[0][0] == runs[1][0]
    seats = set()
    for seed in range(12):
        _, info = env.reset(seed=seed)
        seats.add(info["seat"])
    assert seats == {"player_0", "player_1"}
    fixed = make_single_agent("basic", seat=1)
    assert all(fixed.reset(seed=s)[1]["seat"] == "player_1" for s in range(4))


def test_opponents_may_be_callables_or_objects_one_per_seat():
    counting = CountingAgent()
    env = make_single_agent("basic", opponents=[first_legal, counting], seat=0)
    assert env.num_players == 3
    play_episode(env, seed=0)
    assert counting.calls > 0 and counting.resets == 1
    shared = make_single_agent("indian", opponents=first_legal, num_players=4)
    assert shared.num_players == 4
    shared.reset(seed=0)


def test_opponent_reset_is_called_at_every_hand_of_a_match():
    counting = CountingAgent()
    env = make_single_agent("romi", opponents=counting, match=True, match_target=60, max_turns=80, seat=0)
    _, info = play_episode(env, seed=3)
    assert counting.resets == info["hands_played"] >= 1


class BatchCounting(CountingAgent):
    """An opponent with act_batch (as every agents.base.Agent has): the wrapper must ask through it."""

    def __init__(self):
        super().__init__()
        self.rows = []

    def act(self, observation, action_mask):
        raise AssertionError("act() called: the wrapper should ask act_batch")

    def act_batch(self, observations, masks):
        self.rows.append(len(masks))
        assert observations.shape == (1, E.observation_size("basic", 2)) and masks.dtype == np.int8
        return np.array([np.flatnonzero(m)[-1] for m in masks], dtype=np.int64)


def test_opponents_with_act_batch_are_asked_through_it_one_row_at_a_time():
    batched, plain = BatchCounting(), CountingAgent()
    totals = [play_episode(make_single_agent("basic", opponents=o, seat=0), seed=2)[0] for o in (batched, plain)]
    assert batched.rows and set(batched.rows) == {1} and len(batched.rows) == plain.calls
    assert totals[0] == totals[1]  # the same choices (the last legal action) either way


def test_random_opponent_act_batch_draws_as_act_does():
    env = make_single_agent("romi", seat=0)
    obs, info = env.reset(seed=0)
    rows, masks = np.stack([obs] * 5), np.stack([info["action_mask"]] * 5)
    one, two = RandomOpponent(7), RandomOpponent(7)
    assert one.act_batch(rows, masks).tolist() == [two.act(o, m) for o, m in zip(rows, masks)]


def test_bad_opponents_are_errors():
    with pytest.raises(ValueError, match="2 given for 4 players"):
        make_single_agent("basic", opponents=[first_legal, first_legal], num_players=4)
    with pytest.raises(TypeError, match="opponent 42"):
        make_single_agent("basic", opponents=42)
    env = make_single_agent("basic", opponents=lambda obs, mask: int(np.flatnonzero(mask == 0)[0]), seat=0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="opponent player_1 chose an illegal action"):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(ValueError, match="seat=3"):
        make_single_agent("basic", seat=3)


def test_illegal_learner_action_terminates_by_default_and_may_raise():
    env = make_single_agent("indian", seat=0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and not truncated and reward == -130
    assert f"illegal action {illegal}" in info["illegal_action"]
    strict = make_single_agent("indian", seat=0, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match=f"illegal action {illegal}"):
        strict.step(illegal)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_episode_rewards_equal_the_learners_points():
    for seed in range(20):
        env = make_single_agent("basic", opponents=RandomOpponent(seed))
        total, info = play_episode(env, seed=seed)
        result = info.get("hand_result")
        if result and result["winner"] is not None:
            assert total == result["points"][info["seat"]] != 0
            return
    pytest.fail("no won hand in 20 episodes")


@pytest.mark.slow  # a training run
def test_maskable_ppo_learns_for_a_few_hundred_steps():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = make_single_agent("basic")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0,
                                    device="cpu", policy_kwargs={"net_arch": [64]})
    model.learn(total_timesteps=256)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]
    assert isinstance(env, SingleAgentRummyEnv)
