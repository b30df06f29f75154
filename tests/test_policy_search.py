"""Search with a trained policy (agents.policy_search, docs/agents.md "Search with a policy").

Worlds are checked against the observation they were dealt from, the rollouts against the
reference engine played move by move, the whole search against the Python backend, and the
choices against hidden cards they must not depend on. Scenarios are hand diagrams in G2 notation.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.arena import ArenaConfig, run_arena
from agents.base import AgentError, plays_many_hands
from agents.policy_search import (
    Actors, PointsFromValue, PolicySearch, PolicySearchAgent, SearchBudget, SearchResult, load_policy, parse_spec,
    win_share,
)
from agents.registry import make_agent
from rummy_env.ruleset import make_ruleset
from rummy_env import solver
from rummy_env.cards import NUM_NATURAL, NUM_TYPES, parse_card, parse_cards, to_counts
from rummy_env.encoding import (
    DISCARD_BASE, INDIAN_DECLARE_BASE, ObservationEncoder, action_layout, action_mask, num_actions,
    observation_layout, observation_size,
)
from rummy_env.game import DRAW, GameState
from rummy_env.scenario import make_state
from rummy_env.vector import VectorGame

BASIC_2P = make_ruleset("basic", 2)
INDIAN_2P = make_ruleset("indian", 2)

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("indian", "basic", "romi")
_POLICIES: dict = {}


def policy_of(game: str):
    """The shipped policy of ``game`` and its value scale (loaded once per test session)."""
    if game not in _POLICIES:
        _POLICIES[game] = load_policy(f"pretrained:{game}", make_ruleset(game, 2))
    return _POLICIES[game]


def seat_view(state: GameState) -> tuple[np.ndarray, np.ndarray]:
    """The observation and mask of the seat to act."""
    return ObservationEncoder(state.rules).encode(state, state.current), action_mask(state)


def position(game: str, seed: int, moves: int) -> GameState:
    """A hand of ``game`` after ``moves`` greedy moves of its shipped policy in every seat (or, if
    the hand ends first, its last position)."""
    net, _ = policy_of(game)
    vector = VectorGame(game, 1, 2, backend="numba")
    vector.load(0, GameState.new(game, 2, seed=seed))
    played = []
    for _ in range(moves):
        probabilities, _ = net(vector.observations, vector.action_masks)
        played.append(np.where(vector.action_masks != 0, probabilities, -1).argmax(axis=1))
        vector.step_rows([0], played[-1])
        if vector.results[0] is not None:
            vector.load(0, GameState.new(game, 2, seed=seed))
            for action in played[:-1]:
                vector.step_rows([0], action)
            break
    return vector.state(0)


class FixedPreferences:
    """A stand-in policy: probabilities in proportion to a weight per action (over the legal ones), value 0."""

    def __init__(self, weights: np.ndarray):
        self.weights = np.asarray(weights, np.float64)

    def __call__(self, observations, masks):
        raw = np.where(np.asarray(masks) != 0, self.weights, 0.0)
        return (raw / raw.sum(axis=1, keepdims=True)).astype(np.float32), np.zeros(len(masks), np.float32)


def unsure(net, state: GameState) -> bool:
    """Would a search with ``confidence=1.0`` search this position: two legal moves or more, and
    the policy's top probability below 1?"""
    observation, mask = seat_view(state)
    probabilities = np.where(mask != 0, net(observation[None], mask[None])[0][0], 0)
    return int(np.count_nonzero(mask)) > 1 and float(probabilities.max()) < 1.0


def same_result(a: SearchResult, b: SearchResult) -> bool:
    fields = ("actions", "policy_actions", "searched", "candidates", "probabilities", "values", "errors")
    return all(np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True) for f in fields)


# ----------------------------------------------------------------------------- worlds


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10_000), moves=st.integers(0, 90),
       world_seed=st.integers(0, 2**32))
