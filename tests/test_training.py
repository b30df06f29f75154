"""The trainer: PPO pieces against hand-computed values, collection, shaping, cloning, runs, resume, config."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.base import Agent
from agents.policy import CheckpointError, build_network, load_checkpoint, sample_actions
from agents.training import trainer as trainer_module
from agents.training.cli import main as cli_main
from agents.training.config import ConfigError, TrainConfig, load_yaml, make_config
from agents.training.ppo import advantages, masked_entropy, ppo_loss
from agents.training.rollout import Collector
from agents.training.trainer import train
from rummy_env.encoding import observation_layout
from rummy_env.ruleset import GAMES, make_ruleset
from rummy_env.shaping import Potential
from rummy_env.vector import VectorGame

# ----------------------------------------------------------------------------- PPO pieces


def test_gae_by_hand():
    """Two chains: 0 -> 2 (hand over after 2), and 1 cut by the rollout's end (bootstrapped)."""
    rewards = np.array([0.5, 0.0, 1.0], np.float32)
    values = np.array([0.2, 0.3, 0.4], np.float32)
    next_index = np.array([2, -1, -1])
    done = np.array([False, False, True])
    bootstrap = np.array([0.0, 0.7, 0.0], np.float32)
    gamma, lam = 0.9, 0.8
    adv, returns = advantages(rewards, values, next_index, done, bootstrap, gamma, lam)
    delta2 = 1.0 - 0.4
    delta0 = 0.5 + 0.9 * 0.4 - 0.2
    delta1 = 0.0 + 0.9 * 0.7 - 0.3
    np.testing.assert_allclose(adv, [delta0 + gamma * lam * delta2, delta1, delta2], rtol=1e-6)
    np.testing.assert_allclose(returns, adv + values, rtol=1e-6)


def test_clipped_loss_by_hand():
    """Two samples, one ratio inside the clip range and one outside (advantage normalisation off)."""
    logits = torch.log(torch.tensor([[0.5, 0.5, 1e-9], [0.9, 0.1, 1e-9]]))
    masks = torch.tensor([[1, 1, 0], [1, 1, 0]], dtype=torch.int8)
    logits = logits.masked_fill(masks == 0, torch.finfo(torch.float32).min)
    actions = torch.tensor([0, 0])
    old_logp = torch.log(torch.tensor([0.45, 0.5]))
    adv = torch.tensor([1.0, 2.0])
    values = torch.tensor([0.0, 1.0])
    returns = torch.tensor([1.0, 1.0])
    loss, parts = ppo_loss(logits, values, masks, actions, old_logp, adv, returns, clip_coef=0.2,
                           ent_coef=0.0, vf_coef=0.5, normalize=False)
    ratio = torch.tensor([0.5 / 0.45, 0.9 / 0.5])
    expected_policy = -(torch.tensor([1.0, 2.0]) * torch.minimum(ratio, torch.tensor([1.2, 1.2]))).mean()
    assert float(parts["policy_loss"]) == pytest.approx(float(expected_policy), rel=1e-5)
    assert float(parts["value_loss"]) == pytest.approx(0.5 * (1.0 + 0.0) / 2, rel=1e-6)
    assert float(parts["clip_fraction"]) == pytest.approx(0.5)
    assert float(loss) == pytest.approx(float(expected_policy) + 0.5 * 0.25, rel=1e-5)


def test_entropy_over_legal_actions_only():
    """Uniform over 2 legal of 3 actions: entropy log 2, whatever the masked logit was."""
    masks = torch.tensor([[1, 1, 0]], dtype=torch.int8)
    logits = torch.tensor([[0.0, 0.0, 5.0]]).masked_fill(masks == 0, torch.finfo(torch.float32).min)
    assert float(masked_entropy(logits, masks)) == pytest.approx(math.log(2), rel=1e-6)


@given(st.integers(0, 2**31 - 1), st.integers(1, 6), st.integers(2, 2319))
@settings(max_examples=40, deadline=None)
def test_sampled_actions_are_legal(seed, rows, width):
    """``sample_actions`` never draws a masked action, wherever the legal ones lie in a wide row
    (the last entry legal or not; a single legal action; almost all masked)."""
    rng = np.random.default_rng(seed)
    masks = torch.from_numpy(rng.random((rows, width)) < rng.choice([0.001, 0.05, 0.5, 1.0]))
    masks[torch.arange(rows), torch.from_numpy(rng.integers(0, width, rows))] = True
    logits = torch.from_numpy(rng.normal(0, 3, (rows, width)).astype(np.float32))
    probabilities = torch.softmax(logits.masked_fill(~masks, torch.finfo(torch.float32).min), dim=-1)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(5):
        actions = sample_actions(probabilities, generator)
        assert actions.shape == (rows,) and bool(masks[torch.arange(rows), actions].all())


def test_sampled_actions_follow_the_probabilities():
    """200,000 draws from one row: each action's share within 5 standard errors of its
    probability, and the same seed draws the same actions."""
    probabilities = torch.tensor([0.5, 0.0, 0.3, 0.15, 0.0, 0.05])
    rows = probabilities.repeat(200_000, 1)
    actions = sample_actions(rows, torch.Generator().manual_seed(3))
    shares = torch.bincount(actions, minlength=6).double() / len(actions)
    error = (probabilities.double() * (1 - probabilities.double()) / len(actions)).sqrt()
    assert bool(((shares - probabilities.double()).abs() <= 5 * error + 1e-12).all()), shares
    assert torch.equal(actions, sample_actions(rows, torch.Generator().manual_seed(3)))


# ----------------------------------------------------------------------------- collection


def _collector(game: str, players: int = 2, shaping: bool = True, gamma: float = 1.0, seed: int = 3,
               network: str = "card", backend: str = "python", **rule_options) -> Collector:
    card = {"kind": "card", "channels": 8, "global_size": 16, "layout": 2}
    kind = card if network == "card" else {"kind": "mlp", "hidden": [32]}
    torch.manual_seed(0)
    model = build_network(game, players, kind).eval()
    collector = Collector(game, players, 8, seed, model, reward_scale=0.01, gamma=gamma, shaping=shaping,
                          shaping_coef=1.0, backend=backend, **rule_options)
    from agents.registry import make_agent

    collector.set_pool(["self", "random"], [0.5, 0.5], {"random": make_agent("random", make_ruleset(game, players))})
    return collector


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_sampled_actions_are_always_legal(game):
    """Masked sampling never picks an action the mask forbids (the env would raise otherwise)."""
    rollout = _collector(game, network="mlp").collect(600)
    picked = rollout.masks[np.arange(len(rollout)), rollout.actions]
    assert len(rollout) >= 600 and picked.all()
    assert np.isfinite(rollout.logp).all() and (rollout.logp <= 0).all()


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("game", "players"), [("indian", 2), ("indian", 3), ("basic", 2), ("romi", 2),
                                                  ("romi", 3)])
def test_numba_collection_matches_python(game, players):
    """The trainer's default Indian, Basic and römi engine (``backend`` auto = numba) records the very
    rollout the Python reference records: same observations, masks, actions, log-probabilities and
    shaped rewards, hands cut off at 40 turns (G9) so that many end and reset inside it."""
    python = _collector(game, players, max_turns=40).collect(1500)
    numba = _collector(game, players, backend="numba", max_turns=40).collect(1500)
    for name in ("observations", "masks", "actions", "logp", "rewards", "next_index", "done"):
        np.testing.assert_array_equal(getattr(numba, name), getattr(python, name), err_msg=name)
    assert len(python.hands) > 10 and python.hands == numba.hands


