"""``VectorGame("romi", backend="numba")`` against the Python engine, in lockstep, and its bad input.

Both backends get the same seeds and the same random legal actions; every step their
observations, masks, seats to act, rewards, terminated/truncated flags and results must be equal,
and now and then every seat's ``observe`` and each slot's ``state``. Going out with the cut card
(R4) is rare in random play, so actions take it whenever it is legal. Now and then a row is sent an
illegal action (both backends must refuse it with the same message and change nothing), and a
slot is loaded with another slot's hand in the middle of a turn (owed cards, R4, R5).
``benchmarks/lockstep_vector.py --games romi`` runs the same check over many more hands.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env.encoding import ROMI_TAKE_CUT_ACTION, layout_for
from rummy_env.game import PHASE_PLAY
from rummy_env.vector import IllegalActionError, VectorGame
from vector_lockstep import assert_same, refuse_both

def _actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row; the cut card (R4) whenever it is legal."""
    weights = rng.random(masks.shape) + masks
    weights[:, ROMI_TAKE_CUT_ACTION] += 2 * masks[:, ROMI_TAKE_CUT_ACTION]
    return np.argmax(weights * (masks > 0), axis=1).astype(np.int64)


def romi_lockstep(players: int, num_envs: int, steps: int, seed: int, *, look_every: int = 53,
                  illegal_every: int = 0, load_every: int = 0, rows_every: int = 0, search_budget: int | None = None,
                  **options) -> Counter:
    """Step both backends ``steps`` times; returns how the hands (matches) ended, by outcome, and
    counts of what was exercised: ``"cut"`` (went out with the cut card), ``"owed"`` (steps with a
    card owed to the table in some row), ``"refused"``, ``"loaded"``, ``"engine"`` (masks the
    engine wrote after a look-ahead ran out of budget)."""
    python = VectorGame("romi", num_envs, players, seed=seed, **options)
    numba = VectorGame("romi", num_envs, players, seed=seed, backend="numba", **options)
    if search_budget is not None:
        numba._core.search_budget = search_budget
    python.reset(seed)
    numba.reset(seed)
    rng = np.random.default_rng(seed)
    counts: Counter = Counter()
    assert_same(python, numba, "after reset")
    must = layout_for(python.rules).slices["must_place"]
    for step in range(steps):
        actions = _actions(python.action_masks, rng)
        if illegal_every and step % illegal_every == 0:
            counts["refused"] += refuse_both(python, numba, actions, rng)
        if load_every and step % load_every == 0 and not python.match_mode:
            source, target = (int(x) for x in rng.integers(num_envs, size=2))
            state = python.state(source)
            if state.phase == PHASE_PLAY:  # mid-turn: what is owed and taken travels too
                python.load(target, state.clone())
                numba.load(target, state.clone())
                actions = _actions(python.action_masks, rng)
                counts["loaded"] += 1
                assert_same(python, numba, f"load at step {step}")
        counts["cut"] += int(np.count_nonzero(actions == ROMI_TAKE_CUT_ACTION))
        if rows_every and step % rows_every == 0:
            rows = rng.permutation(num_envs)[:max(1, num_envs // 2)]
            python.step_rows(rows, actions[rows])
            numba.step_rows(rows, actions[rows])
        else:
            python.step(actions)
            numba.step(actions)
        assert_same(python, numba, f"step {step}")
        counts.update(r.outcome for r in python.results if r is not None)
        counts["owed"] += bool(python.observations[:, must].any())
        if step % look_every == 0:
            i = step % num_envs
            for seat in range(players):
                np.testing.assert_array_equal(python.observe(i, seat), numba.observe(i, seat))
            assert numba.state(i).to_dict() == python.state(i).to_dict()
    counts["engine"] = numba._core.engine_masks
    return counts


def test_lockstep_two_players_whole_hands():
    """Whole hands: going out (R6, with the cut card R4), owed cards (R4, R5), refusals, loads."""
    counts = romi_lockstep(2, num_envs=16, steps=1500, seed=11, illegal_every=37, load_every=29)
    assert counts["out"] >= 150 and counts["cut"] >= 5
    assert counts["owed"] >= 300 and counts["refused"] >= 30 and counts["loaded"] >= 10


@pytest.mark.parametrize("players", [3, 4])
def test_lockstep_more_players(players):
    counts = romi_lockstep(players, num_envs=8, steps=800, seed=players, illegal_every=41, load_every=31)
    assert counts["out"] >= 30


def test_lockstep_turn_cap_and_step_rows():
    """Hands cut off by the turn cap (G9); ``step_rows`` steps only the rows given."""
    counts = romi_lockstep(2, num_envs=10, steps=500, seed=5, rows_every=3, max_turns=12)
    assert counts["cut_off"] >= 20


@pytest.mark.parametrize(("players", "match_reward"), [(2, "points"), (3, "win")])
def test_lockstep_match_mode(players, match_reward):
    """Matches (R8): totals in the observation, the reward at the match's end, max_hands cut-offs."""
    counts = romi_lockstep(players, num_envs=8, steps=1200, seed=8, match=True, match_target=100, max_hands=3,
                           match_reward=match_reward)
    assert counts["match"] >= 2 and counts["cut_off"] >= 5


def test_lockstep_engine_writes_masks_when_the_budget_runs_out():
    """With a look-ahead budget of a few positions the engine writes many masks: still identical."""
    counts = romi_lockstep(2, num_envs=8, steps=600, seed=13, search_budget=2, load_every=23)
    assert counts["engine"] >= 50


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 4), st.integers(0, 2**40), st.integers(2, 60))
def test_lockstep_any_seed(players, seed, max_turns):
    romi_lockstep(players, num_envs=3, steps=120, seed=seed, look_every=7, illegal_every=11, load_every=13,
                  max_turns=max_turns)


def test_refusals_name_the_rule():
    """After the first turn the discard top is refused unless this turn can place it (R4)."""
    python = VectorGame("romi", 4, 2, seed=2)
    numba = VectorGame("romi", 4, 2, seed=2, backend="numba")
    python.reset(2)
    numba.reset(2)
    rng = np.random.default_rng(2)
    for _ in range(200):
        refused = np.flatnonzero((python.action_masks[:, 1] == 0) & (python.action_masks[:, 0] == 1))
        if refused.size:
            break
        actions = _actions(python.action_masks, rng)
        python.step(actions)
        numba.step(actions)
    row = int(refused[0])
    actions = _actions(python.action_masks, rng)
    actions[row] = 1
    messages = []
    for vector in (python, numba):
        with pytest.raises(IllegalActionError) as err:
            vector.step(actions)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "(R4)" in messages[0]

