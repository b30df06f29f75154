"""``RuleAgent.act_batch`` makes exactly the decisions the Python rule agent made.

``tests/data/rule_positions_<case>.npz`` hold (observation, action mask, action) of 10,000
decisions per case, recorded from rule-agent self-play (2 players) with the agent as it stood
before it was compiled (``tests/data/record_rule_positions.py``). Every recorded decision must
come back unchanged from the batched agent (the compiled kernels: Indian with and without a wild
joker, I2; Basic and römi with their table melds, B3, R4, R5) and from ``act``; live hands at
other table sizes and weights play the kernels in lockstep with ``act``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.base import AgentError
from agents.rule_agent import RuleAgent
from rummy_env.ruleset import make_ruleset
from rummy_env import solver
from rummy_env.cards import parse_card
from rummy_env.game import MELD, PLACE

DATA = Path(__file__).parent / "data"
CASES = {
    "indian": ("indian", {}),
    "indian_wild": ("indian", {"wild_joker": True}),
    "basic": ("basic", {}),
    "romi": ("romi", {}),
}


def recorded(case: str):
    data = np.load(DATA / f"rule_positions_{case}.npz")
    game, options = CASES[case]
    agent = RuleAgent(make_ruleset(game, 2, **options))
    observations = data["observations"]
    assert observations.shape[1] == agent.reader.size, (
        f"{case}: recorded observations have {observations.shape[1]} entries, the {game!r} layout now "
        f"{agent.reader.size}: re-record with tests/data/record_rule_positions.py from the agent of before "
        "act_batch (the recordings follow the observation layout)")
    return agent, observations, data["masks"], data["actions"]


def mismatches(got: np.ndarray, want: np.ndarray) -> str:
    rows = np.flatnonzero(got != want)
    return f"{rows.size} of {want.size} decisions differ, first rows {rows[:5].tolist()}: " \
           f"got {got[rows[:5]].tolist()}, recorded {want[rows[:5]].tolist()}"


@pytest.mark.parametrize("case", list(CASES))
def test_act_batch_replays_recorded_decisions(case):
    agent, observations, masks, actions = recorded(case)
    got = agent.act_batch(observations, masks)
    assert got.dtype == np.int64 and got.shape == actions.shape
    assert np.array_equal(got, actions), mismatches(got, actions)


@pytest.mark.parametrize("case", list(CASES))
def test_act_batch_in_small_batches_and_one_by_one(case):
    """Rows are independent: any split of the batch decides alike, and so does ``act``."""
    agent, observations, masks, actions = recorded(case)
    rows = slice(0, 1500)
    parts = [agent.act_batch(observations[i:min(i + 7, 1500)], masks[i:min(i + 7, 1500)]) for i in range(0, 1500, 7)]
    assert np.array_equal(np.concatenate(parts), actions[rows])
    one_by_one = np.array([agent.act(o, m) for o, m in zip(observations[rows], masks[rows])])
    assert np.array_equal(one_by_one, actions[rows]), mismatches(one_by_one, actions[rows])


def test_act_batch_with_the_python_solver():
    """With the compiled search off (``solver.use_compiled(False)``) act_batch is ``act`` row by row."""
    agent, observations, masks, actions = recorded("indian_wild")
    before = solver.use_compiled(False)
    try:
        got = agent.act_batch(observations[:800], masks[:800])
    finally:
        solver.use_compiled(before)
    assert np.array_equal(got, actions[:800]), mismatches(got, actions[:800])


def test_act_batch_refuses_bad_batches():
    agent, observations, masks, _ = recorded("indian")
    with pytest.raises(AgentError, match=r"observations of shape \(3, 5\)"):
        agent.act_batch(np.zeros((3, 5), np.float32), masks[:3])
    with pytest.raises(AgentError, match="one mask per observation"):
        agent.act_batch(observations[:3], masks[:2])
    empty = masks[:3].copy()
    empty[1] = 0
    with pytest.raises(AgentError, match="row 1 has an all-zero action mask"):
        agent.act_batch(observations[:3], empty)


@pytest.mark.parametrize("players, options", [
    (3, {}),
    (4, {"wild_joker": True}),
    (2, {"printed_jokers": 0, "wild_joker": True}),
    (6, {"printed_jokers": 4}),
])
def test_indian_act_batch_matches_act_in_live_play(players, options):
    """Player counts and options the recordings lack: the kernel against ``act`` on the Python
    solver, decision by decision, every seat played by the rule agent."""
    from rummy_env.encoding import ObservationEncoder, action_layout, action_mask
    from rummy_env.game import GameState

    agent = RuleAgent(make_ruleset("indian", players, **options))
    moves = action_layout("indian").moves
    decisions = 0
    hand = 0
    while decisions < 400:
        state = GameState.new("indian", players, seed=f"live:{players}:{hand}", **options)
        encoder = ObservationEncoder(state.rules)
        while not state.is_over and decisions < 400:
            observation = encoder.encode(state, state.current)[None]
            mask = action_mask(state)[None]
            fast = int(agent.act_batch(observation, mask)[0])
            before = solver.use_compiled(False)
            try:
                slow = agent.act(observation[0], mask[0])
            finally:
                solver.use_compiled(before)
            assert fast == slow, f"hand {hand}, decision {decisions}: act_batch {fast}, act {slow}"
            state.apply(moves[fast])
            decisions += 1
        hand += 1


@pytest.mark.parametrize("game, players, weights", [
    ("basic", 3, {}),
    ("basic", 4, {"hold_until": 3}),
    ("basic", 2, {"hold_until": 3, "hold_loose": 0, "late_weight": 1.0}),
    ("romi", 3, {}),
    ("romi", 4, {"hold_until": 3}),
    ("romi", 2, {"danger_weight": 2.0, "max_outs": 2}),
])
def test_table_act_batch_matches_act_in_live_play(game, players, weights):
    """The Basic and römi kernel against ``act``, decision by decision, at table sizes and weights
    the recordings lack (``hold_until``: play step 0). One move in five is a random legal move, so
    that the hands reach positions the rule agent would not steer into (many cards held, owed
    cards, R4, R5, and joker swaps)."""
    from rummy_env.encoding import ObservationEncoder, action_layout, action_mask
    from rummy_env.game import GameState

    agent = RuleAgent(make_ruleset(game, players), **weights)
    moves = action_layout(game).moves
    rng = np.random.default_rng(players)
    first_play = action_layout(game).kind_base[MELD]
    decisions = 0
    plays = offered = 0
    hand = 0
    while decisions < 600:
        state = GameState.new(game, players, seed=f"live:{game}:{players}:{hand}")
        encoder = ObservationEncoder(state.rules)
        while not state.is_over and decisions < 600:
            observation = encoder.encode(state, state.current)[None]
            mask = action_mask(state)[None]
            fast = int(agent.act_batch(observation, mask)[0])
            slow = agent.act(observation[0], mask[0])
            assert fast == slow, f"hand {hand}, decision {decisions}: act_batch {fast}, act {slow}"
            plays += moves[fast][0] in (MELD, PLACE)
            offered += bool(mask[0, first_play:].any())
            legal = np.flatnonzero(mask[0])
            state.apply(moves[int(rng.choice(legal)) if rng.random() < 0.2 else fast])
            decisions += 1
        hand += 1
    assert offered > 50 and plays > 0, f"{offered} positions offered a meld or lay-off, {plays} chosen: " \
        "the test misses the play steps"


def test_table_kernel_swaps_a_joker_only_for_less_deadwood():
    """R5, play step 4: a joker swap is played only when it lowers the deadwood. The hand
    5s 5h 5d is a set; swapping 5s for the joker standing for it in 4s * 6s 7s leaves
    5h 5d * (deadwood 0 = 0 now), so the agent keeps its cards and discards (no loose card: the
    melded card whose removal leaves the least deadwood, 5s). The set itself may not go down:
    it would leave no card to discard (R6)."""
    from rummy_env.encoding import ObservationEncoder, action_layout, action_mask
    from rummy_env.game import DISCARD, DRAW
    from rummy_env.scenario import make_state

    state = make_state("romi", hands=["5s 5h", "9c Qh Jd"], discard="2c", stock="Kc 5d",
                       table=["4s * 6s 7s"], opened=[True, True])
    layout = action_layout("romi")
    state.apply(layout.moves[layout.kind_base[DRAW]])  # draws 5d
    observation = ObservationEncoder(state.rules).encode(state, 0)[None]
    mask = action_mask(state)[None]
    swap = layout.kind_base[PLACE] + parse_card("5s")  # 5s onto table meld 0, where the joker stands for it
    assert mask[0, swap], "the swap must be legal in this position"
    agent = RuleAgent(make_ruleset("romi", 2))
    discard_5s = layout.moves.index((DISCARD, parse_card("5s"), 0))
    assert agent.act(observation[0], mask[0]) == discard_5s
    assert int(agent.act_batch(observation, mask)[0]) == discard_5s