def test_every_world_shows_our_seat_exactly_the_real_observation(game, seed, moves, world_seed):
    """A world, loaded into the numba core the rollouts run on, gives our seat the real observation
    and mask; it holds every card of the deck once per copy (G2 counts), and the cards each
    opponent is known to hold (taken from the pile) are in that opponent's hand."""
    state = position(game, seed, moves)
    observation, mask = seat_view(state)
    engine = PolicySearch(make_ruleset(game, 2), policy_of(game)[0], SearchBudget(worlds=3, depth=0))
    worlds = engine.worlds(observation, world_seed)
    vector = VectorGame(game, len(worlds), 2, backend="numba")
    copies = [state.rules.decks] * NUM_NATURAL + [state.rules.printed_jokers]
    for slot, world in enumerate(worlds):
        vector.load(slot, world)
        assert np.array_equal(vector.observe(slot, 0), observation)
        assert np.array_equal(vector.action_masks[slot], mask)
        held = np.sum(world.hands, axis=0) + np.bincount(world.stock + world.discard, minlength=NUM_TYPES)
        for meld in world.table:
            held += np.bincount([c for c in meld[3] if c >= 0], minlength=NUM_TYPES)
        for card in (world.cut_card, world.wild_card):
            if card >= 0:
                held[card] += 1
        assert held.tolist() == copies
        for seat in range(1, 2):
            real_seat = (state.current + seat) % 2
            assert all(world.hands[seat][c] >= n for c, n in enumerate(state.known[real_seat]))


def test_worlds_change_with_the_seed_and_repeat_with_it():
    state = position("indian", 3, 20)
    observation, _ = seat_view(state)
    engine = PolicySearch(make_ruleset("indian", 2), policy_of("indian")[0], SearchBudget(worlds=4, depth=0))
    first = [w.to_dict() for w in engine.worlds(observation, 1)]
    assert first == [w.to_dict() for w in engine.worlds(observation, 1)]
    assert first != [w.to_dict() for w in engine.worlds(observation, 2)]
    assert len({repr(w["hands"][1]) for w in first}) > 1  # the worlds of one decision differ from each other


# ----------------------------------------------------------------------------- rollouts


@pytest.mark.parametrize("game", GAMES)
def test_rollouts_play_each_start_as_the_reference_engine_does(game):
    """play(): our points after the first action, then the policy greedy in every seat, as the
    Python engine plays it move by move (G9 cut-offs and G8 stalemates count 0)."""
    net, _ = policy_of(game)
    engine = PolicySearch(make_ruleset(game, 2), net, SearchBudget(worlds=1, depth=0))
    moves = action_layout(game).moves
    starts, firsts, expected = [], [], []
    for seed in range(4):
        state = position(game, seed, 7 + seed)
        observation, mask = seat_view(state)
        first = int(np.flatnonzero(mask)[-1])  # not the policy's choice, as a searched candidate may be
        world = engine.worlds(observation, seed)[0]
        starts.append(world)
        firsts.append(first)
        reference = world.clone()
        encoder = ObservationEncoder(reference.rules)
        reference.apply(moves[first])
        while not reference.is_over:
            probabilities, _ = net(encoder.encode(reference, reference.current)[None], action_mask(reference)[None])
            reference.apply(moves[int(np.where(action_mask(reference) != 0, probabilities[0], -1).argmax())])
        expected.append(reference.result.rewards[0])
    assert engine.play(starts, np.array(firsts)).tolist() == expected


@pytest.mark.parametrize("game", GAMES)
def test_rollouts_with_an_opponent_play_its_moves_in_its_seats(game):
    """play() with ``Actors``: our seat (either seat) plays its first action and then the policy,
    the other seat plays as the rule agent, as the Python engine plays it move by move; a win adds
    ``win_points`` to our points and a loss takes them away (the trainer's zero-sum win bonus)."""
    net, _ = policy_of(game)
    engine = PolicySearch(make_ruleset(game, 2), net, SearchBudget(worlds=1, depth=0), win_points=7.0)
    rule = make_agent("rule", make_ruleset(game, 2))
    moves = action_layout(game).moves
    starts, firsts, seats, actors, expected = [], [], [], [], []
    for seed in range(4):
        state = position(game, seed, 6 + seed)
        observation, mask = seat_view(state)
        seat = state.current
        first = int(np.flatnonzero(mask)[-1])
        starts.append(state)
        firsts.append(first)
        seats.append(seat)
        actors.append(Actors(rule, (1 - seat,)))
        reference = state.clone()
        encoder = ObservationEncoder(reference.rules)
        reference.apply(moves[first])
        while not reference.is_over:
            view, legal = encoder.encode(reference, reference.current)[None], action_mask(reference)[None]
            if reference.current == seat:
                action = int(np.where(legal[0] != 0, net(view, legal)[0][0], -1).argmax())
            else:
                action = int(rule.act_batch(view, legal)[0])
            reference.apply(moves[action])
        result = reference.result
        bonus = 0.0 if result.winner is None else 7.0 if result.winner == seat else -7.0
        expected.append(result.rewards[seat] + bonus)
    assert engine.play(starts, np.array(firsts), seats, actors).tolist() == expected


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_win_share_pays_the_bonus_as_the_trainer_does_zero_sum(players):
    """The winner gets the bonus, every other seat an equal share of minus it; no winner, no bonus."""
    for winner in range(players):
        shares = [win_share(12.0, winner, seat, players) for seat in range(players)]
        assert shares[winner] == 12.0 and sum(shares) == pytest.approx(0.0)
        assert all(share == pytest.approx(-12.0 / (players - 1)) for seat, share in enumerate(shares) if seat != winner)
    assert [win_share(12.0, None, seat, players) for seat in range(players)] == [0.0] * players
    assert win_share(0.0, 0, 1, players) == 0.0