def test_shaping_terms_add_up_to_the_potential_difference():
    """With γ = 1, a seat's shaping terms over a whole hand add up to Φ(end) − Φ(start) = −Φ(start)
    (Ng et al. 1999): the shaped and unshaped rewards of a chain differ by exactly that. Hands are
    cut off after 30 turns (G9) so that many end inside the rollout."""
    shaped = _collector("indian", shaping=True, max_turns=30).collect(3000)
    plain = _collector("indian", shaping=False, max_turns=30).collect(3000)
    np.testing.assert_array_equal(shaped.actions, plain.actions)  # acting does not see rewards
    potential = Potential("indian", 2)
    pointed = set(shaped.next_index[shaped.next_index >= 0].tolist())
    checked = 0
    for start in range(len(shaped)):
        if start in pointed or not potential.is_draw_phase(shaped.observations[start]):
            continue
        chain = [start]
        while shaped.next_index[chain[-1]] >= 0:
            chain.append(int(shaped.next_index[chain[-1]]))
        if not shaped.done[chain[-1]]:
            continue
        difference = shaped.rewards[chain].sum() - plain.rewards[chain].sum()
        phi_start = -potential.penalty_of(shaped.observations[start]) * 0.01
        assert difference == pytest.approx(-phi_start, abs=1e-5)
        checked += 1
    assert checked >= 5


class HighestLegal(Agent):
    """A planted teacher: always the highest legal action id."""

    name = "highest"

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


class _Writer:
    def add_scalar(self, *args):
        pass


def _local_workers(monkeypatch, config, teacher: Agent | None = None):
    """The trainer's in-process station for ``config`` (``num_workers`` 0), with ``teacher``
    standing in for whatever ``bc_teacher`` names."""
    from agents.training import workers

    if teacher is not None:
        monkeypatch.setattr(workers.Station, "_agent", lambda self, spec, seed: teacher)
    return workers.Workers(trainer_module.to_dict(config), trainer_module.model_config(config))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_cloning_fits_a_planted_teacher(tmp_path, monkeypatch):
    """Cloning learns a simple teacher's rule well above chance on held-out decisions."""
    config = make_config({"run_dir": str(tmp_path), "bc_decisions": 3000, "bc_epochs": 12, "num_workers": 0,
                          "num_envs": 16, "progress": False})
    run = trainer_module.Run(config, tmp_path)
    workers = _local_workers(monkeypatch, config, HighestLegal(make_ruleset("indian", 2)))
    workers.set_state(run.model.state_dict(), None)
    report = trainer_module.clone_teacher(run, workers, workers, None, _Writer(), lambda *_: None,
                                          trainer_module.progress_factory(False))
    assert report["accuracy"] >= 0.9, report
    assert report["accuracy_discard"] >= 0.8, report


def test_teacher_hands_are_played_to_their_end():
    """Cloning data has no chain cut by the end of the recording: every decision's chain reaches
    the hand's result (its value target is a true return, nothing to bootstrap)."""
    collector = _collector("indian", max_turns=60)
    for target in (50, 333):
        data = collector.collect(target, HighestLegal(make_ruleset("indian", 2)))
        assert len(data) >= target
        ends = np.flatnonzero(data.next_index < 0)
        assert data.done[ends].all(), f"{(~data.done[ends]).sum()} chains cut"
        assert not data.bootstrap.any()


class CountingTeacher:
    """An agent that counts the positions it is asked about."""

    def __init__(self, agent):
        self.agent = agent
        self.asked = 0

    def act_batch(self, observations, action_masks):
        self.asked += len(observations)
        return self.agent.act_batch(observations, action_masks)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_teacher_is_asked_only_for_recorded_decisions(backend):
    """A slow teacher (the lookahead or search agent) is asked about every kept decision and no
    other: a slot whose recorded hand ended waits unplayed while the others finish theirs, and the
    next recording starts every slot at the start of a hand."""
    from agents.registry import make_agent

    collector = _collector("indian", backend=backend)
    teacher = CountingTeacher(make_agent("rule", make_ruleset("indian", 2)))  # hands of different lengths
    for target in (50, 400, 400):
        teacher.asked = 0
        data = collector.collect(target, teacher)
        assert teacher.asked == len(data)
        assert data.done[data.next_index < 0].all()
        assert all(not collector.venv.state(i).history for i in range(8))  # every slot at a fresh deal


def test_the_first_hands_after_a_reseed_follow_the_pool():
    """The hands dealt right after a (re)seed are against the configured mix, not all self-play:
    with pool_self_fraction 0.2, about a fifth of 400 slots (binomial sd 2 points) play themselves."""
    from agents.training.workers import Station

    config = trainer_module.to_dict(make_config({"num_envs": 400, "num_workers": 0}))
    station = Station(config, {"kind": "mlp", "hidden": [8]}, 0)
    pool = trainer_module.OpponentPool(0.2, 0.4, 4)
    names, probs = pool.probabilities()
    station.pool_update(names, [float(p) for p in probs], {})
    for seed in (1, 2):
        station.reseed(seed)
        share = station.collector.opponent.count("self") / 400
        assert abs(share - 0.2) < 0.08, share
        assert station.collector.opponent.count("rule") > 0.3 * 400 * 0.8


def test_fixed_pool_opponents_are_dealt_and_resume_with_their_records():
    """An agent spec in pool_opponents is a pool entry like the rule agent: the slots deal hands
    against it (PFSP weighs it with the others), its record is kept, and a checkpoint from before
    it was configured resumes with it fresh."""
    from agents.training.workers import Station

    pool = trainer_module.OpponentPool(0.0, 0.0, 4, ("rule:hold_until=3",))
    names, probs = pool.probabilities()
    assert names == ["self", "rule", "random", "rule:hold_until=3"] and probs[3] == pytest.approx(1 / 3)
    pool.record("rule:hold_until=3", 0.0)
    assert pool.win_rate["rule:hold_until=3"] < 0.5 and pool.probabilities()[1][3] > 1 / 3
    config = trainer_module.to_dict(make_config({"game": "basic", "num_envs": 200, "num_workers": 0,
                                                 "pool_opponents": ["rule:hold_until=3"]}))
    station = Station(config, {"kind": "mlp", "hidden": [8]}, 0)
    station.pool_update(names, [float(p) for p in pool.probabilities()[1]], {})
    station.reseed(1)
    assert station.collector.opponent.count("rule:hold_until=3") > 200 * 0.25
    assert station.collector.opponents["rule:hold_until=3"].hold_until == 3
    old = trainer_module.OpponentPool(0.0, 0.0, 4)
    old.add_snapshot("snapshot-5")
    pool.load_state(old.state())
    assert pool.opponents == ["rule", "random", "rule:hold_until=3", "snapshot-5"]
    assert pool.win_rate["rule:hold_until=3"] == 0.5 and pool.elo["rule:hold_until=3"] == 1000.0


def test_a_pool_of_pool_opponents_only_deals_every_hand_against_them():
    """pool_opponents_only: the listed agents replace the rule agent and random, so with no
    self-play every hand is against them (the rule agent too, when it is the one listed)."""
    from agents.training.workers import Station

    for listed in (("rule",), ("random", "rule:hold_until=3")):
        pool = trainer_module.OpponentPool(0.0, 0.4, 0, listed, only=True)
        names, probs = pool.probabilities()
        assert names == ["self", *listed] and probs[0] == 0.0 and probs.sum() == pytest.approx(1.0)
    config = trainer_module.to_dict(make_config({"game": "basic", "num_envs": 100, "num_workers": 0,
                                                 "pool_opponents": ["random"], "pool_opponents_only": True}))
    station = Station(config, {"kind": "mlp", "hidden": [8]}, 0)
    pool = trainer_module.OpponentPool(0.0, 0.4, 0, ("random",), only=True)
    station.pool_update(*[list(x) for x in pool.probabilities()], {})
    station.reseed(1)
    assert station.collector.opponent == ["random"] * 100


