"""``VectorGame.load`` and ``VectorGame.step_rows``: chosen hands in chosen slots, some rows stepped.

The arena (duplicate deals) and the search agent (rollouts from guessed states) play through these.
"""

from __future__ import annotations

import numpy as np
import pytest

from rummy_env.encoding import ObservationEncoder, action_layout, action_mask
from rummy_env.game import GameState
from rummy_env.match import Match
from rummy_env.ruleset import make_ruleset
from rummy_env.vector import IllegalActionError, VectorGame


def _random_line(state: GameState, rng: np.random.Generator) -> tuple[list[int], GameState]:
    """A random legal line of actions played on a copy of ``state`` to the hand's end."""
    state = state.clone()
    moves = action_layout(state.rules.game).moves
    line = []
    while not state.is_over:
        action = int(rng.choice(np.flatnonzero(action_mask(state))))
        line.append(action)
        state.apply(moves[action])
    return line, state


@pytest.mark.parametrize(("game", "players"), [("indian", 2), ("basic", 3), ("romi", 2)])
def test_a_loaded_hand_plays_as_the_engine_plays_it(game, players):
    """Row = the encoder's observation and mask of the loaded state; the same actions end the same way (G1-G10)."""
    rules = make_ruleset(game, players)
    encoder = ObservationEncoder(rules)
    vector = VectorGame(game, 3, players)
    vector.reset(seed=1)
    state = GameState(rules, "load:0", 1)
    for _ in range(5):  # some way into the hand: the tracker must start from the state as it is
        state.apply(action_layout(game).moves[int(np.flatnonzero(action_mask(state))[0])])
    line, end = _random_line(state, np.random.default_rng(players))
    vector.load(1, state)
    others = [vector.state(0).to_dict(), vector.state(2).to_dict()]
    for action in line:
        assert vector.state(1) is state
        np.testing.assert_array_equal(vector.observations[1], encoder.encode(state, state.current))
        np.testing.assert_array_equal(vector.action_masks[1], action_mask(state))
        assert vector.to_act[1] == state.current
        vector.step_rows([1], [action])
    result = vector.results[1]
    assert result is not None and result.outcome == end.result.outcome and result.winner == end.result.winner
    assert list(result.payments) == list(end.result.payments) and result.turns == end.turn
    np.testing.assert_allclose(vector.rewards[1], end.result.rewards)
    assert [vector.state(0).to_dict(), vector.state(2).to_dict()] == others  # rows not stepped did not move
    assert vector.state(1) is not state  # the slot dealt its next hand


def test_step_rows_on_every_row_is_step():
    """step_rows(all rows) and step play alike: the same buffers and results, step after step."""
    one = VectorGame("romi", 4, 2, seed=3)
    two = VectorGame("romi", 4, 2, seed=3)
    one.reset(3)
    two.reset(3)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in one.action_masks])
        got = one.step(actions)
        want = two.step_rows([3, 1, 0, 2], actions[[3, 1, 0, 2]])
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
        assert one.results == two.results
        ended += sum(r is not None for r in one.results)
    assert ended >= 4


def test_a_loaded_match_deals_its_next_hands_and_pays_at_its_end():
    """Match mode (B6): the Match given deals the following hands; the reward is the sum of the hands' points."""
    rules = make_ruleset("basic", 2, match_target=60)
    match = Match(rules, "load:match")
    vector = VectorGame("basic", 2, 2, match=True, match_target=60)
    vector.load(0, match.deal(), match)
    assert vector.match_of(0) is match and vector.match_of(1) is None
    rng = np.random.default_rng(5)
    points = [0.0, 0.0]
    for _ in range(5000):
        state = vector.state(0)
        vector.step_rows([0], [rng.choice(np.flatnonzero(vector.action_masks[0]))])
        if state.is_over and vector.results[0] is None:
            points = [p + r for p, r in zip(points, state.result.rewards)]
        if vector.results[0] is not None:
            last = state.result.rewards
            points = [p + r for p, r in zip(points, last)]
            break
    result = vector.results[0]
    assert result is not None and result.outcome == "match"
    assert match.is_over and result.turns == match.hands_played >= 2
    assert list(result.payments) == match.totals
    assert list(result.points) == pytest.approx(points)


def test_load_before_reset_then_the_slot_deals_as_reset_zero():
    vector = VectorGame("indian", 2, 2)
    rules = make_ruleset("indian", 2)
    state = GameState(rules, "x", 0)
    vector.load(0, state)
    line, _ = _random_line(state, np.random.default_rng(2))
    for action in line:
        vector.step_rows([0], [action])
    fresh = VectorGame("indian", 2, 2)
    fresh.reset(0)
    assert vector.state(0).to_dict() == fresh.state(0).to_dict()


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda r: GameState(make_ruleset("basic", 2), 0), ValueError, "basic for 2 players"),
    (lambda r: GameState(make_ruleset("indian", 3), 0), ValueError, "indian for 3 players"),
    (lambda r: GameState(make_ruleset("indian", 2, wild_joker=True), 0), ValueError, "rule set"),
    (lambda r: {"hands": []}, TypeError, "expected a rummy_env.game.GameState"),
])
def test_load_refuses_a_state_of_another_game(make, error, message):
    vector = VectorGame("indian", 2, 2)
    vector.reset(0)
    before = vector.observations.copy()
    with pytest.raises(error, match=message):
        vector.load(0, make(None))
    np.testing.assert_array_equal(vector.observations, before)


def test_load_refuses_a_finished_hand_a_missing_match_and_a_bad_slot():
    rules = make_ruleset("basic", 2)
    _, over = _random_line(GameState(rules, 0), np.random.default_rng(1))
    vector = VectorGame("basic", 2, 2)
    with pytest.raises(ValueError, match="the hand is over"):
        vector.load(0, over)
    with pytest.raises(ValueError, match="plays single hands"):
        vector.load(0, GameState(rules, 0), Match(rules, 0))
    with pytest.raises(ValueError, match="expected the Match of the hand in match mode"):
        VectorGame("basic", 2, 2, match=True).load(0, GameState(rules, 0))
    with pytest.raises(IndexError, match="slot 2: expected 0..1"):
        vector.load(2, GameState(rules, 0))


@pytest.mark.parametrize(("rows", "actions", "message"), [
    ([0, 0], [0, 0], "listed twice"),
    ([5], [0], "row 5 is out of range"),
    ([1], [0], "row 1 holds no hand yet"),
    ([0], [0, 0], r"actions of shape \(2,\): expected \(1,\)"),
    ([0], [0.0], "dtype float64"),
    ([0], [999], "row 0: action 999 is out of range"),
    ([[0]], [0], "expected a 1-d sequence"),
])
def test_step_rows_refuses_bad_rows_and_actions(rows, actions, message):
    vector = VectorGame("indian", 2, 2)
    vector.load(0, GameState(make_ruleset("indian", 2), 0))
    before = vector.state(0).to_dict()
    with pytest.raises(IllegalActionError, match=message):
        vector.step_rows(rows, actions)
    assert vector.state(0).to_dict() == before


def test_step_rows_illegal_action_names_the_row_and_changes_nothing():
    vector = VectorGame("basic", 3, 2, seed=2)
    vector.reset(2)
    before = [vector.state(i).to_dict() for i in range(3)]
    legal = int(np.flatnonzero(vector.action_masks[0])[0])
    illegal = int(np.flatnonzero(vector.action_masks[2] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"row 2: illegal action"):
        vector.step_rows([0, 2], [legal, illegal])
    assert [vector.state(i).to_dict() for i in range(3)] == before