class RecordingPoints:
    """A stand-in for ``PointsFromValue`` that records the observations it is asked about."""

    def __init__(self):
        self.seen = []

    def __call__(self, observations, values):
        self.seen.extend(observations.copy())
        return np.full(len(observations), 1000.0)


@pytest.mark.parametrize("game", GAMES)
def test_a_rollout_cut_at_depth_is_valued_at_the_start_of_our_turn(game):
    """With depth D a rollout stops when our D-th turn from now begins: our seat to act, in the
    draw phase; deeper cuts come later in the hand."""
    net, _ = policy_of(game)
    parts = observation_layout(game, 2)
    turn_at_cut = {}
    for depth in (1, 3):
        points = RecordingPoints()
        engine = PolicySearch(make_ruleset(game, 2), net, SearchBudget(worlds=4, depth=depth), points)
        state = position(game, 11, 4)
        observation, mask = seat_view(state)
        worlds = engine.worlds(observation, 0)
        first = np.argmax(net(observation[None], mask[None])[0][0])
        got = engine.play(worlds, np.full(len(worlds), first))
        assert len(points.seen) == int((got == 1000.0).sum()) >= 1
        for seen in points.seen:
            assert seen[parts["phase"]].tolist() == [1.0, 0.0]  # the draw phase
            assert seen[parts["to_act"]][0] == 1.0  # our seat (relative seat 0) is to act
        turn_at_cut[depth] = min(seen[parts["turn"]][0] for seen in points.seen)
    assert turn_at_cut[3] > turn_at_cut[1]


def test_depth_needs_a_value_scale():
    with pytest.raises(AgentError, match="depth=2"):
        PolicySearch(make_ruleset("indian", 2), policy_of("indian")[0], SearchBudget(depth=2), points_from_value=None)


def test_points_from_value_undo_the_trainers_scale_and_shaping():
    """The value head counts points x reward_scale plus shaping (docs/training.md): 0.05 with an
    I7 penalty of 21 is 5 - 21 points; Basic's deadwood (B5) and the payment potential likewise."""
    state = make_state("indian", ["Ah 2h 3h 5c 6c 7c 9s 9h 9d 4d 5d Kc 2s", "2c 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"],
                       discard="Jh", stock="Ad 8d")
    observation, _ = seat_view(state)
    hand = to_counts(parse_cards("Ah 2h 3h 5c 6c 7c 9s 9h 9d 4d 5d Kc 2s"))
    assert solver.indian_penalty(hand) == 4 + 5 + 10 + 2  # 4d 5d Kc 2s outside the melds
    config = {"reward_scale": 0.01, "shaping": True, "shaping_coef": 1.0}
    points = PointsFromValue.from_config(state.rules, config)
    assert points(observation[None], np.array([0.05]))[0] == pytest.approx(5 - 21)
    unshaped = PointsFromValue.from_config(state.rules, {"reward_scale": 0.01, "shaping": False})
    assert unshaped(observation[None], np.array([0.05]))[0] == pytest.approx(5)
    assert PointsFromValue.from_config(state.rules, {"shaping": True}) is None
    assert unshaped.win_points == 0.0  # no win bonus in the config: the value carries none
    assert PointsFromValue.from_config(state.rules, {"reward_scale": 0.01, "win_bonus": 2.0}).win_points == 200.0
    assert PointsFromValue.from_config(state.rules, None) is None

    basic = make_state("basic", ["5h 6h 7h 9c Kd 2s 2d", "2c 3c 4c 5c 6c 7c 8c"], discard="Qs", stock="Ac 3d")
    observation, _ = seat_view(basic)
    deadwood = PointsFromValue.from_config(basic.rules, {**config, "shaping_potential": "deadwood"})
    assert deadwood(observation[None], np.array([0.0]))[0] == pytest.approx(-(9 + 10 + 2 + 2))
    payment = PointsFromValue.from_config(basic.rules, {**config, "shaping_potential": "payment"})
    assert payment(observation[None], np.array([0.0]))[0] == pytest.approx(-(5 + 6 + 7 + 9 + 10 + 2 + 2))


