"""``VectorGame(backend="numba")`` against the Python engine, in lockstep, and its bad input.

Both backends get the same seeds and the same random legal actions; every step their
observations, masks, seats to act, rewards, terminated/truncated flags and results must be equal,
and now and then every seat's ``observe`` and each slot's ``state``. Declarations are rare in
random play, so actions prefer a declaration whenever one is legal, and some slots are loaded with
a hand one draw away from declaring (I5). ``benchmarks/lockstep_vector.py`` runs the same check
over many more hands.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env.cards import JOKER, NUM_RANKS, NUM_TYPES
from rummy_env.compiled import mt19937
from rummy_env.encoding import INDIAN_DECLARE_BASE, layout_for
from rummy_env.game import GameState
from rummy_env.match import Match
from rummy_env.ruleset import make_ruleset
from rummy_env.vector import BACKENDS, IllegalActionError, VectorGame
from vector_lockstep import assert_same

def _actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row, a declaration whenever one is legal (I5)."""
    weights = rng.random(masks.shape) + masks
    weights[:, INDIAN_DECLARE_BASE:] += masks[:, INDIAN_DECLARE_BASE:]
    return np.argmax(weights * (masks > 0), axis=1).astype(np.int64)


def lockstep(players: int, num_envs: int, steps: int, seed: int, *, loaded: int = 0, look_every: int = 97,
             rows_every: int = 0, **options) -> Counter:
    """Step both backends ``steps`` times; returns how the hands (matches) ended, by outcome, and
    ``"rebuilt"`` for the steps after which some stock had been rebuilt (G8)."""
    python = VectorGame("indian", num_envs, players, seed=seed, **options)
    numba = VectorGame("indian", num_envs, players, seed=seed, backend="numba", **options)
    python.reset(seed)
    numba.reset(seed)
    rng = np.random.default_rng(seed)
    for i in range(loaded):
        state, match = declarable_state(python.rules, rng, f"{seed}:{i}", python.match_mode)
        python.load(i, state.clone(), match)
        numba.load(i, state.clone(), None if match is None else _copy_match(match))
    ended: Counter = Counter()
    assert_same(python, numba, "after reset")
    rebuilt_at = layout_for(python.rules).slices["stock_rebuilt"].start
    for step in range(steps):
        actions = _actions(python.action_masks, rng)
        if rows_every and step % rows_every == 0:
            rows = rng.permutation(num_envs)[:max(1, num_envs // 2)]
            python.step_rows(rows, actions[rows])
            numba.step_rows(rows, actions[rows])
        else:
            python.step(actions)
            numba.step(actions)
        assert_same(python, numba, f"step {step}")
        ended.update(r.outcome for r in python.results if r is not None)
        ended["rebuilt"] += bool(python.observations[:, rebuilt_at].any())
        if step % look_every == 0:
            i = step % num_envs
            for seat in range(players):
                np.testing.assert_array_equal(python.observe(i, seat), numba.observe(i, seat))
            assert numba.state(i).to_dict() == python.state(i).to_dict()
    return ended


def _copy_match(match: Match) -> Match:
    copy = Match(match.rules, match.seed)
    copy.totals = match.totals[:]
    copy.hands_played = match.hands_played
    return copy


def declarable_state(rules, rng: np.random.Generator, seed: str, match_mode: bool) -> tuple[GameState, Match | None]:
    """A fresh deal in which the first player holds 13 cards that declare (I5): a pure run, a
    second run (with a joker now and then) and sets, the cards swapped in from the stock or the
    other hands. After a draw from the stock, discarding the card drawn declares (a card taken from
    the discard pile may not be the discard, G7)."""
    match = None
    if match_mode:
        match = Match(rules, seed)
        state = match.deal()
    else:
        state = GameState(rules, seed)
    while True:
        target = _declaration(rules, rng)
        if sum(min(target[c], n) for c, n in enumerate(_outside_wild(state))) == 13:
            break  # every card of it is somewhere but the wild card (I2)
    hand = state.hands[state.current]
    give = [c for c in range(NUM_TYPES) for _ in range(max(0, hand[c] - target[c]))]
    need = [c for c in range(NUM_TYPES) for _ in range(max(0, target[c] - hand[c]))]
    for card, back in zip(need, give):
        others = [p for p in range(rules.num_players) if p != state.current and state.hands[p][card]]
        if card in state.stock:
            state.stock[state.stock.index(card)] = back
        elif others:
            state.hands[others[0]][card] -= 1
            state.hands[others[0]][back] += 1
        else:
            state.discard[state.discard.index(card)] = back
        hand[card] += 1
        hand[back] -= 1
    assert hand == target
    state._legal = None
    return state, match


def _declaration(rules, rng: np.random.Generator) -> list[int]:
    """13 cards (counts) that declare (I5): a pure run of four, a run of three, two sets of three."""
    target = [0] * NUM_TYPES
    suits = rng.permutation(4)
    low = int(rng.integers(0, 9))
    for r in range(low, low + 4):  # the pure run (first life)
        target[suits[0] * NUM_RANKS + r] += 1
    low = int(rng.integers(0, 10))
    run = [suits[1] * NUM_RANKS + r for r in range(low, low + 3)]
    if rules.printed_jokers and rng.random() < 0.5:
        run[1] = JOKER  # the second life may hold a joker
    for card in run:
        target[card] += 1
    for rank in rng.permutation(NUM_RANKS)[:2]:  # two sets of three
        for suit in rng.permutation(4)[:3]:
            target[suit * NUM_RANKS + rank] += 1
    return target


def _outside_wild(state: GameState) -> list[int]:
    """How many of each card type the deck has, but for the wild card turned up."""
    counts = [state.rules.decks] * NUM_TYPES
    counts[JOKER] = state.rules.printed_jokers
    if state.wild_card != -1:
        counts[state.wild_card] -= 1
    return counts


# ------------------------------------------------------------------------------ the shuffles


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=30), st.integers(2, 120))
def test_shuffle_is_cpythons(text, length):
    """The compiled generator seeded from text shuffles as ``random.Random(text).shuffle`` (G10)."""
    cards = list(range(length))
    random.Random(text).shuffle(cards)
    state = np.zeros(mt19937.STATE_WORDS + 1, np.int64)
    key = mt19937.seed_key(text)
    mt19937.seed_state(state, key, len(key))
    compiled = np.arange(length, dtype=np.int8 if length < 128 else np.int16)
    mt19937.shuffle(state, compiled, length)
    assert compiled.tolist() == cards


