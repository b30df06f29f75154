"""The compiled römi core's deepest look-ahead: may the player take the cut card to go out (R4)?

The positions (``tests/data/going_out_positions.json.gz``, from
``tests/data/record_going_out_positions.py``) come from rule-agent hands at 3 and 4 players
where that search ran out of a small budget: crowded tables, unopened hands, many plays that
commute. The core must decide each one itself, at its own budget, exactly as the Python engine
(``GameState.legal_moves``, the reference) does.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest

from rummy_env import game
from rummy_env.encoding import ROMI_TAKE_CUT_ACTION, action_mask, move_ids
from rummy_env.game import PHASE_DRAW, PHASE_PLAY, GameState
from rummy_env.vector import VectorGame

pytest.importorskip("numba")
from rummy_env.compiled import romi  # noqa: E402

POSITIONS = [GameState.from_dict(d) for d in json.loads(
    gzip.open(Path(__file__).parent / "data" / "going_out_positions.json.gz", "rt").read())]


def test_the_recorded_positions_ask_the_cut_card_question_both_ways():
    assert len(POSITIONS) >= 50
    assert {state.rules.num_players for state in POSITIONS} == {3, 4}
    assert all(state.phase == PHASE_DRAW and state.cut_card != -1 for state in POSITIONS)
    going_out = sum(bool(action_mask(state)[ROMI_TAKE_CUT_ACTION]) for state in POSITIONS)
    assert 0 < going_out < len(POSITIONS)


@pytest.mark.parametrize("players", [3, 4])
def test_R4_the_core_decides_deep_going_out_searches_as_the_engine_does(players):
    venv = VectorGame("romi", 1, players, seed=0, backend="numba")
    core = venv.core
    core.engine_masks = 0
    ids = move_ids("romi")
    states = [state for state in POSITIONS if state.rules.num_players == players]
    assert states
    for state in states:
        core.load(0, state, ids)
        np.testing.assert_array_equal(core.action_masks[0], action_mask(state),
                                      err_msg=f"cut card {state.cut_card}, table {state.table}")
    assert core.engine_masks == 0, "a look-ahead ran out of the core's budget: the engine wrote its mask"


def search_roots():
    """Each recorded position as its going-out search starts: the cut card taken (R4), the play
    phase begun; then up to three plays deeper, by a seeded random choice."""
    rng = random.Random(7)
    for state in POSITIONS:
        data = state.to_dict()
        player, cut = data["current"], data["cut_card"]
        data["hands"][player][cut] += 1
        data.update(cut_card=-1, phase=PHASE_PLAY, taken_card=cut)
        position = GameState.from_dict(data)
        for _ in range(4):
            yield position
            plays = [play for play in position._table_plays()[0] if game._cards_used(position, play) is not None]
            if not plays:
                break
            position = position._trial()
            position._apply_play(rng.choice(plays))


def test_R4_sleep_sets_commute_the_plays_the_engine_commutes():
    """The compiled search's sleep sets (``romi._independent``) against the engine's
    (``game._independent``), for every pair of plays that are not swaps, in every search root."""
    ids = move_ids("romi")
    pairs = commuting = 0
    for position in search_roots():
        plays = [play for play in position._table_plays()[0] if game._cards_used(position, play) is not None]
        uses = {play: game._cards_used(position, play) for play in plays}
        hand = position.hands[position.current]
        size, taken = sum(hand), position.taken_card
        counts = np.asarray(hand, np.int8)
        for p in plays:
            for q in plays:
                expected = game._independent(hand, size, taken, uses, p, q)
                got = romi._independent(ids[p], ids[q], counts, size, taken, romi.TEMPLATES, romi.TEMPLATE_MASKS)
                assert got == expected, (p, q, position.to_dict())
                pairs += 1
                commuting += expected
    assert pairs > 10_000 and 0.05 < commuting / pairs < 0.5


def test_R4_sleep_sets_follow_the_engines():
    """``romi._put_to_sleep`` against the engine's ``game._asleep_after``: at each search root, a
    seeded random set of plays asleep, then every play in the listed order as the search tries
    them; the plays asleep after each, and the plays counted as tried."""
    ids = move_ids("romi")
    w, g = VectorGame("romi", 1, 4, seed=0, backend="numba").core.tables
    rng = random.Random(11)
    checked = sleeping = 0
    for position in search_roots():
        plays, swap_plays = position._table_plays()
        uses = {play: game._cards_used(position, play) for play in plays}
        hand = position.hands[position.current]
        size, taken = sum(hand), position.taken_card
        asleep = [play for play in plays if play not in swap_plays and rng.random() < 0.3]
        w[0][0] = hand
        w[2][0, romi.SIZE] = size
        w[8][0, :len(plays)] = [ids[play] for play in plays]
        w[9][0, :len(plays)] = [play in swap_plays for play in plays]
        w[15][0, :len(asleep)] = [ids[play] for play in asleep]
        w[11][0, romi.ASLEEP], w[11][0, romi.TRIED] = len(asleep), 0
        tried = []
        for k, play in enumerate(plays):
            if play in asleep:
                continue
            expected = game._asleep_after(play, (*asleep, *tried), hand, size, taken, uses)
            romi._put_to_sleep(0, k, taken, w, g)
            got = w[15][1, :w[11][1, romi.ASLEEP]].tolist()
            assert sorted(got) == sorted(ids[q] for q in expected), (play, position.to_dict())
            tried.append(play)
            kept = [ids[q] for q in tried if q not in swap_plays]
            assert w[16][0, :w[11][0, romi.TRIED]].tolist() == kept
            checked += 1
            sleeping += len(expected)
    assert checked > 1_000 and sleeping > 500
