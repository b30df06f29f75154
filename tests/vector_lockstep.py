"""The numba backend against the Python engine in lockstep (``from vector_lockstep import …``): one
driver for every game, the buffers it compares, and the refusals both backends must give alike.

``lockstep(game, players, …)`` steps a Python and a numba ``VectorGame`` with the same seeds and
the same random legal actions; after every step every buffer and result must be equal, and now
and then every seat's ``observe`` and each slot's ``state``. Random play rarely reaches a game's
ending, so each game prefers the actions that lead there (``PREFERRED``: Indian's declarations
I5, Basic's melds and lay-offs B3, römi's cut card R4). Along the way it can send a row an
illegal action (both must refuse it with the same message and change nothing), load a slot with
another slot's hand in the middle of a turn (the card just taken G7, owed cards R4, R5), load
Indian slots with hands one draw from declaring, and step only some rows (``step_rows``).
``tests/test_vector_compiled.py`` runs it in every game; ``benchmarks/lockstep_vector.py`` runs it
over many more hands.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rummy_env.cards import JOKER, NUM_RANKS, NUM_TYPES
from rummy_env.encoding import BASIC_MELD_BASE, INDIAN_DECLARE_BASE, ROMI_TAKE_CUT_ACTION, action_layout, layout_for
from rummy_env.game import MELD, PHASE_PLAY, PLACE, TAKE_CUT, GameState
from rummy_env.match import Match
from rummy_env.vector import IllegalActionError, VectorGame

BUFFERS = ("observations", "action_masks", "to_act", "rewards", "terminated", "truncated")

PREFERRED = {
    "indian": (slice(INDIAN_DECLARE_BASE, None), 1.0),  # declarations (I5)
    "basic": (slice(BASIC_MELD_BASE, None), 1.0),  # melds and lay-offs (B3): going out by a play (B4)
    "romi": (slice(ROMI_TAKE_CUT_ACTION, ROMI_TAKE_CUT_ACTION + 1), 2.0),  # the cut card (R4)
}
"""Per game, the actions random play weights up (``prefer`` times their weight; ``prefer`` < 0
plays them less) and their default weight."""


def choose(game: str, masks: np.ndarray, rng: np.random.Generator, prefer: float | None = None) -> np.ndarray:
    """A random legal action per row, the game's ``PREFERRED`` actions weighted up."""
    preferred, weight = PREFERRED[game]
    weights = rng.random(masks.shape) + masks
    weights[:, preferred] += (weight if prefer is None else prefer) * masks[:, preferred]
    return np.argmax(weights * (masks > 0), axis=1).astype(np.int64)


def assert_same(python: VectorGame, numba: VectorGame, where: str) -> None:
    """Every buffer and result of the two backends equal; else the differing rows, named."""
    for name in BUFFERS:
        a, b = getattr(python, name), getattr(numba, name)
        if not np.array_equal(a, b):
            rows = np.flatnonzero((a != b).reshape(len(a), -1).any(axis=1))
            raise AssertionError(f"{where}: {name} differ in rows {rows.tolist()}")
    assert python.results == numba.results, where


def refuse_both(python: VectorGame, numba: VectorGame, actions: np.ndarray, rng: np.random.Generator,
                out_of_range: float = 0.0) -> bool:
    """Send one row an action its mask forbids (with probability ``out_of_range`` one past the
    last action id instead): both backends refuse it with the same message and change no buffer."""
    row = int(rng.integers(len(actions)))
    forbidden = np.flatnonzero(python.action_masks[row] == 0)
    bad = actions.copy()
    bad[row] = int(forbidden[rng.integers(forbidden.size)])
    if out_of_range and rng.random() >= 1.0 - out_of_range:
        bad[row] = python.num_actions
    before = {name: getattr(numba, name).copy() for name in BUFFERS}
    same_refusal(python, numba, bad)
    for name in BUFFERS:
        np.testing.assert_array_equal(getattr(numba, name), before[name])
    return True


def same_refusal(python: VectorGame, numba: VectorGame, actions: np.ndarray) -> str:
    """Both backends refuse ``step(actions)`` with the same message; that message."""
    messages = []
    for vector in (python, numba):
        with pytest.raises(IllegalActionError) as err:
            vector.step(actions)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    return messages[0]