def test_the_progress_bar_shows_every_fixed_opponent_but_not_the_snapshots():
    import collections

    recent = collections.deque([{"rule": (3, 5), "pretrained:basic": (1, 4), "snapshot-4": (2, 2)},
                                {"rule": (2, 5), "random": (1, 1)}])
    stats = {"charts/learner_decisions_per_s": 1000.0, "charts/env_steps_per_s": 5000.0}
    text = trainer_module._rates_text(stats, recent)
    assert "won 50% of 10 vs rule" in text and "won 100% of 1 vs random" in text
    assert "won 25% of 4 vs pretrained:basic" in text and "snapshot" not in text



def test_the_progress_bar_ends_at_the_decisions_the_run_makes():
    """Rollouts overshoot ``rollout_size`` a little; the bar's total follows, so it ends full."""
    import types

    run = types.SimpleNamespace(update=0, learner_steps=0)
    assert trainer_module._projected_decisions(run, 4, 1000) == 4000
    for made in (1030, 1010, 1050, 1020):
        run.update += 1
        run.learner_steps += made
        total = trainer_module._projected_decisions(run, 4, 1000)
        assert total >= run.learner_steps + (4 - run.update) * 1000  # never short of what is left
    assert total == run.learner_steps == 4110
    run.update = 6  # a resumed run past its updates: nothing left to project
    assert trainer_module._projected_decisions(run, 4, 1000) == run.learner_steps

def test_turn_share_weighs_a_self_play_hand_by_its_learner_seats():
    """At a table of 4, a self-play hand gives the learner every seat's turns: one self-play hand
    and one hand against the rule agent of the same length are 4/5 and 1/5 of its turns."""
    pool = trainer_module.OpponentPool(0.2, 0.4, 4)
    hands = [("self", (0, 1, 2, 3), "win", 2, [0.0, 0.0, 10.0, -10.0], 40),
             ("rule", (1,), "win", 1, [-5.0, 5.0, 0.0, 0.0], 40),
             ("random", (3,), "stalemate", None, [0.0] * 4, 0)]
    stats, _ = trainer_module.hand_statistics(hands, pool)
    assert stats["train/turn_share/self"] == pytest.approx(0.8)
    assert stats["train/turn_share/rule"] == pytest.approx(0.2)
    assert stats["train/turn_share/random"] == 0.0


def test_an_opponent_leaving_the_pool_finishes_its_hands():
    """A snapshot that leaves the pool while hands are being played against it stays until they
    end: the next collection neither fails nor drops those hands."""
    collector = _collector("indian")
    snapshot = build_network("indian", 2, {"kind": "mlp", "hidden": [16]}).eval()
    collector.set_pool(["snapshot-2"], [1.0], {"snapshot-2": snapshot})
    for i in range(collector.venv.num_envs):
        collector._deal_opponent(i)
    collector.collect(40)  # hands in progress, every one against snapshot-2
    assert collector.opponent.count("snapshot-2") == collector.venv.num_envs
    collector.set_pool(["self"], [1.0], {})
    later = collector.collect(3000)
    assert any(hand[0] == "snapshot-2" for hand in later.hands)
    assert "snapshot-2" not in collector.opponent
    collector.set_pool(["self"], [1.0], {})
    assert "snapshot-2" not in collector.opponents  # released once no hand needs it


@pytest.mark.parametrize(("game", "players"), [("indian", 2), ("indian", 6), ("basic", 4), ("romi", 3)])
def test_oracle_guiding_shows_the_other_hands_in_their_known_rows(game, players):
    """Oracle guiding: a revealed decision's known-cards rows of the other seats hold their whole
    hands (seat order from the one acting, as the known rows are kept); every other entry, its own
    hand and known row included, is the observation as dealt. A share of 0 changes nothing."""
    collector = _collector(game, players, backend="numba")
    collector.collect(300)  # hands under way, cards picked up from the discard pile known
    venv = collector.venv
    rows = np.arange(venv.num_envs)
    seats = venv.to_act.copy()
    plain = venv.observations.copy()
    hand, known = (observation_layout(game, players)[k] for k in ("hand", "known"))
    untouched = plain.copy()
    collector.reveal(untouched, rows, seats, 0.0)
    assert np.array_equal(untouched, plain)
    shown = plain.copy()
    collector.reveal(shown, rows, seats, 1.0)
    for i, seat in zip(rows.tolist(), seats.tolist()):
        for offset in range(1, players):
            other_hand = venv.observe(i, (seat + offset) % players)[hand]
            row = slice(known.start + 53 * offset, known.start + 53 * (offset + 1))
            assert np.array_equal(shown[i, row], other_hand)
            assert (plain[i, row] <= other_hand).all()  # the known cards are in that hand
    others = np.zeros(plain.shape[1], bool)
    others[known.start + 53:known.stop] = True
    assert np.array_equal(shown[:, ~others], plain[:, ~others])
    assert (shown[:, others].sum(axis=1) > plain[:, others].sum(axis=1)).all()


@pytest.mark.parametrize(("replayed", "kept"), [(+5.0, "evaluation"), (+1.0, "final"), (+2.0, "final")])
def test_best_pt_is_confirmed_on_the_final_deals(tmp_path, monkeypatch, replayed, kept):
    """The best evaluation's candidate replays the final evaluation's deals (its seed and count)
    against the opponents that score, random and search left out; best.pt stays the candidate only
    if it scores higher there than the final policy (+2.0), else it becomes a copy of final.pt."""
    from types import SimpleNamespace

    config = make_config({"final_eval_deals": 7, "seed": 4})
    (tmp_path / "best.pt").write_bytes(b"candidate")
    (tmp_path / "final.pt").write_bytes(b"final")
    calls = []

    def fake_evaluate(path, game, players, opponents, deals, seed, workers=1, search_deals=None, stand_ins=None):
        calls.append((path, opponents, deals, seed, search_deals))
        return {opponents[0]: {"points": replayed}}

    monkeypatch.setattr(trainer_module, "evaluate", fake_evaluate)
    evaluations = [{"final": False, "learner_steps": 100, "panel_score": 1.0},
                   {"final": False, "learner_steps": 200, "panel_score": 9.0}]
    run = SimpleNamespace(config=config, run_dir=tmp_path, evaluations=evaluations, best_score=9.0, stand_ins={})
    final = {"random": {"points": 80.0}, "rule": {"points": 2.0}, "search": {"points": -50.0}}
    best = trainer_module._confirm_best(run, final, lambda *_: None, trainer_module.progress_factory(False))
    assert calls == [(str(tmp_path / "best.pt"), ["rule"], 7, 4 + 10_000, 0)]
    assert best["kept"] == kept and best["final_panel_score"] == 2.0
    assert (tmp_path / "best.pt").read_bytes() == (b"candidate" if kept == "evaluation" else b"final")
    if kept == "evaluation":
        assert best["learner_steps"] == 200 and best["panel_score"] == replayed
    else:
        assert best["candidate_panel_score"] == replayed and best["candidate_learner_steps"] == 200