def test_generator_words_are_cpythons():
    state = np.zeros(mt19937.STATE_WORDS + 1, np.int64)
    key = mt19937.seed_key("12345678901234567890:1")
    mt19937.seed_state(state, key, len(key))
    reference = random.Random("12345678901234567890:1")
    assert [mt19937.next_word(state) for _ in range(1500)] == [reference.getrandbits(32) for _ in range(1500)]


# ------------------------------------------------------------------------------ lockstep


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_lockstep_short_hands(players):
    """Many hands, cut off by the turn cap (G9), some loaded one draw from declaring (I5)."""
    ended = lockstep(players, num_envs=16, steps=2400, seed=players, loaded=12, max_turns=24)
    assert ended["cut_off"] >= 600
    assert ended["declare"] >= 4


@pytest.mark.parametrize(("players", "options"), [
    (2, {}),
    (5, {"wild_joker": True}),
    (3, {"printed_jokers": 0, "penalty_cap": 40}),
])
def test_lockstep_whole_hands(players, options):
    """Hands played to a stalemate after the stock's rebuild (G8) or a declaration (I5)."""
    ended = lockstep(players, num_envs=8, steps=2000, seed=20 + players, loaded=8, **options)
    assert ended["rebuilt"] and ended["stalemate"] >= 4 and ended["declare"] >= 2


def test_lockstep_wild_joker_declarations():
    """The wild rank (I2) in the declaration tests and the penalties."""
    ended = lockstep(2, num_envs=12, steps=400, seed=7, loaded=12, wild_joker=True, max_turns=60)
    assert ended["declare"] >= 12


@pytest.mark.parametrize("match_reward", ["points", "win"])
def test_lockstep_match_mode(match_reward):
    """Matches (I8): totals in the observation, the reward at the match's end, max_hands cut-offs."""
    ended = lockstep(3, num_envs=8, steps=700, seed=4, loaded=4, match=True, match_reward=match_reward,
                     match_target=60, max_hands=3, max_turns=30)
    assert ended["match"] + ended["cut_off"] >= 8


def test_lockstep_step_rows():
    """``step_rows`` steps only the rows given, in both."""
    ended = lockstep(2, num_envs=10, steps=400, seed=9, loaded=3, rows_every=3, max_turns=30)
    assert ended["cut_off"] >= 10


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**40), st.integers(1, 40), st.booleans())
def test_lockstep_any_seed(players, seed, max_turns, wild_joker):
    lockstep(players, num_envs=3, steps=90, seed=seed, loaded=1, max_turns=max_turns, wild_joker=wild_joker)


# ------------------------------------------------------------------------------ bad input


