"""The solver plane (agents.solver_planes) and the card network that reads it.

The plane is the deadwood of the hand's best free arrangement (melds G3 sets, G4 runs; Indian's
wild-rank cards and printed jokers as jokers, I2), computed by the compiled solver for a batch of
observations. Checked here: against the Python solver on scenario hands and, as a property, that
the plane is part of the hand, carries the least deadwood value and leaves a hand that melds out
completely; then the network option, its config check, and its export with the plane as a third
input.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.export import SOLVER_INPUT, exported_outputs, export_policy, sample_inputs, torch_outputs
from agents.networks import CardActorCritic
from agents.policy import load_checkpoint, save_checkpoint
from agents.registry import make_agent
from agents.solver_planes import SolverPlanes
from rummy_env import solver
from rummy_env.cards import JOKER, parse_cards, to_counts
from rummy_env.encoding import num_actions, observation_layout, observation_size
from rummy_env.ruleset import make_ruleset


def observation(game: str, players: int, hand: list[int], wild_card: int | None = None) -> np.ndarray:
    """An observation vector holding only ``hand`` (counts) and, for Indian, the turned-up wild card."""
    layout = observation_layout(game, players)
    obs = np.zeros(observation_size(game, players), np.float32)
    obs[layout["hand"]] = hand
    if wild_card is not None:
        obs[layout["wild_card"].start + wild_card] = 1.0
    return obs


def folded(hand: list[int], wild_rank: int | None) -> list[int]:
    """``hand`` with the wild rank's cards counted as jokers (I2)."""
    out = list(hand)
    if wild_rank is not None:
        for suit in range(4):
            out[JOKER] += out[suit * 13 + wild_rank]
            out[suit * 13 + wild_rank] = 0
    return out


def plane_of(game: str, hand_text: str, wild: str | None = None, players: int = 2) -> dict[str, int]:
    wild_card = None if wild is None else parse_cards(wild)[0]
    obs = observation(game, players, to_counts(parse_cards(hand_text)), wild_card)
    plane = SolverPlanes(game, players)(obs[None])[0]
    return {str(c): int(n) for c, n in enumerate(plane) if n}


@pytest.mark.parametrize("game, hand, wild, loose", [
    # G4 run As-2s-3s and G3 set 7h-7d-7c meld; Kd and 9c are left
    ("basic", "As 2s 3s 7h 7d 7c Kd 9c", None, "Kd 9c"),
    # I2: with 5h turned up, 5s is a joker and fills 8d-9d-_-Jd; only Kc is left
    ("indian", "As 2s 3s 8d 9d Jd 5s Kc 4h 4c 4d Qh Qs", "5h", "Kc Qh Qs"),
    # I2: a printed joker turned up makes aces wild: Ah stands in for 4c in 2c-3c-_-5c (15 points
    # left; the ace in 4s-4h-_ would leave 2c 3c 5c 7s, 17)
    ("indian", "2c 3c 5c Ah Kd Qd Jd 9s 9h 9d 4s 4h 7s", "*", "4s 4h 7s"),
])
def test_scenario_hands_leave_the_cards_outside_melds(game, hand, wild, loose):
    want = {str(c): n for c, n in enumerate(to_counts(parse_cards(loose))) if n}
    assert plane_of(game, hand, wild) == want


def _deck(game: str) -> list[int]:
    rules = make_ruleset(game, 2)
    return [c for c in range(52) for _ in range(rules.decks)] + [JOKER] * rules.printed_jokers


@settings(max_examples=150, deadline=None)
@given(game=st.sampled_from(["indian", "basic", "romi"]), data=st.data())
def test_plane_is_least_deadwood_and_the_rest_melds_out(game, data):
    deck = _deck(game)
    size = data.draw(st.integers(1, 14 if game != "basic" else 11))
    picks = data.draw(st.lists(st.integers(0, len(deck) - 1), min_size=size, max_size=size, unique=True))
    hand = to_counts([deck[i] for i in picks])
    wild_card = data.draw(st.one_of(st.none(), st.integers(0, 52))) if game == "indian" else None
    wild_rank = None if wild_card is None else (0 if wild_card == JOKER else wild_card % 13)
    plane = SolverPlanes(game, 2)(observation(game, 2, hand, wild_card)[None])[0].astype(int).tolist()
    counts = folded(hand, wild_rank)
    arrangement_game = make_ruleset(game, 2).spec.arrangement_game
    assert all(0 <= p <= c for p, c in zip(plane, counts))  # part of the hand
    values = make_ruleset(game, 2).values
    least = solver.min_deadwood(counts, arrangement_game)
    assert sum(values[c] * n for c, n in enumerate(plane)) == least
    melded = [c - p for c, p in zip(counts, plane)]
    assert solver.min_deadwood(melded, arrangement_game) == 0  # what is not in the plane melds out


