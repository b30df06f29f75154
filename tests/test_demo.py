"""The main job's demo: seeded random agents play one hand of each game (G10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rummy_env.demo import main, play_random_hand


def test_G10_demo_is_reproducible_and_covers_every_game(capsys):
    main(["--seed", "5"])
    first = capsys.readouterr().out
    main(["--seed", "5"])
    assert capsys.readouterr().out == first
    for title in ("Indian Rummy", "Basic Rummy", "Indiai römi"):
        assert title in first
    main(["--seed", "6"])
    assert capsys.readouterr().out != first


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_random_hand_ends_with_a_result(game):
    state = play_random_hand(game, 2, seed=3)
    assert state.is_over and sum(state.result.rewards) == 0


def test_train_py_help_runs():
    done = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "train.py"), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--seed" in done.stdout


def test_I1_B1_R1_five_players_play_indian_and_skip_the_games_that_seat_four(capsys):
    assert main(["--players", "5", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "Indian Rummy, 5 players, seed 1:" in out
    assert "Basic Rummy: skipped: num_players=5 is out of range for 'basic': expected 2..4" in out
    assert "Indiai römi: skipped: num_players=5 is out of range for 'romi': expected 2..4" in out


@pytest.mark.parametrize("players", ["1", "7"])
def test_a_player_count_no_game_seats_is_an_error_naming_it(players, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--players", players])
    assert exit_info.value.code == 2
    assert f"--players {players}: no game seats that many" in capsys.readouterr().err


def test_help_names_the_command_that_runs_it():
    done = subprocess.run([sys.executable, "-m", "rummy_env.demo", "--help"], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).parents[1])
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m rummy_env.demo ")


def test_help_names_the_console_script_when_run_as_one(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/rummy-demo"])
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.startswith("usage: rummy-demo ")
