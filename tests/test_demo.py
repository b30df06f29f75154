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
