"""Beliefs about the hidden hands (agents.belief, docs/agents.md "Beliefs"): what is hidden is read
right, weighted guesses stay consistent with the observation, a trained belief beats uniform deals
on held-out positions, its files round-trip and bad ones are refused by name."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.base import AgentError
from agents.belief import Belief
from agents.registry import make_agent
from agents.search_agent import determinise
from agents.train_belief import HiddenCards, fit, log_likelihood, record, save, uniform_probabilities
from agents.view import ObservationReader
from rummy_env.cards import NUM_TYPES
from rummy_env.ruleset import make_ruleset
from rummy_env.vector import VectorGame

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("indian", "basic", "romi")


def played(game: str, players: int, seed: int, ticks: int) -> VectorGame:
    """Eight hands of ``game`` after ``ticks`` moves of the rule agent in every seat."""
    venv = VectorGame(game, 8, players, seed=seed, backend="numba")
    venv.reset(seed)
    rule = make_agent("rule", game, players)
    for _ in range(ticks):
        venv.step(rule.act_batch(venv.observations, venv.action_masks))
    return venv


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), players=st.integers(2, 4), seed=st.integers(0, 10_000),
       ticks=st.integers(0, 120))
def test_the_hidden_cards_are_what_the_other_seats_hold_beyond_what_is_known(game, players, seed, ticks):
    """Per other seat, the target counts its hand less the cards the observer knows it took (G7):
    never negative, never more than the unseen copies (G2 counts), summing to the seat's hand size
    less its known cards; the unseen copies are those targets plus the stock."""
    venv = played(game, players, seed, ticks)
    reader = HiddenCards(game, players)
    rows = np.arange(venv.num_envs)
    observations = venv.observations.copy()
    targets = reader.targets(venv, rows, observations)
    unseen = reader.unseen(observations)
    views = [ObservationReader(game, players).read(row) for row in observations]
    sizes = np.array([view.hand_sizes for view in views], np.float32)
    known = reader.known_cards(observations)
    assert (targets >= 0).all()
    assert (targets.sum(axis=1) <= unseen + 1e-6).all()
    np.testing.assert_allclose(targets.sum(axis=2), sizes[:, 1:] - known[:, 1:].sum(axis=2))
    stock = np.array([view.stock_size for view in views], np.float32)
    np.testing.assert_allclose(unseen.sum(axis=1), targets.sum(axis=(1, 2)) + stock)


def test_weighted_guesses_deal_each_hand_from_its_likely_cards():
    """With weights that favour a set of unseen cards, the other hand's unknown cards come from that
    set (it holds more of them than needed), and the guess still shows our seat its observation."""
    venv = played("indian", 2, 4, 30)
    observation, mask = venv.observations[0].copy(), venv.action_masks[0].copy()
    view = ObservationReader("indian", 2).read(observation)
    rules = make_ruleset("indian", 2)
    unseen = HiddenCards("indian", 2).unseen(observation[None])[0]
    favoured = [c for c in range(NUM_TYPES) if unseen[c] > 0][:12]
    missing = view.hand_sizes[1] - sum(view.known[1])
    assert sum(int(unseen[c]) for c in favoured) >= missing
    weights = np.full((1, NUM_TYPES), 1e-9)
    weights[0, favoured] = 1.0
    rng = random.Random(3)
    probe = VectorGame("indian", 1, 2, backend="numba")
    for _ in range(5):
        world = determinise(view, rules, rng, seed=rng.getrandbits(32), weights=weights)
        unknown = np.asarray(world.hands[1]) - np.asarray(view.known[1])
        assert set(np.flatnonzero(unknown).tolist()) <= set(favoured)
        probe.load(0, world)
        assert np.array_equal(probe.observe(0, 0), observation) and np.array_equal(probe.action_masks[0], mask)


@pytest.fixture(scope="module")
def trained():
    """A belief for Indian Rummy trained on 40,000 positions of rule agents (seconds)."""
    data = record("indian", 2, ["rule"], 40_000, seed=1)
    net, report = fit(data, "indian", 2, epochs=3, seed=1)
    return data, net, report


def test_a_trained_belief_beats_uniform_deals_on_held_out_positions(trained):
    """What the rule agent took, threw and passed over says something about its hand: the trained
    belief's held-out log-likelihood per unseen copy is above the uniform deal's."""
    data, _, report = trained
    assert len(data) == 40_000 and report["held_out"] == 4_000
    assert report["log_likelihood"] > report["uniform_log_likelihood"] + 0.005, report
    assert log_likelihood(uniform_probabilities(data), data) < -0.1


@pytest.mark.parametrize("suffix", [".pt", ".onnx"])
def test_a_saved_belief_loads_and_gives_the_same_probabilities(trained, tmp_path, suffix):
    data, net, report = trained
    path = save(tmp_path / f"b{suffix}", net, "indian", 2, report)
    belief = Belief(path, "indian", 2)
    import torch

    with torch.no_grad():
        want = torch.sigmoid(net(torch.from_numpy(data.observations[:64]))).numpy()
    got = belief(data.observations[:64])
    assert got.shape == (64, 1, NUM_TYPES)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert belief.metadata["report"]["log_likelihood"] == report["log_likelihood"]
    with pytest.raises(AgentError, match=r"b\.(pt|onnx)' was trained for 'indian' with 2 players, not 'romi'"):
        Belief(path, "romi", 2)


def test_bad_belief_files_are_refused_by_name(tmp_path):
    with pytest.raises(AgentError, match="nothing.onnx'.*no such file"):
        Belief(tmp_path / "nothing.onnx", "indian", 2)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(AgentError, match="junk.pt'.*not a loadable checkpoint"):
        Belief(junk, "indian", 2)
    policy = ROOT / "agents" / "pretrained" / "indian-2p.onnx"
    with pytest.raises(AgentError, match="indian-2p.onnx'.*not a rummy-env belief"):
        Belief(policy, "indian", 2)


def test_a_search_spec_names_a_bad_belief(tmp_path):
    with pytest.raises(AgentError, match="belief= names no belief"):
        make_agent("search:policy=pretrained:indian,belief=", "indian", 2)
    with pytest.raises(AgentError, match="missing.onnx'.*no such file"):
        make_agent(f"search:policy=pretrained:indian,belief={tmp_path / 'missing.onnx'}", "indian", 2)
    with pytest.raises(AgentError, match="belief=pretrained: no belief is shipped for 'indian' with 6 players"):
        make_agent("search:policy=pretrained:indian,belief=pretrained", "indian", 6)


def test_a_search_with_a_belief_deals_by_it(trained, tmp_path):
    """The search's worlds follow its belief: the same seed gives the same worlds, and they differ
    from the uniform deal's."""
    _, net, report = trained
    path = save(tmp_path / "b.pt", net, "indian", 2, report)
    agent = make_agent(f"search:policy=pretrained:indian,worlds=4,belief={path}", "indian", 2)
    plain = make_agent("search:policy=pretrained:indian,worlds=4", "indian", 2)
    venv = played("indian", 2, 9, 24)
    observation = venv.observations[0]
    first = [w.to_dict() for w in agent.engine.worlds(observation, 5)]
    assert first == [w.to_dict() for w in agent.engine.worlds(observation, 5)]
    assert first != [w.to_dict() for w in plain.engine.worlds(observation, 5)]


