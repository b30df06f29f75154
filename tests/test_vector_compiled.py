"""``VectorGame(backend="numba")`` against the Python engine in every game: lockstep, bad input,
and the scenarios random play seldom reaches.

The lockstep cases (``vector_lockstep.lockstep``) step both backends with the same seeds and
actions and compare every buffer and result each step; each case states what it must have
exercised (outcomes, lay-offs, owed cards, refusals, loads), so a case that stopped reaching its
rule fails. Cases marked ``slow`` play many more hands (``pytest -m slow``);
``benchmarks/lockstep_vector.py`` plays more still.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env.compiled import drop_stale_kernels, mt19937
from rummy_env.compiled.skeleton import bit_count, bit_length
from rummy_env.encoding import BASIC_MELD_BASE, INDIAN_DECLARE_BASE
from rummy_env.game import GameState
from rummy_env.ruleset import game_spec, make_ruleset
from rummy_env.vector import BACKENDS, IllegalActionError, VectorGame
from vector_lockstep import assert_same, choose, lockstep, same_refusal

GAMES = ("indian", "basic", "romi")


# ------------------------------------------------------------------------------ the shuffles, the bits


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


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**62 - 1))
def test_bit_helpers_are_pythons(x):
    assert bit_count(x) == x.bit_count()
    assert bit_length(x) == x.bit_length()


def test_kernels_cached_from_other_sources_are_dropped(tmp_path):
    """numba's cache would keep a kernel whose called modules changed: the package drops its cache
    whenever any of its sources changes, and keeps it otherwise."""
    source = tmp_path / "core.py"
    source.write_text("x = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    kernel = cache / "core.step-1.py311.nbi"
    kernel.write_text("stale")
    drop_stale_kernels(tmp_path)
    assert not kernel.exists()
    kernel.write_text("fresh")
    drop_stale_kernels(tmp_path)
    assert kernel.exists()
    source.write_text("x = 22\n")
    drop_stale_kernels(tmp_path)
    assert not kernel.exists() and (cache / "numba-sources.stamp").exists()


# ------------------------------------------------------------------------------ lockstep


def case(game: str, players: int, expect: dict, *, slow: bool = False, **arguments):
    """One lockstep case: ``lockstep(game, players, **arguments)`` must count at least ``expect``."""
    name = "-".join([game, f"{players}p", *(f"{k}={v}" for k, v in arguments.items() if k != "num_envs")])
    return pytest.param(game, players, arguments, expect, id=name, marks=[pytest.mark.slow] if slow else [])


WHOLE_HANDS = {"illegal_every": 37, "load_every": 29}
"""Whole hands with refusals and mid-turn loads."""

LOCKSTEP_CASES = [
    # Indian: short hands cut off by the turn cap (G9), some loaded one draw from declaring (I5)
    case("indian", 2, {"cut_off": 100, "declare": 2}, num_envs=16, steps=400, seed=2, loaded=12, max_turns=24),
    *(case("indian", p, {"cut_off": 600, "declare": 4}, slow=True, num_envs=16, steps=2400, seed=p, loaded=12,
           max_turns=24) for p in (2, 3, 4, 6)),
    # Indian: hands played to a stalemate after the stock's rebuild (G8) or a declaration (I5)
    case("indian", 2, {"rebuilt": 1, "stalemate": 4, "declare": 2}, slow=True, num_envs=8, steps=2000, seed=22,
         loaded=8),
    case("indian", 5, {"rebuilt": 1, "stalemate": 4, "declare": 2}, slow=True, num_envs=8, steps=2000, seed=25,
         loaded=8, wild_joker=True),
    case("indian", 3, {"rebuilt": 1, "stalemate": 4, "declare": 2}, slow=True, num_envs=8, steps=2000, seed=23,
         loaded=8, printed_jokers=0, penalty_cap=40),
    # Indian: the wild rank (I2) in the declaration tests and the penalties
    case("indian", 2, {"declare": 12}, num_envs=12, steps=400, seed=7, loaded=12, wild_joker=True, max_turns=60),
    # Indian: refusals and mid-turn loads (G7), and step_rows
    case("indian", 3, {"refused": 10, "loaded": 5, "cut_off": 10}, num_envs=8, steps=400, seed=31, loaded=4,
         max_turns=30, rows_every=3, **WHOLE_HANDS),
    # Basic: going out by a play or a last discard (B4), lay-offs (B3), refusals, loads
    case("basic", 2, {"out": 100, "by_play": 5, "layoff": 100, "refused": 30, "loaded": 10}, slow=True,
         num_envs=16, steps=1500, seed=11, out_of_range=0.1, **WHOLE_HANDS),
    case("basic", 2, {"out": 8, "layoff": 40, "refused": 8, "loaded": 3}, num_envs=8, steps=400, seed=11,
         out_of_range=0.1, **WHOLE_HANDS),
    *(case("basic", p, {"out": 15}, slow=True, num_envs=8, steps=800, seed=p, illegal_every=41, load_every=31,
           out_of_range=0.1) for p in (3, 4)),
    # Basic: timid play runs the stock out: rebuilt once, then a stalemate (G8)
    case("basic", 2, {"stalemate": 3}, slow=True, num_envs=8, steps=800, seed=4, prefer=-0.9),
    # Basic: the turn cap (G9), step_rows
    case("basic", 2, {"cut_off": 20}, num_envs=10, steps=500, seed=5, rows_every=3, max_turns=12, prefer=-0.5),
    # römi: going out (R6, with the cut card R4), owed cards (R4, R5), refusals, loads
    case("romi", 2, {"out": 150, "cut": 5, "owed": 300, "refused": 30, "loaded": 10}, slow=True, num_envs=16,
         steps=1500, seed=11, **WHOLE_HANDS),
    case("romi", 2, {"out": 12, "cut": 1, "owed": 60, "refused": 8, "loaded": 3}, num_envs=8, steps=400, seed=11,
         **WHOLE_HANDS),
    *(case("romi", p, {"out": 30}, slow=True, num_envs=8, steps=800, seed=p, illegal_every=41, load_every=31)
      for p in (3, 4)),
    # römi: the turn cap (G9), step_rows
    case("romi", 2, {"cut_off": 20}, num_envs=10, steps=500, seed=5, rows_every=3, max_turns=12),
    # römi: a look-ahead budget of one position: the engine writes many masks, still identical
    case("romi", 2, {"engine": 50}, slow=True, num_envs=8, steps=600, seed=13, search_budget=1, load_every=23),
    case("romi", 2, {"engine": 30}, num_envs=8, steps=300, seed=13, search_budget=1, load_every=23),
    # matches (I8, B6, R8): totals in the observation, the reward at the match's end, max_hands cut-offs
    *(case("indian", 3, {"match": 1, "cut_off": 8}, slow=reward == "win", num_envs=8, steps=700, seed=4, loaded=4,
           match=True, match_reward=reward, match_target=60, max_hands=3, max_turns=30)
      for reward in ("points", "win")),
    case("basic", 2, {"match": 2}, num_envs=8, steps=1200, seed=8, match=True, match_target=30, max_hands=4,
         match_reward="points", rummy_bonus=True, prefer=3.0),
    case("basic", 3, {"match": 2}, slow=True, num_envs=8, steps=1200, seed=8, match=True, match_target=30,
         max_hands=4, match_reward="win", rummy_bonus=True, prefer=3.0),
    *(case("romi", p, {"match": 2, "cut_off": 5}, slow=reward == "win", num_envs=8, steps=1200, seed=8, match=True,
           match_target=100, max_hands=3, match_reward=reward) for p, reward in ((2, "points"), (3, "win"))),
]


@pytest.mark.parametrize(("game", "players", "arguments", "expect"), LOCKSTEP_CASES)
def test_lockstep(game, players, arguments, expect):
    counts = lockstep(game, players, **arguments)
    short = {key: counts[key] for key, least in expect.items() if counts[key] < least}
    assert not short, f"expected at least {expect}, counted {dict(counts)}"


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=6, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**40), max_turns=st.integers(1, 60))
def test_lockstep_any_seed(game, data, seed, max_turns):
    players = data.draw(st.integers(*game_spec(game).players), label="players")
    options = {"loaded": 1, "wild_joker": data.draw(st.booleans(), label="wild_joker")} if game == "indian" else {}
    lockstep(game, players, num_envs=3, steps=120, seed=seed, look_every=7, illegal_every=11, load_every=13,
             max_turns=max_turns, **options)


# ------------------------------------------------------------------------------ bad input


def _pair(game: str, **options) -> tuple[VectorGame, VectorGame]:
    python = VectorGame(game, 3, 2, seed=1, **options)
    numba = VectorGame(game, 3, 2, seed=1, backend="numba", **options)
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


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("actions", [
    np.zeros(2, np.int64),
    np.zeros((3, 1), np.int64),
    np.zeros(3, np.float32),
    np.zeros(3, bool),
    np.array([0, 0, 999]),  # out of range in Indian, forbidden by the mask in Basic and römi
    np.array([0, 0, 9999]),
    np.array([0, 0, -1]),
    np.array([0, 0, 2**64 - 1], np.uint64),
    np.array([0, 0, 5], np.int8),  # a discard in the draw phase (I4, B3, R4)
    np.array([0, 1, 60]),  # a declaration (I5) or a meld in the draw phase
])
def test_bad_actions_same_message_nothing_changes(game, actions):
    python, numba = _pair(game)
    assert _refusal(numba, "step", actions) == _refusal(python, "step", actions)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("rows", "actions"), [
    (np.array([0, 0]), np.array([0, 0])),
    (np.array([3]), np.array([0])),
    (np.array([[0]]), np.array([0])),
    (np.array([1, 2]), np.array([0])),
    (np.array([1, 2]), np.array([0.0, 0.0])),
    (np.array([1, 2]), np.array([0, 7])),
])
def test_bad_step_rows_same_message(game, rows, actions):
    python, numba = _pair(game)
    assert _refusal(numba, "step_rows", rows, actions) == _refusal(python, "step_rows", rows, actions)


def test_indian_illegal_play_phase_actions_same_message():
    """After a draw: a card not held, the card just taken (G7), a declaration that is not one (I5)."""
    python, numba = _pair("indian")
    python.step(np.array([1, 1, 0]))
    numba.step(np.array([1, 1, 0]))
    taken = int(python.state(0).taken_card)
    missing = next(c for c in range(53) if not python.state(1).hands[python.state(1).current][c])
    held = next(c for c in range(53) if python.state(2).hands[python.state(2).current][c])
    actions = [2 + held, 2 + held, 2 + held]
    for row, action in ((0, 2 + taken), (1, 2 + missing), (2, INDIAN_DECLARE_BASE + held)):
        bad = np.array(actions)
        bad[row] = action
        assert _refusal(numba, "step", bad) == _refusal(python, "step", bad)


def test_numba_backend_plays_every_game():
    assert "numba" in BACKENDS
    for game in GAMES:
        assert type(VectorGame(game, 2, 2, backend="numba")).__name__ == "CompiledVectorGame"


@pytest.mark.parametrize("game", GAMES)
def test_numba_backend_refuses_what_python_refuses(game):
    for options in ({"num_players": 7}, {"num_envs": 0}, {"wild_joker": 1}, {"match_reward": "most"}):
        with pytest.raises(ValueError) as python:
            VectorGame(**({"game": game} | options))
        with pytest.raises(ValueError) as numba:
            VectorGame(**({"game": game, "backend": "numba"} | options))
        assert str(numba.value) == str(python.value)


@pytest.mark.parametrize("game", GAMES)
def test_observe_before_reset_and_bad_slots(game):
    vector = VectorGame(game, 2, 2, backend="numba")
    with pytest.raises(RuntimeError, match="call reset"):
        vector.observe(0, 0)
    vector.reset(3)
    with pytest.raises(IndexError, match="slot 2"):
        vector.observe(2, 0)
    with pytest.raises(IndexError, match="seat 2"):
        vector.observe(0, 2)


@pytest.mark.parametrize("game", GAMES)
def test_state_is_a_copy(game):
    """``state(i)`` is rebuilt each call: changing it leaves the slot as it was."""
    vector = VectorGame(game, 1, 2, backend="numba")
    vector.reset(5)
    state = vector.state(0)
    state.apply(state.legal_moves()[0])
    assert vector.state(0).to_dict() != state.to_dict()
    assert vector.state(0).history == []


@pytest.mark.parametrize("game", GAMES)
def test_load_checks_as_python_does(game):
    other = GAMES[(GAMES.index(game) + 1) % len(GAMES)]
    numba = VectorGame(game, 2, 2, backend="numba")
    numba.reset(0)
    with pytest.raises(ValueError, match=f"state of {other}"):
        numba.load(0, GameState(make_ruleset(other, 2), 1))
    with pytest.raises(TypeError, match="GameState"):
        numba.load(0, "hand")


# ------------------------------------------------------------------------------ scenarios


def _rummy_hand(seed: int) -> GameState:
    """A fresh 2-player Basic hand with B6 on whose first player holds A-4 of spades, three fives
    and 9-J of clubs: melds all ten cards in one turn."""
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
def test_B6_rummy_bonus_doubles_the_payments(seed):
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


def test_G7_the_card_just_taken_is_refused_alike():
    """Basic: the card just taken may not be discarded at once (G7): both backends say so alike."""
    python, numba = _pair("basic")
    actions = np.ones(3, np.int64)  # every row takes the discard top
    python.step(actions)
    numba.step(actions)
    actions = choose("basic", python.action_masks, np.random.default_rng(2))
    actions[0] = 2 + python.state(0).taken_card
    assert "(G7)" in same_refusal(python, numba, actions)


def test_R4_the_discard_top_that_cannot_be_placed_is_refused_alike():
    """römi: after the first turn the discard top is refused unless this turn can place it (R4)."""
    python = VectorGame("romi", 4, 2, seed=2)
    numba = VectorGame("romi", 4, 2, seed=2, backend="numba")
    python.reset(2)
    numba.reset(2)
    rng = np.random.default_rng(2)
    for _ in range(200):
        refused = np.flatnonzero((python.action_masks[:, 1] == 0) & (python.action_masks[:, 0] == 1))
        if refused.size:
            break
        actions = choose("romi", python.action_masks, rng)
        python.step(actions)
        numba.step(actions)
    actions = choose("romi", python.action_masks, rng)
    actions[int(refused[0])] = 1
    assert "(R4)" in same_refusal(python, numba, actions)
