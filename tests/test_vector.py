"""rummy_env.vector against the PettingZoo environment, in lockstep, and its bad input."""

from __future__ import annotations

import numpy as np
import pytest

import rummy_env
from rummy_env.vector import IllegalActionError, VectorGame

PLAYER_COUNTS = [("indian", 2), ("indian", 4), ("indian", 6), ("basic", 2), ("basic", 3), ("basic", 4),
                 ("romi", 2), ("romi", 3), ("romi", 4)]


def _lockstep(game: str, players: int, num_envs: int, hands: int, seed: int, match: bool = False, **options) -> int:
    """Step a VectorGame and one AEC environment per slot with the same seeded random actions;
    every observation, mask, seat to act and reward must agree. Returns the hands finished."""
    vector = VectorGame(game, num_envs, players, seed=seed, match=match, **options)
    envs = [rummy_env.env(game, players, match=match, **options) for _ in range(num_envs)]
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    vector.reset(seed)
    rng = np.random.default_rng(seed)
    finished = 0
    while finished < hands:
        actions = np.zeros(num_envs, np.int64)
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert agent == f"player_{vector.to_act[i]}"
            seen = env.observe(agent)
            np.testing.assert_array_equal(vector.observations[i], seen["observation"])
            np.testing.assert_array_equal(vector.action_masks[i], seen["action_mask"])
            actions[i] = rng.choice(np.flatnonzero(seen["action_mask"]))
        vector.step(actions)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            over = all(env.terminations.values()) or all(env.truncations.values())
            assert over == bool(vector.terminated[i] or vector.truncated[i])
            if over:
                expected = [env._cumulative_rewards[a] for a in env.possible_agents]
                np.testing.assert_allclose(vector.rewards[i], expected)
                assert bool(vector.truncated[i]) == all(env.truncations.values())
                assert sum(vector.results[i].points) == pytest.approx(0.0)
                env.reset()
                finished += 1
            else:
                assert not vector.rewards[i].any() and vector.results[i] is None
    return finished


@pytest.mark.parametrize(("game", "players"), PLAYER_COUNTS)
def test_lockstep_with_the_environment(game, players):
    """Same observations, masks and rewards as rummy_env.env for the same seeds and actions (G1-G10)."""
    assert _lockstep(game, players, num_envs=6, hands=8 if players == 2 else 4, seed=11 * players) >= 4


def test_lockstep_in_match_mode():
    """Match mode (I8): hands follow one another to the target; the reward comes at the match's end."""
    _lockstep("indian", 2, num_envs=2, hands=1, seed=3, match=True, match_target=60)


def test_lockstep_short_hands_cut_off():
    """The turn cap (G9) truncates the hand, with rewards 0, in both."""
    assert _lockstep("basic", 2, num_envs=4, hands=8, seed=5, max_turns=6) >= 8


def test_same_seed_same_hands():
    """Same seed, same deals and results (G10)."""
    runs = []
    for _ in range(2):
        vector = VectorGame("romi", 4, 2, seed=9)
        vector.reset(9)
        rng = np.random.default_rng(1)
        trace = []
        for _ in range(300):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in vector.action_masks])
            vector.step(actions)
            trace.append(vector.observations.sum())
        runs.append(trace)
    assert runs[0] == runs[1]


def test_illegal_action_names_the_row_and_changes_nothing():
    vector = VectorGame("indian", 3, 2, seed=1)
    vector.reset(1)
    before = [vector.state(i).to_dict() for i in range(3)]
    observations = vector.observations.copy()
    legal = [int(np.flatnonzero(m)[0]) for m in vector.action_masks]
    illegal = int(np.flatnonzero(vector.action_masks[2] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"row 2: illegal action"):
        vector.step(np.array(legal[:2] + [illegal]))
    assert [vector.state(i).to_dict() for i in range(3)] == before
    np.testing.assert_array_equal(vector.observations, observations)


@pytest.mark.parametrize(("actions", "message"), [
    (np.zeros(2, np.int64), r"shape \(2,\)"),
    (np.zeros(3, np.float32), "dtype float32"),
    (np.array([0, 0, 999]), "row 2: action 999 is out of range"),
    (np.array([0, 0, -1]), "row 2: action -1 is out of range"),
])
def test_bad_actions(actions, message):
    vector = VectorGame("indian", 3, 2, seed=1)
    vector.reset(1)
    with pytest.raises(IllegalActionError, match=message):
        vector.step(actions)


@pytest.mark.parametrize(("options", "message"), [
    ({"game": "gin"}, "unknown game 'gin'"),
    ({"num_envs": 0}, "num_envs=0"),
    ({"reward_scale": float("inf")}, "reward_scale=inf"),
    ({"backend": "cuda"}, "backend='cuda'"),
    ({"num_players": 7}, "num_players"),
])
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        VectorGame(**({"game": "indian"} | options))


def test_observe_any_seat_matches_the_environment():
    vector = VectorGame("basic", 1, 3, seed=4)
    vector.reset(4)
    env = rummy_env.env("basic", 3)
    env.reset(seed=4)
    for seat in range(3):
        np.testing.assert_array_equal(vector.observe(0, seat), env.observe(f"player_{seat}")["observation"])