def test_evaluations_share_deals_and_the_final_one_plays_others(tmp_path, monkeypatch):
    """Every periodic evaluation plays the same deals (the run's seed), so their scores compare; the
    final evaluation plays other deals (the ones the best.pt confirmation replays), unseen by the
    choice of best.pt."""
    from types import SimpleNamespace

    config = make_config({"seed": 4, "eval_opponents": ["rule"]})
    seeds = []

    def fake_evaluate(path, game, players, opponents, deals, seed, workers=1, search_deals=None, stand_ins=None):
        seeds.append(seed)
        keys = ("win_rate", "win_rate_low", "win_rate_high", "points", "points_low", "points_high")
        return {opponents[0]: {"hands": 6, "decided": 6, "wins": 3} | {key: 1.0 for key in keys}}

    def save(name, with_state=True):
        (tmp_path / name).write_bytes(b"policy")
        return tmp_path / name

    monkeypatch.setattr(trainer_module, "evaluate", fake_evaluate)
    run = SimpleNamespace(config=config, run_dir=tmp_path, evaluations=[], best_score=-math.inf,
                          learner_steps=0, save=save, stand_ins={})
    writer = SimpleNamespace(add_scalar=lambda *_: None)
    progress = trainer_module.progress_factory(False)
    for final in (False, False, True):
        trainer_module._evaluate(run, writer, 3, 0, lambda *_: None, progress, final=final)
    assert seeds[0] == seeds[1] == 4 and seeds[2] != 4
    assert seeds[2] == trainer_module._evaluation_seed(config, final=True)


def test_a_run_plays_the_shipped_policy_it_started_with(tmp_path, monkeypatch):
    """The panel's ``pretrained:indian`` is copied into the run folder at the start; shipping another
    policy meanwhile (here: a damaged file) changes neither what the run's evaluations play nor the
    copy a resumed run keeps, and results stay keyed by ``pretrained:indian``."""
    import agents.pretrained as pretrained
    from agents.base import AgentError
    from agents.registry import make_agent

    installed = pretrained.model_path("indian", 2)
    config = make_config({"eval_opponents": ["panel"], "num_workers": 0, "progress": False})
    run = trainer_module.Run(config, tmp_path / "run")
    copy = tmp_path / "run" / "pinned" / "indian-2p.onnx"
    assert run.stand_ins == {"pretrained:indian": f"onnx:{copy}"}
    assert copy.read_bytes() == installed.read_bytes()
    assert copy.with_suffix(".json").read_bytes() == installed.with_suffix(".json").read_bytes()

    reshipped = tmp_path / "installed"
    reshipped.mkdir()
    (reshipped / "indian-2p.onnx").write_bytes(b"a policy shipped halfway through the run")
    shutil.copyfile(installed.with_suffix(".json"), reshipped / "indian-2p.json")
    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", reshipped)
    with pytest.raises(AgentError):
        make_agent("pretrained:indian", make_ruleset("indian", 2))  # what the package would play now

    resumed = trainer_module.Run(config, tmp_path / "run")
    assert resumed.stand_ins == run.stand_ins and copy.read_bytes() == installed.read_bytes()
    path = resumed.save("evaluated.pt", with_state=False)
    results = trainer_module._play_panel(resumed, path, ["pretrained:indian"], 2, 0, 0,
                                         trainer_module.progress_factory(False)(total=1))
    assert list(results) == ["pretrained:indian"] and results["pretrained:indian"]["hands"] == 4


def test_collection_plays_a_shipped_policy_from_the_run_copy(tmp_path):
    """A pool entry or teacher named ``pretrained:GAME`` is built from the run's stand-in spec."""
    from agents.random_agent import RandomAgent
    from agents.training import workers

    config = make_config({"num_workers": 0, "progress": False})
    station = workers.Station(trainer_module.to_dict(config) | {"stand_ins": {"pretrained:indian": "random"}},
                              trainer_module.model_config(config), 0)
    assert isinstance(station._agent("pretrained:indian", 0), RandomAgent)
    assert not isinstance(station._agent("rule", 0), RandomAgent)


def test_without_an_evaluation_best_pt_is_the_final_policy(tmp_path):
    from types import SimpleNamespace

    (tmp_path / "final.pt").write_bytes(b"final")
    run = SimpleNamespace(config=make_config({}), run_dir=tmp_path, evaluations=[], best_score=-math.inf)
    best = trainer_module._confirm_best(run, {"rule": {"points": 3.0}}, lambda *_: None,
                                        trainer_module.progress_factory(False))
    assert best == {"kept": "final", "panel_score": 3.0, "final_panel_score": 3.0}
    assert (tmp_path / "best.pt").read_bytes() == b"final"


def test_the_oracle_share_falls_linearly_to_none():
    config = make_config({"oracle_decisions": 1000})
    shares = [trainer_module.oracle_share(config, steps) for steps in (0, 250, 1000, 5000)]
    assert shares == [1.0, 0.75, 0.0, 0.0]
    assert trainer_module.oracle_share(make_config({}), 0) == 0.0


def test_a_revealed_rollout_keeps_what_the_learner_saw():
    """With a share of 1/2, about half the learner's decisions see the other hand (Indian, 2
    players: 13 cards in the known row, where the known cards alone are a few)."""
    collector = _collector("indian", backend="numba")
    known = observation_layout("indian", 2)["known"]
    rollout = collector.collect(2000, oracle_share=0.5)
    counts = rollout.observations[:, known.start + 53:known.stop].sum(axis=1)
    revealed = (counts >= 13).mean()
    assert 0.4 < revealed < 0.6, revealed


def test_value_warmup_leaves_every_policy_output_unchanged():
    """A warm-up update trains the value head alone: logits bit for bit the same, values moved."""
    from agents.training.learner import Learner

    collector = _collector("indian")
    rollout = collector.collect(600)
    settings = trainer_module.ppo_settings(make_config({"value_warmup_updates": 1, "learning_rate": 1e-2}), 0, 10)
    assert settings.value_only
    learner = Learner(collector.model, 1e-2)
    obs, masks = torch.from_numpy(rollout.observations[:64]), torch.from_numpy(rollout.masks[:64])
    with torch.no_grad():
        logits_before, values_before = collector.model(obs, masks)
    learner.rollout = rollout
    learner.ppo_update(settings)
    with torch.no_grad():
        logits_after, values_after = collector.model(obs, masks)
    assert torch.equal(logits_before, logits_after)
    assert not torch.equal(values_before, values_after)
    settings.value_only = False
    learner.rollout = rollout
    learner.ppo_update(settings)
    with torch.no_grad():
        assert not torch.equal(collector.model(obs, masks)[0], logits_before)  # a real update does move it


def test_minibatches_are_near_equal():
    """Every PPO minibatch has the same size to within one decision (no tiny last one)."""
    from agents.training.learner import Learner

    collector = _collector("indian", network="mlp")
    rollout = collector.collect(1000)
    sizes = []
    original = collector.model.forward

    def spy(obs, masks):
        sizes.append(len(obs))
        return original(obs, masks)

    collector.model.forward = spy
    settings = trainer_module.ppo_settings(make_config({"value_warmup_updates": 0, "minibatch_size": 300,
                                                        "rollout_size": 1000, "update_epochs": 1,
                                                        "target_kl": 0.0}), 0, 10)
    learner = Learner(collector.model, 1e-3)
    learner.rollout = rollout
    learner.ppo_update(settings)
    assert len(sizes) == 4 and max(sizes) - min(sizes) <= 1 and sum(sizes) == len(rollout)


# ----------------------------------------------------------------------------- whole runs

TINY = {"total_steps": 2048, "rollout_size": 512, "minibatch_size": 128, "num_envs": 8, "num_workers": 0,
        "bc_decisions": 400, "bc_epochs": 1, "eval_every": 2, "eval_deals": 2, "final_eval_deals": 2,
        "checkpoint_every": 2, "channels": 8, "global_size": 16, "progress": False, "pool_snapshot_every": 2,
        "pool_max_snapshots": 1, "eval_opponents": ["random", "rule"]}