def _pair(**options) -> tuple[VectorGame, VectorGame]:
    python = VectorGame("indian", 3, 2, seed=1, **options)
    numba = VectorGame("indian", 3, 2, seed=1, backend="numba", **options)
    python.reset(1)
    numba.reset(1)
    return python, numba


def _refusal(vector: VectorGame, method: str, *args) -> str:
    observations, masks = vector.observations.copy(), vector.action_masks.copy()
    states = [vector.state(i).to_dict() for i in range(vector.num_envs)]
    with pytest.raises(IllegalActionError) as err:
        getattr(vector, method)(*args)
    np.testing.assert_array_equal(vector.observations, observations)
    np.testing.assert_array_equal(vector.action_masks, masks)
    assert [vector.state(i).to_dict() for i in range(vector.num_envs)] == states
    return str(err.value)


@pytest.mark.parametrize("actions", [
    np.zeros(2, np.int64),
    np.zeros((3, 1), np.int64),
    np.zeros(3, np.float32),
    np.zeros(3, bool),
    np.array([0, 0, 999]),
    np.array([0, 0, -1]),
    np.array([0, 0, 2**64 - 1], np.uint64),
    np.array([0, 0, 5], np.int8),  # a discard in the draw phase (I4)
    np.array([0, 1, 60]),  # a declaration in the draw phase
])
def test_bad_actions_same_message_nothing_changes(actions):
    python, numba = _pair()
    assert _refusal(numba, "step", actions) == _refusal(python, "step", actions)


def test_illegal_play_phase_actions_same_message():
    """After a draw: a card not held, the card just taken (G7), a declaration that is not one (I5)."""
    python, numba = _pair()
    python.step(np.array([1, 1, 0]))
    numba.step(np.array([1, 1, 0]))
    taken = int(python.state(0).taken_card)
    missing = next(c for c in range(NUM_TYPES) if not python.state(1).hands[python.state(1).current][c])
    held = next(c for c in range(NUM_TYPES) if python.state(2).hands[python.state(2).current][c])
    actions = [2 + held, 2 + held, 2 + held]
    for row, action in ((0, 2 + taken), (1, 2 + missing), (2, INDIAN_DECLARE_BASE + held)):
        bad = np.array(actions)
        bad[row] = action
        assert _refusal(numba, "step", bad) == _refusal(python, "step", bad)


@pytest.mark.parametrize(("rows", "actions"), [
    (np.array([0, 0]), np.array([0, 0])),
    (np.array([3]), np.array([0])),
    (np.array([[0]]), np.array([0])),
    (np.array([1, 2]), np.array([0])),
    (np.array([1, 2]), np.array([0.0, 0.0])),
    (np.array([1, 2]), np.array([0, 7])),
])
def test_bad_step_rows_same_message(rows, actions):
    python, numba = _pair()
    assert (_refusal(numba, "step_rows", rows, actions)
            == _refusal(python, "step_rows", rows, actions))


def test_numba_backend_plays_every_game():
    assert "numba" in BACKENDS
    for game in ("indian", "basic", "romi"):
        assert type(VectorGame(game, 2, 2, backend="numba")).__name__ == "CompiledVectorGame"


def test_numba_backend_refuses_what_python_refuses():
    for options in ({"num_players": 7}, {"num_envs": 0}, {"wild_joker": 1}, {"match_reward": "most"}):
        with pytest.raises(ValueError) as python:
            VectorGame(**({"game": "indian"} | options))
        with pytest.raises(ValueError) as numba:
            VectorGame(**({"game": "indian", "backend": "numba"} | options))
        assert str(numba.value) == str(python.value)


def test_observe_before_reset_and_bad_slots():
    vector = VectorGame("indian", 2, 2, backend="numba")
    with pytest.raises(RuntimeError, match="call reset"):
        vector.observe(0, 0)
    vector.reset(3)
    with pytest.raises(IndexError, match="slot 2"):
        vector.observe(2, 0)
    with pytest.raises(IndexError, match="seat 2"):
        vector.observe(0, 2)


def test_state_is_a_copy():
    """``state(i)`` is rebuilt each call: changing it leaves the slot as it was."""
    vector = VectorGame("indian", 1, 2, backend="numba")
    vector.reset(5)
    state = vector.state(0)
    state.apply(state.legal_moves()[0])
    assert vector.state(0).to_dict() != state.to_dict()
    assert vector.state(0).history == []


def test_load_checks_as_python_does():
    numba = VectorGame("indian", 2, 2, backend="numba")
    numba.reset(0)
    with pytest.raises(ValueError, match="state of basic"):
        numba.load(0, GameState(make_ruleset("basic", 2), 1))
    with pytest.raises(TypeError, match="GameState"):
        numba.load(0, "hand")
