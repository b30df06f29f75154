"""The demo: plain seeded players play one hand of each game to its result (G10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rummy_env.demo import main, play_hand
from rummy_env.games import GAMES, game_spec


def test_G10_demo_is_reproducible_and_covers_every_game(capsys):
    main(["--seed", "5"])
    first = capsys.readouterr().out
    main(["--seed", "5"])
    assert capsys.readouterr().out == first
    for title in ("Indian Rummy", "Basic Rummy", "Indiai römi"):
        assert title in first
    main(["--seed", "6"])
    assert capsys.readouterr().out != first


@pytest.mark.parametrize("game", GAMES)
def test_the_demo_hands_end_with_a_winner_in_every_game_and_player_count(game):
    """Random play mostly stalemates (G8); the demo's players end hands with a declaration (I5)
    or by going out (B4, R6), so the demo shows how each game is won and scored."""
    wins = hands = 0
    for players in game_spec(game).player_counts:
        for seed in range(3):
            result = play_hand(game, players, seed).result
            hands += 1
            assert sum(result.rewards) == 0
            if result.winner is not None:
                wins += 1
                assert result.outcome in ("declare", "out") and result.payments[result.winner] == 0
                assert all(pay > 0 for p, pay in enumerate(result.payments) if p != result.winner)
    assert wins >= hands - 1, f"{hands - wins} of {hands} hands ended without a winner"  # random play: most


def test_the_default_demo_shows_three_winners(capsys):
    main([])
    out = capsys.readouterr().out
    assert out.count(" wins\n") == 3 and "stalemate" not in out


def test_train_py_help_runs():
    done = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "train.py"), "--help"],
                          capture_output=True, text=True, timeout=60)
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