def test_batch_rows_are_independent_and_match_the_python_arrangement():
    from agents.rule_agent import RuleAgent

    rng = np.random.default_rng(3)
    deck = _deck("indian")
    rows, wanted = [], []
    agent = RuleAgent("indian", 2)
    for _ in range(64):
        hand = to_counts([deck[i] for i in rng.choice(len(deck), 13 + int(rng.integers(2)), replace=False)])
        wild_card = int(rng.integers(53))
        rows.append(observation("indian", 2, hand, wild_card))
        _, _, loose = agent.arrangement(hand, 0 if wild_card == JOKER else wild_card % 13)
        wanted.append(to_counts(loose))
    got = SolverPlanes("indian", 2)(np.stack(rows)).astype(int).tolist()
    assert got == wanted


def test_network_reads_the_plane_and_round_trips_through_a_checkpoint(tmp_path):
    torch.manual_seed(0)
    model = CardActorCritic("indian", 2, layout=2, solver_plane=True).eval()
    with torch.no_grad():
        model.card_embedding.normal_()
        model.read_planes.weight[:, -1].mul_(50.0)  # the plane's column matters visibly
    observations, masks = sample_inputs(observation_size("indian", 2), num_actions("indian"), 16, seed=2)
    obs, m = torch.as_tensor(observations), torch.as_tensor(masks)
    planes = torch.as_tensor(SolverPlanes("indian", 2)(observations))
    with torch.no_grad():
        computed = model(obs, m)[0]
        given_plane = model(obs, m, planes)[0]
        other = model(obs, m, torch.zeros_like(planes))[0]
    assert torch.equal(computed, given_plane)
    assert not torch.allclose(computed, other)  # the plane changes the logits
    path = save_checkpoint(tmp_path / "s.pt", model, "indian", 2, {})
    loaded, meta = load_checkpoint(path)
    assert meta["model"]["solver_plane"] is True
    with torch.no_grad():
        assert torch.equal(loaded(obs, m)[0], computed)


def test_solver_plane_needs_layout_2():
    with pytest.raises(ValueError, match="solver_plane needs layout 2"):
        CardActorCritic("indian", 2, layout=1, solver_plane=True)


@pytest.mark.parametrize("game", ["indian", "romi"])
def test_export_takes_the_plane_as_a_third_input(tmp_path, game):
    torch.manual_seed(1)
    model = CardActorCritic(game, 2, layout=2, solver_plane=True).eval()
    with torch.no_grad():
        model.card_embedding.normal_()
        model.read_planes.weight[:, -1].mul_(50.0)
    checkpoint = save_checkpoint(tmp_path / "s.pt", model, game, 2, {})
    planes = SolverPlanes(game, 2)
    for fmt in ("onnx", "torchscript"):
        exported, sidecar = export_policy(checkpoint, fmt)
        inputs = [entry["name"] for entry in json.loads(sidecar.read_text())["inputs"]]
        assert inputs == ["observations", "action_masks", SOLVER_INPUT]
        observations, masks = sample_inputs(observation_size(game, 2), num_actions(game), 5, seed=6)
        want = torch_outputs(model, observations, masks)
        got = exported_outputs(exported, fmt, observations, masks, planes(observations))
        assert max(float(np.max(np.abs(w - g))) for w, g in zip(want, got)) <= 1e-5
    onnx_agent = make_agent(f"onnx:{tmp_path / 's.onnx'}", game, 2)
    torch_agent = make_agent(f"ppo:{checkpoint}", game, 2)
    observations, masks = sample_inputs(observation_size(game, 2), num_actions(game), 64, seed=7)
    assert onnx_agent.act_batch(observations, masks).tolist() == torch_agent.act_batch(observations, masks).tolist()