# ----------------------------------------------------------------------------- choices


def test_I5_the_search_finds_the_declaration_a_weak_policy_ranks_second():
    """I5: after drawing 2d the hand declares (runs A-4h, 5-7c, sets 9s 9h 9d and Kd Kc Ks),
    discarding 2d. The stand-in policy prefers plainly discarding 2d (0.5) to declaring with it
    (0.3) and never declares in a rollout, so the declaration is worth what the other hand pays in
    each world and the plain discard at most a later win: the search declares."""
    hands = ["Ah 2h 3h 4h 5c 6c 7c 9s 9h 9d Kd Kc Ks", "2s 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"]
    state = make_state("indian", hands, discard="8h", stock="Ad 3c 3d 6d 7d 8d Th Jh Qh 2d")
    state.apply((DRAW, 0, 0))
    observation, mask = seat_view(state)
    declare, plain = INDIAN_DECLARE_BASE + parse_card("2d"), DISCARD_BASE + parse_card("2d")
    assert mask[declare] and mask[plain]
    weights = np.full(len(mask), 0.2 / (mask.sum() - 2))
    weights[plain], weights[declare] = 0.5, 0.3
    budget = SearchBudget(worlds=6, candidates=2, depth=0)
    agent = PolicySearchAgent(INDIAN_2P, FixedPreferences(weights), budget, seed=4)
    result = agent.search_batch(observation[None], mask[None])
    assert result.searched[0] and result.candidates[0].tolist() == [plain, declare]
    assert result.policy_actions[0] == plain and result.actions[0] == declare
    worlds = agent.engine.worlds(observation, agent.row_seed(observation, mask))
    assert result.values[0, 1] == pytest.approx(np.mean([solver.indian_penalty(w.hands[1]) for w in worlds]))
    assert result.values[0, 1] > 0


def test_the_z_guard_keeps_the_policys_choice_unless_the_gain_is_clear():
    """The same I5 position: with z = 3 the declaration's gain (the same sign in every world) still
    wins; the guard is applied to a gain whose errors are large."""
    hands = ["Ah 2h 3h 4h 5c 6c 7c 9s 9h 9d Kd Kc Ks", "2s 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"]
    state = make_state("indian", hands, discard="8h", stock="Ad 3c 3d 6d 7d 8d Th Jh Qh 2d")
    state.apply((DRAW, 0, 0))
    observation, mask = seat_view(state)
    weights = np.full(len(mask), 0.01)
    weights[DISCARD_BASE + parse_card("2d")], weights[INDIAN_DECLARE_BASE + parse_card("2d")] = 0.5, 0.3
    policy = FixedPreferences(weights)
    for z, declares in ((0.0, True), (3.0, True), (1e9, False)):
        agent = PolicySearchAgent(INDIAN_2P, policy, SearchBudget(worlds=6, candidates=2, depth=0, z=z), seed=4)
        result = agent.search_batch(observation[None], mask[None])
        gain = result.values[0, 1] - result.values[0, 0]
        assert gain > z * result.errors[0, 1] or not declares
        assert (result.actions[0] == INDIAN_DECLARE_BASE + parse_card("2d")) == declares


