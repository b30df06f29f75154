"""Bad input to the arena and its agents: refused before any game is played, naming the problem."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rummy_env.ruleset import make_ruleset
from agents import arena
from agents.arena import ArenaConfig, default_workers
from agents.base import AgentError
from agents.registry import make_agent

ROOT = Path(__file__).resolve().parents[1]
SMALL_RUN = ["--game", "basic", "--agents", "random", "rule", "--hands", "2", "--workers", "1", "--no-progress"]


@pytest.fixture
def played(monkeypatch):
    """The deals the arena plays (none are played: each call is only recorded)."""
    calls: list = []
    monkeypatch.setattr(arena, "play_deals", lambda *args, **kwargs: calls.append(args) or [])
    return calls


# ----------------------------------------------------------------------------- output paths


def test_outputs_into_missing_folders_are_written_after_creating_them(tmp_path):
    out = tmp_path / "new" / "folder"
    arena.run_cli([*SMALL_RUN, "--csv", str(out / "r.csv"), "--json", str(out / "deeper" / "r.json"),
                   "--plot", str(out / "r.png")])
    assert (out / "r.csv").read_text().startswith("agent,")
    assert (out / "deeper" / "r.json").read_text().startswith("{")
    assert (out / "r.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("option", ["--csv", "--json", "--plot"])
def test_an_output_path_that_is_a_folder_is_refused_before_any_game(option, tmp_path, played, capsys):
    with pytest.raises(SystemExit) as exit_info:
        arena.main([*SMALL_RUN, option, str(tmp_path)])
    assert exit_info.value.code == 2
    assert f"{option} {tmp_path}: is a folder" in capsys.readouterr().err
    assert played == []


@pytest.mark.parametrize("name", ["chart", "chart.txt"])
def test_a_plot_name_without_an_image_suffix_is_refused_rather_than_renamed(name, tmp_path, played, capsys):
    with pytest.raises(SystemExit):
        arena.main([*SMALL_RUN, "--plot", str(tmp_path / name)])
    assert "expected a file name ending .png" in capsys.readouterr().err
    assert played == [] and not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------- agent settings


@pytest.mark.parametrize("spec, named", [
    ("search:worlds=0", "worlds=0"),
    ("search:candidates=-1", "candidates=-1"),
    ("search:min_worlds=0", "min_worlds=0"),
    ("search:max_rollout_turns=0", "max_rollout_turns=0"),
    ("search:worlds=2.5", "worlds=2.5"),
    ("search:z=nan", "z='nan'"),
    ("rule:near_weight=nan", "near_weight='nan'"),
    ("rule:danger_weight=inf", "danger_weight='inf'"),
    ("rule:max_outs=-1", "max_outs=-1"),
])
def test_agent_settings_out_of_range_are_refused_naming_them(spec, named):
    with pytest.raises(AgentError, match=named):
        make_agent(spec, make_ruleset("indian"))


def test_the_cli_refuses_a_bad_setting_before_any_game(played, capsys):
    with pytest.raises(SystemExit) as exit_info:
        arena.main(["--game", "indian", "--agents", "rule", "search:worlds=0", "--hands", "4"])
    assert exit_info.value.code == 2
    assert "worlds=0" in capsys.readouterr().err and played == []


def test_settings_in_range_still_make_agents():
    assert make_agent("search:worlds=1,candidates=1,z=0", make_ruleset("basic")).worlds == 1
    assert make_agent("rule:near_weight=0,max_outs=0", make_ruleset("romi")).near_weight == 0


# ----------------------------------------------------------------------------- mixed tables


@pytest.mark.parametrize("game, count, named", [
    ("indian", 7, "a table of 7 agents: Indian Rummy seats 2 to 6 players (I1)"),
    ("basic", 5, "a table of 5 agents: Basic Rummy seats 2 to 4 players (B1)"),
    ("romi", 1, "a table of 1 agent: Indiai römi seats 2 to 4 players (R1)"),
])
def test_a_table_with_more_agents_than_the_game_seats_is_refused_naming_its_range(game, count, named, played, capsys):
    with pytest.raises(SystemExit) as exit_info:
        arena.main(["--game", game, "--agents", *(["random"] * count), "--table", "--hands", "4"])
    assert exit_info.value.code == 2
    assert named in capsys.readouterr().err and played == []


def test_a_table_whose_seats_and_agents_differ_is_refused(played, capsys):
    with pytest.raises(SystemExit):
        arena.main(["--game", "basic", "--agents", "rule", "rule", "random", "--table", "--players", "4"])
    assert "a table of 3 agents at 4 seats" in capsys.readouterr().err and played == []
    with pytest.raises(SystemExit):  # the round robin names the game's range too
        arena.main(["--game", "basic", "--agents", "rule", "random", "--players", "5"])
    assert "num_players=5 is out of range for 'basic': expected 2..4" in capsys.readouterr().err and played == []


@pytest.mark.parametrize("seat", [0, 2, 3])
def test_a_checkpoint_for_another_player_count_is_refused_at_any_seat_naming_it(seat, tmp_path, played, capsys):
    torch = pytest.importorskip("torch")
    from agents.policy import build_network, save_checkpoint

    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "two.pt", build_network("indian", 2, {"kind": "mlp", "hidden": [8]}),
                           "indian", 2)
    agents = ["rule", "random", "rule", "random"]
    agents[seat] = f"ppo:{path}"
    with pytest.raises(SystemExit) as exit_info:
        arena.main(["--game", "indian", "--agents", *agents, "--table", "--hands", "4"])
    assert exit_info.value.code == 2
    assert (f"checkpoint {str(path)!r} was trained for 'indian' with 2 players, not 'indian' with 4 players"
            in capsys.readouterr().err)
    assert played == []


def test_an_exported_policy_for_another_game_is_refused_naming_it(tmp_path, played, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from agents.export import export_policy
    from agents.policy import build_network, save_checkpoint

    checkpoint = save_checkpoint(tmp_path / "romi.pt", build_network("romi", 3, {"kind": "mlp", "hidden": [8]}),
                                 "romi", 3)
    model, _ = export_policy(checkpoint, "onnx")
    with pytest.raises(SystemExit):
        arena.main(["--game", "basic", "--agents", "rule", "random", f"onnx:{model}", "--table", "--hands", "3"])
    assert (f"ONNX policy {str(model)!r} was exported for 'romi' with 3 players, not 'basic' with 3 players"
            in capsys.readouterr().err)
    assert played == []


# ----------------------------------------------------------------------------- help, workers, entry point


def test_help_shows_percent_once_and_every_agent_spec(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/usr/lib/python3/agents/arena.py"])
    with pytest.raises(SystemExit):
        arena.main(["--help"])
    text = capsys.readouterr().out
    assert text.startswith("usage: python -m agents.arena")
    assert "95% intervals" in text and "%%" not in text
    assert "ppo:PATH" in text and "ppo-sample:PATH" in text


def test_help_names_the_console_script_when_run_as_one(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/rummy-arena"])
    with pytest.raises(SystemExit):
        arena.main(["--help"])
    assert capsys.readouterr().out.startswith("usage: rummy-arena")


def test_main_returns_an_exit_status_for_console_scripts():
    assert arena.main(SMALL_RUN) == 0


@pytest.mark.parametrize("hands, cores, workers",
                         [(10, 16, 1), (150, 16, 1), (2000, 2, 2), (2000, 64, 8), (400, 64, 4)])
def test_default_workers_grow_with_the_run_up_to_the_cores(hands, cores, workers):
    config = ArenaConfig(game="indian", agents=("random", "rule"), hands=hands)
    assert default_workers(config, cores=cores) == workers


def test_agents_and_arena_work_where_torch_and_tensorboard_are_not_installed():
    # what a light install (without the [train] extra) has: no torch, no tensorboard
    script = textwrap.dedent("""
        import sys
        class NotInstalled:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "tensorboard"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, NotInstalled())
        import rummy_env
        from rummy_env import rules
        from agents import arena
        from agents.registry import make_agent
        from rummy_env.ruleset import make_ruleset
        for spec in ("random", "rule", "search:worlds=1"):
            make_agent(spec, make_ruleset("indian"))
        config = arena.ArenaConfig(game="basic", agents=("random", "rule"), hands=2)
        arena._init_worker(config)
        records = arena.run_arena(config, workers=2, progress=False)
        env = rummy_env.env("romi")
        env.reset(seed=0)
        assert rules.is_meld("indian", "Qh Kh Ah") and len(records) == 2
        print("light", "torch" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["light", "False"]