def _scalars(run_dir) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    return {tag: [e.value for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


@pytest.mark.slow
@pytest.mark.parametrize(("game", "players"), [("indian", 2), ("basic", 2), ("romi", 2), ("basic", 3)])
def test_short_run_writes_logs_checkpoints_and_curves(game, players, tmp_path):
    config = make_config(TINY | {"game": game, "num_players": players, "run_dir": str(tmp_path / game)})
    results = train(config, log=lambda *_: None)
    run_dir = tmp_path / game
    scalars = _scalars(run_dir)
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
                "losses/clip_fraction", "losses/explained_variance", "charts/env_steps_per_s",
                "eval/rule/win_rate", "eval/random/points", "clone/accuracy", "pool/elo/rule"):
        assert tag in scalars, tag
    assert len(scalars["losses/policy_loss"]) == 4
    for name in ("checkpoint.pt", "best.pt", "final.pt", "config.yaml", "results.json", "learning_curves.png",
                 "README.txt"):
        assert (run_dir / name).is_file(), name
    model, meta = load_checkpoint(run_dir / "best.pt", game, players)
    assert meta["model"]["kind"] == "card" and meta["version"] == 2
    assert load_yaml(run_dir / "config.yaml")["game"] == game
    assert results["final_evaluation"]["random"]["hands"] >= 2 * players
    assert results["cpu_seconds"] >= results["cpu_seconds_main_process"] > 0
    same = (run_dir / "best.pt").read_bytes() == (run_dir / "final.pt").read_bytes()
    assert same == (results["best"]["kept"] == "final")
    from agents.training.curves import main as curves_main

    assert curves_main([str(run_dir), "--out", str(tmp_path / "again.png")]) == 0
    assert (tmp_path / "again.png").stat().st_size > 10_000
    from agents.registry import make_agent

    agent = make_agent(f"ppo:{run_dir / 'best.pt'}", make_ruleset(game, players))  # the arena's spec
    assert agent.name.startswith("ppo:")


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("game", GAMES)
def test_a_short_run_at_the_game_s_largest_table_trains_and_evaluates_every_seat(game, seed, tmp_path):
    """Full tables (G1 seat ranges: Indian 6, Basic and römi 4): the learner trains in one seat
    against N-1 pool opponents and in every seat of self-play, is evaluated in each seat in turn
    on duplicate deals, and its checkpoint is for that table size only."""
    from rummy_env.games import game_spec

    largest = game_spec(game).players[1]
    run_dir = tmp_path / f"{game}-{largest}p-s{seed}"
    config = make_config(TINY | {"game": game, "num_players": largest, "seed": seed, "run_dir": str(run_dir),
                                 "pool_self_fraction": 0.5})
    results = train(config, log=lambda *_: None)
    final = results["final_evaluation"]
    for opponent in ("random", "rule"):
        assert final[opponent]["hands"] == TINY["final_eval_deals"] * largest, opponent  # every rotation
        assert 0 <= final[opponent]["wins"] <= final[opponent]["decided"] <= final[opponent]["hands"]
    assert len(_scalars(run_dir)["losses/policy_loss"]) == TINY["total_steps"] // TINY["rollout_size"]
    model, meta = load_checkpoint(run_dir / "best.pt", game, largest)
    assert meta["num_players"] == largest
    with pytest.raises(CheckpointError, match=f"{largest} players"):
        load_checkpoint(run_dir / "best.pt", game, 2)


def _losses(run_dir) -> list[tuple]:
    state = torch.load(run_dir / "checkpoint.pt", weights_only=True)["training_state"]
    return [(h["update"], h["policy_loss"], h["value_loss"]) for h in json.loads(state["history"])]


@pytest.mark.slow
def test_same_seed_same_losses_and_resume_continues_exactly(tmp_path, monkeypatch):
    """Same seed, same losses; a run interrupted after a checkpoint and resumed gives the same
    losses as the uninterrupted run (CPU, collection in-process)."""
    settings = TINY | {"bc_warm_start": False, "eval_every": 0}
    first = tmp_path / "first"
    train(make_config(settings | {"run_dir": str(first)}), log=lambda *_: None)
    again = tmp_path / "again"
    train(make_config(settings | {"run_dir": str(again)}), log=lambda *_: None)
    assert _losses(first) == _losses(again) and len(_losses(first)) == 4

    interrupted = tmp_path / "interrupted"
    from agents.training.workers import Station

    original = Station.ppo_update
    calls = []

    def stop_on_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(Station, "ppo_update", stop_on_third)
    with pytest.raises(KeyboardInterrupt):
        train(make_config(settings | {"run_dir": str(interrupted)}), log=lambda *_: None)
    monkeypatch.setattr(Station, "ppo_update", original)
    assert len(_losses(interrupted)) == 2
    assert cli_main(["--resume", str(interrupted)]) == 0
    assert _losses(interrupted) == _losses(first)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("values", "message"), [
    ({"gamma": 1.5}, r"field 'gamma': 1.5 is out of range"),
    ({"learning_rte": 0.1}, r"unknown field 'learning_rte' \(did you mean 'learning_rate'\?\)"),
    ({"total_steps": "many"}, r"field 'total_steps': 'many' is not an integer"),
    ({"network": "transformer"}, r"field 'network': 'transformer': expected one of card, mlp"),
    ({"game": "romi", "num_players": 5}, r"num_players=5 is out of range"),
    ({"shaping": "maybe"}, r"field 'shaping': 'maybe' is not true or false"),
    ({"minibatch_size": 4096, "rollout_size": 1024}, r"'minibatch_size' \(4096\) is larger"),
    ({"eval_opponents": ["rule", "alien"]}, r"eval_opponents"),
    ({"bc_teacher": "rule:hold_until=3"}, r"field 'bc_teacher': .*unknown setting 'hold_until=3'"),  # Indian: no table
    ({"game": "romi", "bc_teacher": "teacher"}, r"field 'bc_teacher': unknown agent spec 'teacher'"),
    ({"learning_rate": float("nan")}, r"not a finite number"),
    ({"total_steps": 16384, "rollout_size": 8192, "pool_max_snapshots": 3},
     r"field 'pool_max_snapshots' \(3\) is more"),
    ({"minibatch_size": 8, "rollout_size": 64, "num_workers": 9}, r"field 'minibatch_size' \(8\) is smaller"),
    ({"device": "tpu"}, r"field 'device': 'tpu': expected one of auto, cpu, cuda"),
    ({"pool_opponents": ["rule"]}, r"field 'pool_opponents': 'rule' is in the pool already"),
    ({"pool_opponents": ["random"]}, r"field 'pool_opponents': 'random' is in the pool already"),
    ({"game": "basic", "pool_opponents": ["rule:hold_until=3", "rule:hold_until=3"]},
     r"field 'pool_opponents': 'rule:hold_until=3' is in the pool already"),
    ({"pool_opponents": ["alien"]}, r"field 'pool_opponents': unknown agent spec 'alien'"),
    ({"pool_opponents_only": True}, r"field 'pool_opponents_only' is true but 'pool_opponents' is empty"),
    ({"mlp_hidden": [64, 0]}, r"field 'mlp_hidden': \[64, 0\]: every layer size must be >= 1"),
    ({"eval_opponents": "rule"}, r"field 'eval_opponents': 'rule' is not a list of str"),
    ({"card_layout": 2}, r"unknown field 'card_layout'"),
])
def test_config_errors_name_the_field(values, message):
    with pytest.raises(ConfigError, match=message):
        make_config(values)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_cuda_without_a_gpu_is_refused_before_training():
    with pytest.raises(ConfigError, match=r"field 'device': 'cuda', but torch sees no GPU"):
        make_config({"device": "cuda"})
    assert trainer_module.resolve_device(make_config({"device": "auto"})).type == "cpu"