def searched_positions(game: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``count`` positions of ``game`` with more than one legal move."""
    observations, masks = [], []
    seed = 0
    while len(masks) < count:
        state = position(game, seed, 5 + 3 * seed)
        seed += 1
        observation, mask = seat_view(state)
        if state.is_over or mask.sum() < 2:
            continue
        observations.append(observation)
        masks.append(mask)
    return np.array(observations), np.array(masks)


@pytest.mark.parametrize("game", GAMES)
def test_search_results_are_legal_and_well_formed(game):
    observations, masks = searched_positions(game, 6)
    net, points = policy_of(game)
    budget = SearchBudget(worlds=2, candidates=3, confidence=1.0, depth=2)
    agent = PolicySearchAgent(make_ruleset(game, 2), net, budget, points)
    result = agent.search_batch(observations, masks)
    assert result.searched.sum() >= 3
    probabilities = np.where(masks != 0, net(observations, masks)[0], -1)
    for r in range(len(masks)):
        legal = np.flatnonzero(masks[r])
        assert result.searched[r] == (probabilities[r].max() < 1.0)
        count = min(3, legal.size) if result.searched[r] else 1
        row = result.candidates[r]
        assert masks[r, result.actions[r]] and result.actions[r] in row[:count]
        assert row[0] == result.policy_actions[r] == probabilities[r].argmax()
        assert len(set(row[:count].tolist())) == count and set(row[:count]) <= set(legal) and (row[count:] == -1).all()
        assert (np.diff(result.probabilities[r, :count]) <= 0).all()  # the most likely first
        if result.searched[r]:
            assert np.isfinite(result.values[r, :count]).all() and result.errors[r, 0] == 0
        assert np.isnan(result.values[r, count:]).all()


def test_a_confident_policy_or_a_single_legal_move_is_not_searched():
    observations, masks = searched_positions("indian", 4)
    net, _ = policy_of("indian")
    top = np.where(masks != 0, net(observations, masks)[0], 0).max(axis=1)
    threshold = float(np.median(top))
    agent = PolicySearchAgent(make_ruleset("indian", 2), net, SearchBudget(worlds=2, depth=0, confidence=threshold))
    result = agent.search_batch(observations, masks)
    assert result.searched.tolist() == (top < threshold).tolist()
    assert (result.actions[~result.searched] == result.policy_actions[~result.searched]).all()
    assert np.isnan(result.values[~result.searched]).all()
    single = np.zeros_like(masks[:1])
    single[0, np.flatnonzero(masks[0])[0]] = 1
    lone = agent.search_batch(observations[:1], single)
    assert not lone.searched[0] and lone.actions[0] == np.flatnonzero(masks[0])[0]


def test_hidden_cards_do_not_change_the_choice():
    """Two states that differ only in the other hand's cards and the stock (both hidden from us):
    the same observation, and for the same seed the same search, candidate values included."""
    net, points = policy_of("indian")
    state = next(s for s in (position("indian", 8, moves) for moves in range(12, 60)) if unsure(net, s))
    other = state.clone()
    opponent = 1 - state.current
    hidden = [c for c in range(NUM_TYPES) for _ in range(other.hands[opponent][c] - other.known[opponent][c])]
    swap = min(len(hidden), len(other.stock), 4)
    for k in range(swap):
        card, drawn = hidden[k], other.stock[k]
        other.hands[opponent][card] -= 1
        other.hands[opponent][drawn] += 1
        other.stock[k] = card
    other._legal = None
    assert other.hands != state.hands and np.array_equal(seat_view(other)[0], seat_view(state)[0])
    results = []
    for real in (state, other):
        agent = PolicySearchAgent(INDIAN_2P, net, SearchBudget(worlds=4, confidence=1.0, depth=2), points, seed=9)
        observation, mask = seat_view(real)
        results.append(agent.search_batch(observation[None], mask[None]))
    assert results[0].searched[0] and same_result(*results)


def test_rows_are_searched_as_if_alone_and_the_same_seed_gives_the_same_choices():
    observations, masks = searched_positions("indian", 5)
    net, points = policy_of("indian")
    budget = SearchBudget(worlds=3, confidence=1.0, depth=2)
    agent = PolicySearchAgent(make_ruleset("indian", 2), net, budget, points, seed=1)
    together = agent.search_batch(observations, masks)
    alone = [agent.search_batch(observations[r:r + 1], masks[r:r + 1]) for r in range(len(masks))]
    for r, one in enumerate(alone):
        assert np.array_equal(together.values[r], one.values[0], equal_nan=True)
        assert together.actions[r] == one.actions[0]
    again = PolicySearchAgent(make_ruleset("indian", 2), net, budget, points, seed=5)
    again.reset(seed=1)
    assert same_result(again.search_batch(observations, masks), together)
    assert agent.act(observations[0], masks[0]) == together.actions[0]
    other_seed = PolicySearchAgent(INDIAN_2P, net, budget, points, seed=2).search_batch(observations, masks)
    assert not np.array_equal(other_seed.values, together.values, equal_nan=True)


@pytest.mark.parametrize("game,depth", [("indian", 0), ("basic", 2), ("romi", 1)])
def test_the_numba_search_is_the_python_reference_search(game, depth):
    """The same search on the reference engine (backend="python") finds the same values and choices."""
    observations, masks = searched_positions(game, 3)
    net, points = policy_of(game)
    budget = SearchBudget(worlds=2, confidence=1.0, depth=depth)
    seeds = [3, 4, 5]
    rules = make_ruleset(game, 2)
    fast = PolicySearch(rules, net, budget, points).search(observations, masks, seeds)
    reference = PolicySearch(rules, net, budget, points, backend="python").search(observations, masks, seeds)
    assert fast.searched.any() and same_result(fast, reference)


# ----------------------------------------------------------------------------- specs


def test_the_spec_builds_the_agent_with_its_budget():
    spec = "search:policy=pretrained:basic,worlds=5,candidates=4,depth=3,confidence=0.8,z=1.5"
    agent = make_agent(spec, BASIC_2P, seed=3)
    assert isinstance(agent, PolicySearchAgent) and plays_many_hands(agent)
    assert agent.engine.budget == SearchBudget(worlds=5, candidates=4, depth=3, confidence=0.8, z=1.5)
    assert make_agent("search:policy=pretrained:basic", make_ruleset("basic", 2)).engine.budget == SearchBudget()
    assert agent.engine.points_from_value.reward_scale == 0.01 and agent.engine.points_from_value.shaping_coef == 1.0
    assert agent.name.startswith("search:policy=pretrained:basic")
    assert type(make_agent("search:worlds=2", BASIC_2P)).__name__ == "SearchAgent"  # the rule-agent search
    # the rollouts count what the policy was trained to win: its win bonus in points, unless told
    assert agent.engine.win_points == pytest.approx(agent.engine.points_from_value.win_points)
    assert make_agent("search:policy=pretrained:basic,win_points=0", make_ruleset("basic", 2)).engine.win_points == 0.0
    assert make_agent("search:policy=pretrained:basic,win_points=30", BASIC_2P).engine.win_points == 30.0
    assert parse_spec("search:policy=onnx:a/b.onnx,worlds=3") == ("onnx:a/b.onnx", {"worlds": 3})


@pytest.mark.parametrize("spec,game,players,message", [
    ("search:worlds=3,policy=", "indian", 2, "policy= names no policy"),
    ("search:policy=pretrained:indian,worlds=0", "indian", 2, "worlds=0"),
    ("search:policy=pretrained:indian,worlds=many", "indian", 2, "worlds='many' is not a whole number"),
    ("search:policy=pretrained:indian,worlds=2.5", "indian", 2, "worlds='2.5'"),
    ("search:policy=pretrained:indian,candidates=1", "indian", 2, "candidates=1"),
    ("search:policy=pretrained:indian,depth=-1", "indian", 2, "depth=-1"),
    ("search:policy=pretrained:indian,confidence=0", "indian", 2, "confidence=0"),
    ("search:policy=pretrained:indian,confidence=1.5", "indian", 2, "confidence=1.5"),
    ("search:policy=pretrained:indian,z=-1", "indian", 2, "z=-1"),
    ("search:policy=pretrained:indian,z=nan", "indian", 2, "z=nan"),
    ("search:policy=pretrained:indian,width=3", "indian", 2, "unknown setting 'width=3'"),
    ("search:policy=pretrained:indian,win_points=-5", "indian", 2, "win_points=-5"),
    ("search:policy=pretrained:indian,win_points=inf", "indian", 2, "win_points=inf"),
    ("search:policy=pretrained:indian,win_points=lots", "indian", 2, "win_points='lots' is not a number"),
    ("search:policy=pretrained:indian,worlds=2,worlds=3", "indian", 2, "'worlds' is given twice"),
    ("search:policy=pretrained:basic", "indian", 2, "pretrained:basic plays 'basic', not 'indian'"),
    ("search:policy=pretrained:indian", "indian", 3, "no policy for 'indian' at a table of 3"),
    ("search:policy=onnx:/no/such/policy.onnx", "indian", 2, "no such file"),
    ("search:policy=ppo:/no/such/best.pt", "indian", 2, "no such file"),
    ("search:policy=ppo:", "indian", 2, "expected ppo:PATH"),
    ("search:policy=rule", "indian", 2, "policy='rule': expected a trained policy"),
])
def test_bad_search_specs_are_errors_naming_what_is_wrong(spec, game, players, message):
    with pytest.raises(AgentError, match=None) as caught:
        make_agent(spec, make_ruleset(game, players))
    assert message in str(caught.value) and spec in str(caught.value)


def test_a_ppo_checkpoint_searches_with_its_value_scale(tmp_path):
    """ppo:PATH: the torch network, its probabilities those of the masked softmax, its config's scale."""
    import torch

    from agents.policy import MaskedActorCritic, save_checkpoint

    torch.manual_seed(0)
    model = MaskedActorCritic(observation_size("indian", 2), num_actions("indian"), hidden=(32,))
    path = save_checkpoint(tmp_path / "tiny.pt", model, "indian", 2,
                           config={"reward_scale": 0.02, "shaping": True, "shaping_coef": 0.5})
    agent = make_agent(f"search:policy=ppo:{path},worlds=2,depth=1,confidence=1", make_ruleset("indian", 2))
    observations, masks = searched_positions("indian", 3)
    probabilities, values = agent.engine.policy(observations, masks)
    with torch.no_grad():
        logits, expected_values = model(torch.as_tensor(observations), torch.as_tensor(masks))
    assert np.allclose(probabilities, torch.softmax(logits, -1).numpy()) and np.allclose(values, expected_values)
    assert (agent.engine.points_from_value.reward_scale, agent.engine.points_from_value.shaping_coef) == (0.02, 0.5)
    actions = agent.act_batch(observations, masks)
    assert all(masks[r, a] for r, a in enumerate(actions))
    basic = save_checkpoint(tmp_path / "basic.pt", MaskedActorCritic(observation_size("basic", 2),
                                                                      num_actions("basic")), "basic", 2)
    with pytest.raises(AgentError, match="trained for 'basic'"):
        make_agent(f"search:policy=ppo:{basic}", make_ruleset("indian", 2))


def test_an_onnx_policy_searches_without_importing_torch():
    code = ("import sys, numpy as np\n"
            "from agents.registry import make_agent\n"
            "from rummy_env.ruleset import make_ruleset\n"
            "from rummy_env.vector import VectorGame\n"
            "rules = make_ruleset('romi', 2)\n"
            "agent = make_agent('search:policy=pretrained:romi,worlds=2,depth=1,confidence=1', rules)\n"
            "v = VectorGame('romi', 4, 2, seed=1); v.reset(seed=1)\n"
            "actions = agent.act_batch(v.observations, v.action_masks)\n"
            "assert all(v.action_masks[r, a] for r, a in enumerate(actions))\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_search_plays_in_the_arena_the_same_hands_for_the_same_seed():
    config = ArenaConfig(game="indian", agents=("search:policy=pretrained:indian,worlds=2,depth=2,confidence=0.99",
                                                "pretrained:indian"), hands=4, seed=3)
    first = run_arena(config, workers=1, progress=False)
    assert [r["points"] for r in first] == [r["points"] for r in run_arena(config, workers=1, progress=False)]
    assert len(first) == 4 and all(r["outcome"] in ("declare", "out", "stalemate", "cut_off") for r in first)


def test_a_batch_searched_in_groups_finds_what_one_group_finds(monkeypatch):
    """More rollouts than ``MAX_ROLLOUTS`` are played group by group, with the same results."""
    import agents.policy_search as policy_search

    observations, masks = searched_positions("basic", 4)
    net, points = policy_of("basic")
    budget = SearchBudget(worlds=3, confidence=1.0, depth=1)
    whole = PolicySearch(make_ruleset("basic", 2), net, budget, points).search(observations, masks, [1, 2, 3, 4])
    monkeypatch.setattr(policy_search, "MAX_ROLLOUTS", 7)
    engine = PolicySearch(make_ruleset("basic", 2), net, budget, points)
    assert len(engine._groups(list(range(4)), whole.candidates)) == 4
    assert same_result(engine.search(observations, masks, [1, 2, 3, 4]), whole)