def test_the_command_trains_and_writes_a_belief(tmp_path):
    out = tmp_path / "tiny.onnx"
    done = subprocess.run([sys.executable, "-m", "agents.train_belief", "--game", "basic", "--positions", "3000",
                           "--epochs", "1", "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "held-out log-likelihood per unseen copy" in done.stdout and out.is_file()
    assert Belief(out, "basic", 2).metadata["report"]["agents"] == ["rule"]
    bad = subprocess.run([sys.executable, "-m", "agents.train_belief", "--game", "basic", "--out", "x.txt"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "--out 'x.txt': name a .onnx or a .pt file" in bad.stderr
    helped = subprocess.run([sys.executable, "-m", "agents.train_belief", "--help"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert helped.returncode == 0 and "--positions" in helped.stdout


def test_the_shipped_indian_belief_beats_uniform_deals_on_fresh_play():
    """``belief=pretrained`` loads the shipped 2-player Indian belief; on positions it never saw
    (the shipped policy against the rule agent, a seed of its own) it reads the other hand better
    than the uniform deal."""
    from agents.belief import belief_from_setting

    belief = belief_from_setting("pretrained", "indian", 2)
    data = record("indian", 2, ["pretrained:indian", "rule"], 4_000, seed=77)
    assert log_likelihood(belief(data.observations), data) > log_likelihood(uniform_probabilities(data), data) + 0.01