@pytest.mark.slow
def test_a_snapshot_leaving_mid_hand_does_not_stop_the_run(tmp_path):
    """Checkpoints every 3 updates, a snapshot every 2, one kept: snapshots leave the pool while
    hands against them are still running (rollouts of 256 decisions are shorter than a hand's
    collection across 8 slots), and the run completes."""
    settings = TINY | {"total_steps": 256 * 9, "rollout_size": 256, "minibatch_size": 64, "checkpoint_every": 3,
                       "pool_snapshot_every": 2, "pool_max_snapshots": 1, "pool_self_fraction": 0.0,
                       "pool_rule_min": 1.0, "bc_warm_start": False, "eval_every": 0,
                       "run_dir": str(tmp_path / "run")}
    results = train(make_config(settings), log=lambda *_: None)
    assert results["updates"] == 9
    pool = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["training_state"]["pool"]
    assert pool["snapshots"] == ["snapshot-8"]


@pytest.mark.slow
def test_two_learning_processes_stay_identical_and_reproducible(tmp_path):
    """DD-PPO: two collecting processes average their gradients, so their replicas stay equal;
    the same seed gives the same losses again."""
    from agents.training import workers

    settings = TINY | {"num_workers": 2, "bc_warm_start": False, "eval_every": 0, "total_steps": 1024,
                       "value_warmup_updates": 0}
    config = make_config(settings | {"run_dir": str(tmp_path / "a")})
    both = workers.Workers(trainer_module.to_dict(config), trainer_module.model_config(config))
    try:
        both.set_state(trainer_module.Run(config, tmp_path / "a").model.state_dict(), None)
        both.reseed(1)
        both.collect(256)
        both.ppo_update(trainer_module.ppo_settings(config, 0, 2))
        replicas = both.get_state()
        for name, tensor in replicas[0]["model"].items():
            assert torch.equal(tensor, replicas[1]["model"][name]), name
    finally:
        both.close()
    train(make_config(settings | {"run_dir": str(tmp_path / "b")}), log=lambda *_: None)
    train(make_config(settings | {"run_dir": str(tmp_path / "c")}), log=lambda *_: None)
    assert _losses(tmp_path / "b") == _losses(tmp_path / "c")


def test_cli_reports_config_errors_before_training(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: indian\nnum_player: 3\n")
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["--config", str(bad)])
    assert exit_info.value.code == 2
    assert "unknown field 'num_player'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--config", str(tmp_path / "missing.yaml")])
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--resume", str(tmp_path)])
    assert "not a training run folder" in capsys.readouterr().err


@pytest.mark.slow
def test_resume_from_a_corrupt_checkpoint_names_it(tmp_path, capsys):
    run_dir = tmp_path / "run"
    train(make_config(TINY | {"run_dir": str(run_dir), "total_steps": 512, "bc_warm_start": False,
                              "eval_every": 0}), log=lambda *_: None)
    checkpoint = run_dir / "checkpoint.pt"
    import zipfile

    with zipfile.ZipFile(checkpoint) as archive:  # flip a byte inside the largest stored tensor
        member = max(archive.infolist(), key=lambda info: info.compress_size)
        start = member.header_offset + 30 + len(member.filename.encode()) + len(member.extra)
    intact = checkpoint.read_bytes()
    data = bytearray(intact)
    data[start + member.compress_size // 2] ^= 0xFF
    checkpoint.write_bytes(bytes(data))
    assert cli_main(["--resume", str(run_dir), "--total-steps", "1024"]) == 2
    assert "checkpoint.pt" in capsys.readouterr().err
    checkpoint.write_bytes(intact[:len(intact) // 2])  # and one cut short
    assert cli_main(["--resume", str(run_dir), "--total-steps", "1024"]) == 2
    assert "checkpoint.pt" in capsys.readouterr().err
    shutil.copyfile(run_dir / "final.pt", checkpoint)  # a policy without training state
    assert cli_main(["--resume", str(run_dir), "--total-steps", "1024"]) == 2
    assert "no training state" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--resume", str(run_dir), "--game", "basic"])
    assert "cannot change" in capsys.readouterr().err


def test_checkpoint_with_nan_weights_is_refused(tmp_path):
    from agents.policy import save_checkpoint

    model = build_network("indian", 2, {"kind": "card", "channels": 8, "global_size": 16, "layout": 2})
    with torch.no_grad():
        next(model.parameters()).fill_(float("nan"))
    path = save_checkpoint(tmp_path / "nan.pt", model, "indian", 2)
    with pytest.raises(CheckpointError, match="not finite"):
        load_checkpoint(path)


@pytest.mark.parametrize("game", ["basic", "romi", "indian"])
def test_payment_potential_is_what_the_seat_would_pay(game):
    """shaping_potential=payment reads from the observation exactly what the seat to act would pay
    if another player went out now: B5 every card in hand; R7 every card, or 80 before its first
    meld; Indian the I7 penalty, as the deadwood potential. Checked against the engine's state."""
    from rummy_env.games import game_spec

    venv = VectorGame(game, 4, 2, seed=3)
    venv.reset(3)
    payment, deadwood = Potential(game, 2, "payment"), Potential(game, 2, "deadwood")
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(250):
        for i in range(4):
            state = venv.state(i)
            seat = state.current
            if game == "indian":
                want = deadwood.penalty_of(venv.observations[i])
            elif game == "romi" and not state.opened[seat]:
                want = 80
            else:
                want = sum(v * n for v, n in zip(game_spec(game).values, state.hands[seat]))
            assert payment.penalty_of(venv.observations[i]) == want
            seen.add(bool(state.opened[seat]) if game == "romi" else True)
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks]))
    assert seen == ({True, False} if game == "romi" else {True})  # römi: before and after a first meld
    with pytest.raises(ValueError, match="shaping potential 'hand'"):
        Potential(game, 2, "hand")


@pytest.mark.parametrize("game", GAMES)
def test_batched_potential_equals_the_solver_row_by_row(game):
    """The deadwood potential of a batch (one batched solver call for the hands not yet seen)
    is the exact solver's answer for each row (I7, B5, R7), memoised or not."""
    from rummy_env.ruleset import make_ruleset

    venv = VectorGame(game, 8, 2, seed=5)
    venv.reset(5)
    rules = make_ruleset(game, 2)
    batched, rng = Potential(game, 2, "deadwood"), np.random.default_rng(1)
    hand = observation_layout(game, 2)["hand"]
    for step in range(120):
        observations = venv.observations.copy()
        got = batched.penalties(observations)
        again = batched.penalties(observations[::-1])  # every row memoised now, in another order
        want = [rules.deadwood(np.rint(row[hand]).astype(int).tolist()) for row in observations]
        assert got.tolist() == want and again.tolist() == want[::-1], step
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks]))


def test_a_central_learner_learns_what_the_collecting_process_learns(tmp_path, monkeypatch):
    """The GPU path (``--device cuda``: rollouts sent to a learner in the training process), run here
    on the CPU, gives the very losses of the default path (the learner in the collecting process)."""
    settings = TINY | {"bc_decisions": 600, "eval_every": 0, "oracle_decisions": 1024}
    train(make_config(settings | {"run_dir": str(tmp_path / "workers")}), log=lambda *_: None)
    monkeypatch.setattr(trainer_module, "central_learner",
                        lambda config, device: trainer_module.learner_here(config, "cpu"))
    train(make_config(settings | {"run_dir": str(tmp_path / "central")}), log=lambda *_: None)
    assert _losses(tmp_path / "central") == _losses(tmp_path / "workers")


