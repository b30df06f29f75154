"""Export to ONNX and TorchScript, and the torch-free ONNX agent (pretrained policies: tests/test_pretrained.py).

The exported graph must give the torch model's probabilities and values within 1e-5 on random
observations and masks (batch 1 and larger); the metadata beside it names the game, shapes and
the action table (cards in RULES G2 notation); bad files fail before any hand, naming the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.arena import ArenaConfig, run_arena
from agents.base import AgentError
from agents.export import (
    TOLERANCE, action_table, exported_outputs, export_model, export_policy, main as export_main, sample_inputs,
    torch_outputs,
)
from agents.onnx_agent import OnnxAgent, OnnxPolicy
from agents.policy import MaskedActorCritic, load_checkpoint, save_checkpoint
from agents.registry import make_agent
from rummy_env.ruleset import make_ruleset
from rummy_env.encoding import action_layout, num_actions, observation_size

ROOT = Path(__file__).resolve().parent.parent


def make_checkpoint(tmp_path: Path, game: str = "indian", players: int = 2, seed: int = 0,
                    name: str | None = None) -> Path:
    torch.manual_seed(seed)
    model = MaskedActorCritic(observation_size(game, players), num_actions(game), hidden=[32, 32])
    with torch.no_grad():  # sharpen the policy head so that probabilities differ visibly
        model.policy_head.weight.mul_(200.0)
    return save_checkpoint(tmp_path / (name or f"{game}{players}.pt"), model, game, players, {"learning_rate": 3e-4})


@pytest.fixture(scope="module")
def indian_onnx(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("onnx")
    model_path, _ = export_policy(make_checkpoint(folder), "onnx")
    return model_path


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
@pytest.mark.parametrize("game", ["indian", "romi"])
def test_exported_outputs_match_torch_within_1e5(tmp_path, fmt, game):
    checkpoint = make_checkpoint(tmp_path, game)
    model_path, json_path = export_policy(checkpoint, fmt)
    model, _ = load_checkpoint(checkpoint)
    for batch in (1, 5):
        observations, masks = sample_inputs(model.observation_size, model.num_actions, batch, seed=100 + batch)
        want_p, want_v = torch_outputs(model, observations, masks)
        got_p, got_v = exported_outputs(model_path, fmt, observations, masks)
        assert got_p.shape == (batch, model.num_actions) and got_v.shape == (batch,)
        assert np.max(np.abs(got_p - want_p)) <= TOLERANCE
        assert np.max(np.abs(got_v - want_v)) <= TOLERANCE
        assert np.all(got_p[masks == 0] == 0.0)  # masked actions have probability 0
        np.testing.assert_allclose(got_p.sum(axis=1), 1.0, atol=1e-5)
    meta = json.loads(json_path.read_text())
    assert meta["check"]["max_abs_difference"] <= TOLERANCE


def test_export_check_tolerance_is_enforced_and_recorded(tmp_path, monkeypatch):
    """An export that differs from torch by more than ``tolerance`` is removed with an error naming
    the difference; the bound used is written in the metadata; a bad bound is refused."""
    import agents.export as export_module

    checkpoint = make_checkpoint(tmp_path)
    real = export_module.exported_outputs
    monkeypatch.setattr(export_module, "exported_outputs",
                        lambda *a, **k: tuple(x + 3e-5 for x in real(*a, **k)))  # a 3e-5 disagreement
    with pytest.raises(AgentError, match=r"disagrees with .* by 3\.0\de-05 \(more than 1e-05\); removed"):
        export_policy(checkpoint, "onnx", tmp_path / "strict.onnx")
    assert not (tmp_path / "strict.onnx").exists()
    model_path, json_path = export_policy(checkpoint, "onnx", tmp_path / "loose.onnx", tolerance=5e-5)
    check = json.loads(json_path.read_text())["check"]
    assert check["tolerance"] == 5e-5 and 2.9e-5 < check["max_abs_difference"] <= 5e-5
    with pytest.raises(AgentError, match="tolerance -1.*between 0 and 1"):
        export_policy(checkpoint, "onnx", tmp_path / "bad.onnx", tolerance=-1)


def test_torchscript_accepts_float_masks_like_the_model(tmp_path):
    checkpoint = make_checkpoint(tmp_path, "basic")
    model_path, _ = export_policy(checkpoint, "torchscript")
    model, _ = load_checkpoint(checkpoint)
    observations, masks = sample_inputs(model.observation_size, model.num_actions, 3, seed=9)
    want = torch_outputs(model, observations, masks)
    got = exported_outputs(model_path, "torchscript", observations, masks.astype(np.float32))
    np.testing.assert_allclose(got[0], want[0], atol=TOLERANCE)


def test_metadata_names_game_shapes_and_action_table(tmp_path):
    model_path, json_path = export_policy(make_checkpoint(tmp_path, "romi"), "onnx", tmp_path / "out" / "p.onnx")
    assert json_path == tmp_path / "out" / "p.json" and model_path.is_file()
    meta = json.loads(json_path.read_text())
    assert (meta["game"], meta["num_players"]) == ("romi", 2)
    actions_count = num_actions("romi")
    assert meta["observation_size"] == observation_size("romi", 2) and meta["num_actions"] == actions_count
    assert [i["name"] for i in meta["inputs"]] == ["observations", "action_masks"]
    assert [o["name"] for o in meta["outputs"]] == ["probabilities", "values"]
    assert meta["inputs"][1] == {"name": "action_masks", "shape": ["batch", actions_count], "dtype": "int8",
                                 "meaning": meta["inputs"][1]["meaning"]}
    cut = action_layout("romi").blocks["take_cut"]
    assert meta["action_blocks"]["take_cut"] == [cut.start, cut.stop]  # R4: the cut-card move
    actions = meta["actions"]
    assert len(actions) == actions_count and actions[0] == "draw the stock top" and actions[2] == "discard As"
    assert actions[cut.start] == "take the cut card and go out"
    assert meta["checkpoint"]["config"] == {"learning_rate": 3e-4}
    # the same metadata travels inside the ONNX file
    policy = OnnxPolicy(model_path)
    assert (policy.game, policy.num_players) == ("romi", 2)


def test_action_table_words_follow_the_layout():
    table = action_table("indian")
    assert len(table) == 108
    assert table[action_layout("indian").blocks["declare"].start + 12] == "discard Ks and declare"  # I5
    basic = action_table("basic")
    assert basic[action_layout("basic").blocks["meld"].start].startswith("meld As Ah Ad")  # G3 set of aces


def test_export_is_generic_over_the_network(tmp_path):
    """Any module with forward(observations, masks) -> (masked logits, values) exports."""

    class Tiny(torch.nn.Module):
        def __init__(self, obs: int, actions: int):
            super().__init__()
            self.linear = torch.nn.Linear(obs, actions + 1)

        def forward(self, observations, masks):
            out = self.linear(observations)
            logits = out[:, :-1].masked_fill(masks == 0, torch.finfo(out.dtype).min)
            return logits, out[:, -1]

    game, players = "basic", 3
    meta = {"game": game, "num_players": players, "observation_size": observation_size(game, players),
            "num_actions": num_actions(game), "model": {"kind": "tiny"}, "config": {}}
    model = Tiny(meta["observation_size"], meta["num_actions"]).eval()
    path, _ = export_model(model, meta, tmp_path / "tiny.onnx", "onnx")
    agent = OnnxAgent.from_file(path, make_ruleset(game, players))
    observations, masks = sample_inputs(meta["observation_size"], meta["num_actions"], 4, seed=3)
    want = torch_outputs(model, observations, masks)[0].argmax(axis=1)
    assert agent.act_batch(observations, masks).tolist() == want.tolist()


def test_card_aware_network_exports(tmp_path):
    from agents import networks

    torch.manual_seed(0)
    model = networks.CardActorCritic("romi", 2).eval()
    with torch.no_grad():
        model.card_embedding.normal_()
    meta = {"game": "romi", "num_players": 2, "observation_size": observation_size("romi", 2),
            "num_actions": num_actions("romi"), "model": model.model_config, "config": {}}
    path, sidecar = export_model(model, meta, tmp_path / "card.onnx", "onnx")
    assert json.loads(sidecar.read_text())["check"]["max_abs_difference"] <= TOLERANCE
    checkpoint = save_checkpoint(tmp_path / "card.pt", model, "romi", 2, {})  # a checkpoint of the card network
    for fmt in ("onnx", "torchscript"):
        exported, _ = export_policy(checkpoint, fmt)
        observations, masks = sample_inputs(meta["observation_size"], meta["num_actions"], 1, seed=4)
        want = torch_outputs(model, observations, masks)
        got = exported_outputs(exported, fmt, observations, masks)
        assert max(float(np.max(np.abs(w - g))) for w, g in zip(want, got)) <= TOLERANCE


def test_onnx_agent_plays_the_same_actions_as_the_torch_policy(tmp_path, indian_onnx):
    checkpoint = indian_onnx.with_suffix(".pt")
    torch_agent = make_agent(f"ppo:{checkpoint}", make_ruleset("indian", 2))
    onnx_agent = make_agent(f"onnx:{indian_onnx}", make_ruleset("indian", 2))
    observations, masks = sample_inputs(observation_size("indian", 2), 108, 64, seed=5)
    assert onnx_agent.act_batch(observations, masks).tolist() == torch_agent.act_batch(observations, masks).tolist()
    for row in range(8):
        assert onnx_agent.act(observations[row], masks[row]) == torch_agent.act(observations[row], masks[row])


def test_onnx_sampling_agent_is_seeded_and_only_picks_legal_actions(indian_onnx):
    agent = make_agent(f"onnx-sample:{indian_onnx}", make_ruleset("indian", 2), seed=1)
    observations, masks = sample_inputs(observation_size("indian", 2), 108, 200, seed=6)
    first = agent.act_batch(observations, masks)
    assert all(masks[i, a] for i, a in enumerate(first))
    agent.reset(seed=1)
    again = agent.act_batch(observations, masks)
    agent.reset(seed=2)
    assert first.tolist() == again.tolist() != agent.act_batch(observations, masks).tolist()


def test_onnx_agent_refuses_an_all_zero_mask(indian_onnx):
    agent = make_agent(f"onnx:{indian_onnx}", make_ruleset("indian", 2))
    with pytest.raises(AgentError, match="all-zero action mask"):
        agent.act(np.zeros(observation_size("indian", 2), np.float32), np.zeros(108, np.int8))


def test_onnx_agent_plays_in_the_arena(indian_onnx):
    config = ArenaConfig(game="indian", agents=(f"onnx:{indian_onnx}", "random"), hands=4, seed=3)
    records = run_arena(config, progress=False)
    assert len(records) == 4 and all(r["outcome"] in ("declare", "stalemate", "cut_off") for r in records)


def test_onnx_agent_imports_no_torch(indian_onnx):
    """With torch made unimportable, onnx: agents are built and play whole hands in the arena."""
    script = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None  # any "import torch" now fails
        from agents.arena import ArenaConfig, run_arena
        config = ArenaConfig(game="indian", agents=("onnx:{indian_onnx}", "rule"), hands=2, seed=1)
        records = run_arena(config, progress=False)
        assert len(records) == 2, records
        assert "torch" not in [m for m in sys.modules if sys.modules[m] is not None], "torch was imported"
        print("played", len(records))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "played 2" in done.stdout


def test_embed_example_runs_with_numpy_and_onnxruntime_only(indian_onnx):
    done = subprocess.run([sys.executable, "-c", "import sys; sys.modules['torch'] = None; "
                           "import runpy; sys.argv = ['embed_onnx.py', sys.argv[1]]; "
                           "runpy.run_path('examples/embed_onnx.py', run_name='__main__')", str(indian_onnx)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "chose action" in done.stdout


# ----------------------------------------------------------------------------- bad input


def test_export_errors_name_the_file(tmp_path, capsys):
    with pytest.raises(AgentError, match="missing.pt.*no such file"):
        export_policy(tmp_path / "missing.pt")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    with pytest.raises(AgentError, match="garbage.pt.*not a rummy-env policy checkpoint"):
        export_policy(garbage)
    checkpoint = make_checkpoint(tmp_path)
    with pytest.raises(AgentError, match="trained for 'indian' with 2 players, not 'romi'"):
        export_policy(checkpoint, game="romi")
    with pytest.raises(SystemExit) as stop:
        export_main([str(garbage)])
    assert stop.value.code == 2 and "garbage.pt" in capsys.readouterr().err


def test_onnx_errors_name_the_file_and_the_mismatch(tmp_path, indian_onnx):
    with pytest.raises(AgentError, match="nothing.onnx.*no such file"):
        make_agent(f"onnx:{tmp_path / 'nothing.onnx'}", make_ruleset("indian", 2))
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(indian_onnx.read_bytes()[:1000])
    with pytest.raises(AgentError, match="corrupt.onnx.*not a loadable ONNX model"):
        make_agent(f"onnx:{corrupt}", make_ruleset("indian", 2))
    with pytest.raises(AgentError, match=r"exported for 'indian' with 2 players, not 'basic' with 2 players"):
        make_agent(f"onnx:{indian_onnx}", make_ruleset("basic", 2))
    with pytest.raises(AgentError, match=r"exported for 'indian' with 2 players, not 'indian' with 3 players"):
        make_agent(f"onnx:{indian_onnx}", make_ruleset("indian", 3))
    with pytest.raises(AgentError, match="expected onnx:PATH"):
        make_agent("onnx:", make_ruleset("indian", 2))


def test_onnx_without_metadata_is_checked_by_its_shapes(tmp_path):
    """A foreign ONNX file with the right names but the wrong width is refused by shape."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    obs = helper.make_tensor_value_info("observations", TensorProto.FLOAT, ["batch", 10])
    mask = helper.make_tensor_value_info("action_masks", TensorProto.INT8, ["batch", 108])
    probabilities = helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 108])
    values = helper.make_tensor_value_info("values", TensorProto.FLOAT, ["batch"])
    graph = helper.make_graph([
        helper.make_node("Cast", ["action_masks"], ["probabilities"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["observations"], ["values"], axes=[1], keepdims=0),
    ], "foreign", [obs, mask], [probabilities, values])
    path = tmp_path / "foreign.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), path)
    with pytest.raises(AgentError, match=r"foreign.onnx.*input 'observations' has shape \['batch', 10\]; "
                                         r"'indian' with 2 players needs \[batch, 488\]"):
        make_agent(f"onnx:{path}", make_ruleset("indian", 2))
    with pytest.raises(AgentError, match="no metadata names its game"):
        OnnxPolicy(path)


def test_onnx_policy_takes_int8_bool_or_float_masks(indian_onnx):
    policy = OnnxPolicy(indian_onnx, "indian", 2)
    observations, masks = sample_inputs(observation_size("indian", 2), 108, 3, seed=8)
    want, _ = policy(observations, masks)
    for other in (masks.astype(bool), masks.astype(np.float32), masks.astype(np.int64)):
        np.testing.assert_array_equal(policy(observations, other)[0], want)


def test_bench_export_prints_per_action_times(capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_export

    figures = bench_export.main(["--games", "indian", "--calls", "5", "--runs", "1"])
    row = figures["indian"]
    assert row["onnx_agent_us"] > 0 and row["onnx_agent_cpu_us"] >= 0 and row["parameters"] > 0
    out = capsys.readouterr().out
    assert "µs per action at batch 1" in out and "indian" in out


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_every_game_ships_a_pretrained_policy_that_plays_without_torch(game):
    """pretrained:GAME loads right after installation with torch unimportable and plays whole hands
    in the arena; its model card states its results on the evaluation panel (``agents.panel``, the
    policy it replaced when it replaced one), 2,000 duplicate-dealt hands each but the search agent,
    with intervals that hold the rate, and the policy matches the game's shapes."""
    import agents.pretrained as pretrained
    from agents.panel import is_search, panel

    assert game in pretrained.shipped()
    card = pretrained.model_card(game)
    assert card["game"] == game and card["num_players"] == 2
    expected = [spec for spec in panel(game, 2) if spec != f"pretrained:{game}"]
    if card["replaces"] is not None:
        expected.insert(-1, "previous")
    assert [row["opponent"] for row in card["arena"]] == expected
    for row in card["arena"]:
        assert row["hands"] == (50 if is_search(row["opponent"]) else 2000)
        assert row["win_rate_low"] <= row["win_rate"] <= row["win_rate_high"]
    script = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None
        from agents.arena import ArenaConfig, run_arena
        records = run_arena(ArenaConfig(game="{game}", agents=("pretrained:{game}", "random"), hands=2, seed=5),
                            progress=False)
        print(len(records), sorted(set(r["outcome"] for r in records)))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2 ")
