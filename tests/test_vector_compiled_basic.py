"""``VectorGame("basic", backend="numba")`` against the Python engine, in lockstep, and its bad input.

Both backends get the same seeds and the same random legal actions; every step their
observations, masks, seats to act, rewards, terminated/truncated flags and results must be equal,
and now and then every seat's ``observe`` and each slot's ``state``. Random play rarely goes out,
so actions prefer melds and lay-offs (going out by a play, B4). Now and then a row is sent an
illegal action (both backends must refuse it with the same message and change nothing), and a
slot is loaded with another slot's hand in the middle of a turn (the card just taken, G7).
``benchmarks/lockstep_vector.py --games basic`` runs the same check over many more hands.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env.encoding import BASIC_MELD_BASE, BASIC_PLACE_BASE
from rummy_env.game import PHASE_PLAY, GameState
from rummy_env.vector import IllegalActionError, VectorGame
from vector_lockstep import assert_same, refuse_both

def _actions(masks: np.ndarray, rng: np.random.Generator, greed: float = 1.0) -> np.ndarray:
    """A random legal action per row; melds and lay-offs weighted up by ``greed``."""
    weights = rng.random(masks.shape) + masks
    weights[:, BASIC_MELD_BASE:] += greed * masks[:, BASIC_MELD_BASE:]
    return np.argmax(weights * (masks > 0), axis=1).astype(np.int64)


def basic_lockstep(players: int, num_envs: int, steps: int, seed: int, *, look_every: int = 53,
                   illegal_every: int = 0, load_every: int = 0, rows_every: int = 0, greed: float = 1.0,
                   **options) -> Counter:
    """Step both backends ``steps`` times; returns how the hands (matches) ended, by outcome, and
    counts of what was exercised: ``"by_play"`` (out by a meld or lay-off, B4), ``"rummy"``
    (out without having laid anything before, B6), ``"layoff"`` (lay-offs played, B3),
    ``"refused"``, ``"loaded"``."""
    python = VectorGame("basic", num_envs, players, seed=seed, **options)
    numba = VectorGame("basic", num_envs, players, seed=seed, backend="numba", **options)
    python.reset(seed)
    numba.reset(seed)
    rng = np.random.default_rng(seed)
    counts: Counter = Counter()
    assert_same(python, numba, "after reset")
    for step in range(steps):
        actions = _actions(python.action_masks, rng, greed)
        if illegal_every and step % illegal_every == 0:
            counts["refused"] += refuse_both(python, numba, actions, rng, out_of_range=0.1)
        if load_every and step % load_every == 0 and not python.match_mode:
            source, target = (int(x) for x in rng.integers(num_envs, size=2))
            state = python.state(source)
            if state.phase == PHASE_PLAY:  # mid-turn: the card just taken travels too
                python.load(target, state.clone())
                numba.load(target, state.clone())
                actions = _actions(python.action_masks, rng, greed)
                counts["loaded"] += 1
                assert_same(python, numba, f"load at step {step}")
        counts["layoff"] += int(np.count_nonzero(actions >= BASIC_PLACE_BASE))
        laid = numba._core.has_laid.copy()  # who had laid before this turn (B6)
        seats = python.to_act.copy()
        if rows_every and step % rows_every == 0:
            rows = rng.permutation(num_envs)[:max(1, num_envs // 2)]
            python.step_rows(rows, actions[rows])
            numba.step_rows(rows, actions[rows])
        else:
            python.step(actions)
            numba.step(actions)
        assert_same(python, numba, f"step {step}")
        counts.update(r.outcome for r in python.results if r is not None)
        for i, r in enumerate(python.results):
            if r is not None and r.outcome == "out":
                counts["by_play"] += int(actions[i] >= BASIC_MELD_BASE)
                counts["rummy"] += int(not laid[i, seats[i]])
        if step % look_every == 0:
            i = step % num_envs
            for seat in range(players):
                np.testing.assert_array_equal(python.observe(i, seat), numba.observe(i, seat))
            assert numba.state(i).to_dict() == python.state(i).to_dict()
    return counts


def test_lockstep_two_players_whole_hands():
    """Whole hands: going out by a play or a last discard (B4), lay-offs (B3), refusals, loads."""
    counts = basic_lockstep(2, num_envs=16, steps=1500, seed=11, illegal_every=37, load_every=29)
    assert counts["out"] >= 100 and counts["by_play"] >= 5 and counts["layoff"] >= 100
    assert counts["refused"] >= 30 and counts["loaded"] >= 10


@pytest.mark.parametrize("players", [3, 4])
def test_lockstep_more_players(players):
    counts = basic_lockstep(players, num_envs=8, steps=800, seed=players, illegal_every=41, load_every=31)
    assert counts["out"] >= 15


def _rummy_hand(seed: int) -> GameState:
    """A fresh 2-player hand with B6 on whose first player holds A-4 of spades, three fives and
    9-J of clubs: melds all ten cards in one turn."""
    wanted = [0, 1, 2, 3, 17, 30, 43, 47, 48, 49]  # A-4♠, 5♥ 5♦ 5♣, 9-J♣ (suit * 13 + rank)
    data = GameState.new("basic", 2, seed, rummy_bonus=True).to_dict()
    hand = data["hands"][0]
    spare = [c for c in range(52) for _ in range(hand[c]) if c not in wanted]
    for card in wanted:
        if hand[card]:
            continue
        swap = spare.pop()
        for where in [data["stock"], data["discard"], *data["hands"][1:]]:
            if isinstance(where, list) and len(where) == 53:  # another hand: counts per card type
                if where[card]:
                    where[card] -= 1
                    where[swap] += 1
                    break
            elif card in where:
                where[where.index(card)] = swap
                break
        hand[card] += 1
        hand[swap] -= 1
    return GameState.from_dict(data)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rummy_bonus_doubles_the_payments(seed):
    """B6: out in one turn, having laid nothing before: the payments are doubled, on both backends."""
    state = _rummy_hand(seed)
    python = VectorGame("basic", 1, 2, seed=seed, rummy_bonus=True)
    numba = VectorGame("basic", 1, 2, seed=seed, backend="numba", rummy_bonus=True)
    for vector in (python, numba):
        vector.reset(seed)
        vector.load(0, state.clone())
    assert_same(python, numba, "after load")
    loser = sum(state.rules.values[c] * k for c, k in enumerate(state.hands[1]))
    for step in range(20):
        masks = python.action_masks[0]
        plays = np.flatnonzero(masks[BASIC_MELD_BASE:]) + BASIC_MELD_BASE
        action = int(plays[0]) if plays.size else int(np.flatnonzero(masks)[-1]) if not masks[0] else 0
        python.step(np.array([action]))
        numba.step(np.array([action]))
        assert_same(python, numba, f"step {step}")
        if python.results[0] is not None:
            break
    result = python.results[0]
    assert result.outcome == "out" and result.winner == 0 and result.payments == (0, 2 * loser)


def test_lockstep_stalemates():
    """Timid play runs the stock out: rebuilt once, then a stalemate (G8)."""
    counts = basic_lockstep(2, num_envs=8, steps=800, seed=4, greed=-0.9)
    assert counts["stalemate"] >= 3


def test_lockstep_turn_cap_and_step_rows():
    """Hands cut off by the turn cap (G9); ``step_rows`` steps only the rows given."""
    counts = basic_lockstep(2, num_envs=10, steps=500, seed=5, rows_every=3, max_turns=12, greed=-0.5)
    assert counts["cut_off"] >= 20


@pytest.mark.parametrize(("players", "match_reward"), [(2, "points"), (3, "win")])
def test_lockstep_match_mode(players, match_reward):
    """Matches: totals in the observation, the reward at the match's end, max_hands cut-offs."""
    counts = basic_lockstep(players, num_envs=8, steps=1200, seed=8, match=True, match_target=30, max_hands=4,
                            match_reward=match_reward, rummy_bonus=True, greed=3.0)
    assert counts["match"] >= 2


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 4), st.integers(0, 2**40), st.integers(2, 60))
def test_lockstep_any_seed(players, seed, max_turns):
    basic_lockstep(players, num_envs=3, steps=120, seed=seed, look_every=7, illegal_every=11, load_every=13,
                   max_turns=max_turns)


def test_refusals_name_the_rule():
    """The card just taken may not be discarded at once (G7): both backends say so alike."""
    python = VectorGame("basic", 4, 2, seed=2)
    numba = VectorGame("basic", 4, 2, seed=2, backend="numba")
    python.reset(2)
    numba.reset(2)
    actions = np.ones(4, np.int64)  # every row takes the discard top
    python.step(actions)
    numba.step(actions)
    taken = python.state(0).taken_card
    actions = _actions(python.action_masks, np.random.default_rng(2))
    actions[0] = 2 + taken
    messages = []
    for vector in (python, numba):
        with pytest.raises(IllegalActionError) as err:
            vector.step(actions)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "(G7)" in messages[0]