def test_the_win_bonus_goes_to_the_winner_and_costs_the_others():
    """win_bonus adds b to the winner's last reward of the hand and takes b / (N − 1) from each other
    seat: the same actions, and the chains' rewards differ by exactly that (zero-sum)."""
    from agents.registry import make_agent

    def collect(bonus):
        collector = _collector("indian", players=3, shaping=False)
        collector.win_bonus = bonus
        return collector.collect(2000, make_agent("rule", make_ruleset("indian", 3)))  # the rule agent in every seat

    plain, bonused = collect(0.0), collect(0.3)
    np.testing.assert_array_equal(plain.actions, bonused.actions)
    difference = bonused.rewards - plain.rewards
    ends = np.flatnonzero(plain.done)
    assert np.allclose(np.delete(difference, ends), 0.0)
    assert set(np.round(difference[ends].astype(np.float64), 5).tolist()) <= {0.3, -0.15, 0.0}
    decided = [h for h in plain.hands if h[3] is not None]
    assert decided and np.isclose(difference[ends].sum(), 0.0, atol=1e-5)


@pytest.mark.parametrize("bonus", [0.0, 0.7])
def test_the_configured_win_bonus_reaches_the_collectors(bonus):
    """The run's ``win_bonus`` (the default, or 0 for points alone) is what each collecting station's
    collector pays, after every reseed (docs/training.md, the win bonus)."""
    from agents.training.workers import Station

    config = trainer_module.to_dict(make_config({"num_envs": 8, "num_workers": 0, "win_bonus": bonus}))
    station = Station(config, {"kind": "mlp", "hidden": [8]}, 0)
    for seed in (1, 2):
        station.reseed(seed)
        assert station.collector.win_bonus == bonus
    assert TrainConfig().win_bonus > 0  # the default trains on hands won as well as points


def test_the_panel_is_fixed_per_game_and_table():
    """The evaluation panel (docs/training.md, "The panel"): random and the rule agent always, the
    holding rule agent for the table-meld games (B3, R5), the shipped policy where one exists for
    that table size, and the search agent at 2 players only."""
    from agents.pretrained import shipped_for
    from agents.training.evaluate import expand, panel, panel_score

    assert panel("indian", 2) == ["random", "rule", "pretrained:indian", "search"]
    assert panel("basic", 2) == ["random", "rule", "rule:hold_until=3", "pretrained:basic", "search"]
    for game, players in (("indian", 6), ("basic", 4), ("romi", 3)):
        got = panel(game, players)
        assert "search" not in got and got[:2] == ["random", "rule"]
        assert (f"pretrained:{game}" in got) == shipped_for(game, players)
    assert expand(["rule", "panel"], "indian", 2) == ["rule", "random", "pretrained:indian", "search"]
    results = {"random": {"points": 90.0}, "rule": {"points": 10.0}, "pretrained:indian": {"points": -4.0},
               "search": {"points": -50.0}}
    assert panel_score(results) == 3.0  # random and search do not count


@pytest.mark.timeout(300)
def test_sigterm_to_the_process_group_checkpoints_and_leaves_no_worker(tmp_path):
    """``kill -TERM`` of the run's process group (a cluster scheduler's stop) is handled as Ctrl-C:
    the trainer writes a checkpoint with its workers' state, closes them and exits with 143."""
    import os
    import signal
    import subprocess
    import sys
    import time

    run_dir = tmp_path / "run"
    options = {"--total-steps": "400000", "--rollout-size": "512", "--minibatch-size": "128", "--num-envs": "8",
               "--num-workers": "1", "--bc-warm-start": "false", "--eval-every": "0", "--checkpoint-every": "1",
               "--channels": "8", "--global-size": "16", "--progress": "false", "--pool-snapshot-every": "0",
               "--eval-opponents": "random", "--run-dir": str(run_dir)}
    command = [sys.executable, str(Path(__file__).resolve().parents[1] / "train.py")]
    for flag, value in options.items():
        command += [flag, value]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    checkpoint = run_dir / "checkpoint.pt"
    deadline = time.monotonic() + 240
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, process.stdout.read()
    def update_of(path) -> int:
        counters = torch.load(path, weights_only=True)["training_state"]["counters"]
        return (json.loads(counters) if isinstance(counters, str) else counters)["update"]

    before = update_of(checkpoint)
    os.killpg(process.pid, signal.SIGTERM)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 143, output
    assert "interrupted: checkpoint written" in output
    assert update_of(checkpoint) >= before
    deadline = time.monotonic() + 20  # the group empties: no worker outlives the trainer
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        left = subprocess.run(["ps", "-o", "pid,args", "-g", str(process.pid)], capture_output=True, text=True).stdout
        pytest.fail(f"processes of the run outlived it:\n{left}")


def _one_worker_stations(tmp_path):
    """A collecting process with a network loaded and its hands seeded, ready to collect."""
    from agents.training import workers

    config = make_config(TINY | {"num_workers": 1, "bc_warm_start": False, "run_dir": str(tmp_path)})
    stations = workers.Workers(trainer_module.to_dict(config), trainer_module.model_config(config))
    stations.set_state(trainer_module.Run(config, tmp_path).model.state_dict(), None)
    stations.reseed(1)
    return stations


def _ctrl_c_in_the_next_wait(monkeypatch) -> None:
    """Ctrl-C arrives while the trainer next waits on its workers (once)."""
    import multiprocessing.connection

    wait = multiprocessing.connection.wait

    def interrupted(*arguments, **keywords):
        monkeypatch.setattr(multiprocessing.connection, "wait", wait)
        raise KeyboardInterrupt

    monkeypatch.setattr(multiprocessing.connection, "wait", interrupted)