def lockstep(game: str, players: int, num_envs: int, steps: int, seed: int, *, loaded: int = 0, look_every: int = 53,
             illegal_every: int = 0, out_of_range: float = 0.0, load_every: int = 0, rows_every: int = 0,
             prefer: float | None = None, search_budget: int | None = None, **options) -> Counter:
    """Step both backends ``steps`` times; how the hands (matches) ended, by outcome, and counts of
    what was exercised: ``"rebuilt"`` (steps after which some stock had been rebuilt, G8),
    ``"owed"`` (steps with a card owed to the table in some row, R4), ``"cut"`` (cut cards taken,
    R4), ``"layoff"`` (lay-offs and swaps played), ``"by_play"`` (out by a meld or lay-off, B4),
    ``"rummy"`` (out having laid nothing before, B6), ``"refused"``, ``"loaded"``, ``"engine"``
    (römi masks the engine wrote after a look-ahead ran out of ``search_budget``).

    ``loaded``: Indian slots loaded at the start with a hand one draw from declaring (I5);
    ``load_every``: every so many steps a slot gets another slot's hand mid-turn (not in match
    mode); ``illegal_every``: every so many steps a refused action (``refuse_both``);
    ``rows_every``: every so many steps only half the rows are stepped."""
    python = VectorGame(game, num_envs, players, seed=seed, **options)
    numba = VectorGame(game, num_envs, players, seed=seed, backend="numba", **options)
    if loaded and not python.rules.declares:
        raise ValueError(f"loaded={loaded}: only a game with declarations (I5) has hands one draw from declaring")
    if search_budget is not None:
        numba.core.search_budget = search_budget
    python.reset(seed)
    numba.reset(seed)
    rng = np.random.default_rng(seed)
    for i in range(loaded):
        state, match = declarable_state(python.rules, rng, f"{seed}:{i}", python.match_mode)
        python.load(i, state.clone(), match)
        numba.load(i, state.clone(), None if match is None else _copy_match(match))
    counts: Counter = Counter()
    assert_same(python, numba, "after reset")
    slices = layout_for(python.rules).slices
    must = slices.get("must_place")
    kinds = np.array([move[0] for move in action_layout(game).moves])
    for step in range(steps):
        actions = choose(game, python.action_masks, rng, prefer)
        if illegal_every and step % illegal_every == 0:
            counts["refused"] += refuse_both(python, numba, actions, rng, out_of_range)
        if load_every and step % load_every == 0 and not python.match_mode:
            source, target = (int(x) for x in rng.integers(num_envs, size=2))
            state = python.state(source)
            if state.phase == PHASE_PLAY:  # mid-turn: the card just taken and what is owed travel too
                python.load(target, state.clone())
                numba.load(target, state.clone())
                actions = choose(game, python.action_masks, rng, prefer)
                counts["loaded"] += 1
                assert_same(python, numba, f"load at step {step}")
        played = kinds[actions]
        counts["layoff"] += int(np.count_nonzero(played == PLACE))
        counts["cut"] += int(np.count_nonzero(played == TAKE_CUT))
        laid = numba.core.has_laid.copy()  # who had laid before this turn (B6)
        seats = python.to_act.copy()
        if rows_every and step % rows_every == 0:
            rows = rng.permutation(num_envs)[:max(1, num_envs // 2)]
            python.step_rows(rows, actions[rows])
            numba.step_rows(rows, actions[rows])
        else:
            python.step(actions)
            numba.step(actions)
        assert_same(python, numba, f"step {step}")
        for i, result in enumerate(python.results):
            if result is None:
                continue
            counts[result.outcome] += 1
            if result.outcome == "out":
                counts["by_play"] += int(played[i] in (MELD, PLACE))
                counts["rummy"] += int(not laid[i, seats[i]])
        counts["rebuilt"] += bool(python.observations[:, slices["stock_rebuilt"]].any())
        if must is not None:
            counts["owed"] += bool(python.observations[:, must].any())
        if step % look_every == 0:
            i = step % num_envs
            for seat in range(players):
                np.testing.assert_array_equal(python.observe(i, seat), numba.observe(i, seat))
            assert numba.state(i).to_dict() == python.state(i).to_dict()
    counts["engine"] = getattr(numba.core, "engine_masks", 0)
    return counts


# ----------------------------------------------------------------------------- Indian hands that declare


def _copy_match(match: Match) -> Match:
    copy = Match(match.rules, match.seed)
    copy.totals = match.totals[:]
    copy.hands_played = match.hands_played
    return copy


def declarable_state(rules, rng: np.random.Generator, seed: str, match_mode: bool) -> tuple[GameState, Match | None]:
    """A fresh Indian deal in which the first player holds 13 cards that declare (I5): a pure run,
    a second run (with a joker now and then) and sets, the cards swapped in from the stock or the
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