def test_a_call_cut_short_by_ctrl_c_leaves_no_stale_reply(tmp_path, monkeypatch):
    """Ctrl-C while the trainer waits on its workers: the checkpoint's next call reads its own
    reply, not the one the interrupted call left in the pipe."""
    stations = _one_worker_stations(tmp_path)
    try:
        _ctrl_c_in_the_next_wait(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            stations.collect(64)  # its reply (a summary of the hands) is left unread
        state = stations.get_state(True)[0]
        assert isinstance(state, dict) and "model" in state
        assert stations.collect(64)[0].decisions >= 64  # and the calls after it pair up again
    finally:
        stations.close()


def test_ctrl_c_just_after_a_reply_is_read_waits_until_it_is_noted_read(tmp_path):
    """A real Ctrl-C the moment a worker's reply has come off the pipe, before the trainer notes it
    read: it is raised once the note is made, so the checkpoint's call after it gets its own reply
    (it used to wait for the one already taken: ``kill -TERM`` hung about one stop in ten)."""
    import signal
    import threading

    from agents.training.interrupts import INTERRUPTS

    stations = _one_worker_stations(tmp_path)
    connection = stations.connections[0]
    read = connection.recv

    def read_then_ctrl_c():
        del connection.recv  # once
        reply = read()
        signal.raise_signal(signal.SIGINT)
        return reply

    try:
        with INTERRUPTS.installed():
            connection.recv = read_then_ctrl_c
            with pytest.raises(KeyboardInterrupt):
                stations.reseed(2)
        answer = {}
        asking = threading.Thread(target=lambda: answer.update(state=stations.get_state()[0]), daemon=True)
        asking.start()
        asking.join(timeout=30)
        assert not asking.is_alive(), "the trainer waits for a reply it has already read"
        assert "model" in answer["state"]
    finally:
        stations.close(force=True)


def test_a_signal_in_a_held_step_is_raised_when_the_step_ends():
    """``Interrupts.held``: Ctrl-C and SIGTERM arriving inside the block let it finish, then raise
    (``Terminated`` for SIGTERM); outside a block they raise at once; the handlers before
    ``installed`` are put back."""
    import signal

    from agents.training.interrupts import Interrupts, Terminated

    interrupts = Interrupts()
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    steps = []
    with interrupts.installed():
        with pytest.raises(Terminated):
            with interrupts.held():
                signal.raise_signal(signal.SIGTERM)
                with interrupts.held():  # nested: raised only when the outer block ends
                    steps.append("inner")
                signal.raise_signal(signal.SIGINT)  # a second signal does not replace the first
                steps.append("outer")
        assert steps == ["inner", "outer"]
        with pytest.raises(KeyboardInterrupt) as caught:
            signal.raise_signal(signal.SIGINT)
            steps.append("not reached")
        assert caught.type is KeyboardInterrupt and steps == ["inner", "outer"]
        with interrupts.held():
            steps.append("quiet")  # no signal: nothing raised
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_closing_reaps_a_busy_worker_so_the_run_s_cpu_total_keeps_it(tmp_path, monkeypatch):
    """A worker still busy when the trainer closes the stations (after Ctrl-C, or slow to exit
    on a loaded machine) is killed and waited for: its CPU time then counts among the finished
    children, so the run's CPU total does not drop below the training process's own."""
    import resource

    stations = _one_worker_stations(tmp_path)
    _ctrl_c_in_the_next_wait(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        stations.collect(10_000_000)  # the worker goes on collecting for minutes
    processes = list(stations.processes)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    stations.close()
    assert all(p.exitcode is not None for p in processes)  # reaped, not left a zombie
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime > before


def test_a_worker_that_dies_is_reported_with_its_exit_code(tmp_path):
    """A collecting process killed from outside: the next call raises a ``WorkerError`` naming
    the process and how it ended (not an error of the trainer's own bookkeeping)."""
    import os
    import signal

    from agents.training import workers

    stations = _one_worker_stations(tmp_path)
    try:
        os.kill(stations.processes[0].pid, signal.SIGKILL)
        stations.processes[0].join()
        with pytest.raises(workers.WorkerError, match=r"collecting process 0 died \(exit code -9\)"):
            stations.reseed(2)
    finally:
        stations.close()


# ----------------------------------------------------------------------------- the first run


def test_the_next_commands_use_the_run_s_own_paths_and_parse(tmp_path):
    """The run's last lines: each ``python -m`` command names this run's best.pt and is accepted
    by its module's own parser; TensorBoard points at the run folder."""
    import importlib
    import shlex

    from agents.training.console import next_commands

    run_dir = tmp_path / "runs" / "basic_4p_s3"
    lines = next_commands(run_dir, "basic", 4).splitlines()
    assert lines[0] == "next:"
    commands = [shlex.split(line.split("#")[0]) for line in lines[1:]]
    modules = [c[2] for c in commands if c[:2] == ["python", "-m"]]
    assert modules == ["agents.arena", "agents.export", "rummy_apps.play"]
    for command in commands:
        if command[:2] == ["python", "-m"]:
            assert any(str(run_dir / "best.pt") in part for part in command), command
            arguments = importlib.import_module(command[2]).build_parser().parse_args(command[3:])
            assert getattr(arguments, "game", "basic") == "basic"
    assert ["tensorboard", "--logdir", str(run_dir)] in commands


def test_plain_progress_writes_lines_without_control_characters(capsys, monkeypatch):
    """Output that is not a terminal (a ``tee``d log) gets one plain line at the start, at most one
    per interval, and one at the end; a terminal gets tqdm's bar; ``progress: false`` nothing."""
    import io

    from agents.training import console

    monkeypatch.setattr(console, "PLAIN_INTERVAL_S", 0.0)
    make = console.progress_factory(True, io.StringIO())  # not a terminal
    with make(total=300, desc="PPO", unit="decision") as bar:
        assert isinstance(bar, console.PlainBar)
        for _ in range(3):
            bar.update(100)
            bar.set_postfix_str("1,234 learner decisions/s")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "PPO: 0/300 decisions (0%), 0 s"
    assert lines[-1].startswith("PPO: 300/300 decisions (100%)") and "1,234 learner decisions/s" in lines[-1]
    assert "\r" not in out and "\x1b" not in out
    terminal = io.StringIO()
    terminal.isatty = lambda: True
    assert not isinstance(console.progress_factory(True, terminal)(total=3), console.PlainBar)
    silent = console.progress_factory(False, io.StringIO())(total=3)
    assert not isinstance(silent, console.PlainBar) and silent.disable


def test_the_run_folder_readme_describes_its_files(tmp_path):
    from agents.training.console import write_run_readme

    write_run_readme(tmp_path)
    text = (tmp_path / "README.txt").read_text()
    for name in ("config.yaml", "checkpoint.pt", "best.pt", "final.pt", "results.json", "learning_curves.png",
                 "pinned/", f"--resume {tmp_path}"):
        assert name in text, name


def test_a_bad_flag_gets_a_short_error_naming_the_closest_option(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["--chanels", "64"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--chanels" in err and "--channels" in err and len(err.splitlines()) <= 15
    with pytest.raises(SystemExit):
        cli_main(["--shaping", "maybe"])
    assert "'maybe' is not true or false" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--gamma", "1.5"])
    assert "field 'gamma': 1.5 is out of range" in capsys.readouterr().err


def test_flags_keep_their_spelling_and_override_the_recipe(capsys):
    from agents.training.cli import parse

    config, options = parse(["--config", "indian-2p", "--shaping", "true", "--channels", "16",
                             "--eval-opponents", "rule", "random", "--mlp-hidden", "64", "32"])
    assert (config.shaping, config.channels, config.global_size) == (True, 16, 256)  # global_size: the recipe's
    assert config.eval_opponents == ["rule", "random"] and config.mlp_hidden == [64, 32]
    assert options.config == "indian-2p" and not options.print_config


def test_at_most_fifty_settings_each_a_documented_flag(capsys):
    import dataclasses

    names = [field.name for field in dataclasses.fields(TrainConfig)]
    assert len(names) <= 50
    with pytest.raises(SystemExit):
        cli_main(["--help"])
    help_text = capsys.readouterr().out
    for option in ("--config", "--resume", "--print-config", *("--" + n.replace("_", "-") for n in names)):
        assert option in help_text, option
    assert "(default: 0.995)" in help_text and "discount per decision of the same seat" in help_text


def test_the_learner_is_called_by_name_in_its_process_and_its_errors_come_back(tmp_path):
    """``Workers.NAME(*args)`` runs ``Station.NAME`` in each process and returns the results in
    worker order; an error there is raised here as a ``WorkerError`` with the remote traceback
    (and the processes are closed). With ``num_workers`` 0 the same calls reach a local station."""
    from agents.training import workers

    stations = _one_worker_stations(tmp_path)
    try:
        (summary,) = stations.collect(64)
        assert isinstance(summary, workers.Summary) and summary.decisions >= 64
        (first,) = stations.call("get_state", True, first_only=True)
        assert set(first) == {"model", "optimizer"}
        with pytest.raises(workers.WorkerError, match=r"(?s)collecting process 0 failed.*AttributeError.*no_such"):
            stations.no_such_method(1)
    finally:
        stations.close(force=True)
    config = make_config(TINY | {"run_dir": str(tmp_path)})
    local = workers.Workers(trainer_module.to_dict(config), trainer_module.model_config(config))
    local.reseed(1)
    (summary,) = local.collect(64)
    assert summary.decisions >= 64
    with pytest.raises(AttributeError, match="no_such_method"):
        local.no_such_method()
