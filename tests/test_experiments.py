"""The probes in experiments/: each still runs, measures what it says, and refuses bad options."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

import duplicate_luck  # noqa: E402
import romi_random_races  # noqa: E402
import search_worlds  # noqa: E402
from rummy_env.scenario import make_state  # noqa: E402


@pytest.mark.parametrize(("hand", "stock", "turns", "possible"), [
    # 12 cards in melds and one loose: a drawn card that fits lets the last discard go out (R6)
    ("2h 3h 4h 5h 7c 7d 7s Tc Jc Qc Kc Ac 9d", "8s Ts 2d 6h", 1, True),
    # nothing in the hand melds: one turn cannot go out, whatever comes
    ("2h 5c 8d Js 3s 6h 9c Qd 4d 7s Tc Kh Ad", "8s Ts 2d 6d", 1, False),
    # ...and neither can two turns, with these draws (every other stock card is the seat's)
    ("2h 5c 8d Js 3s 6h 9c Qd 4d 7s Tc Kh Ad", "8s Ts 2d 6d 5d 5s", 2, False),
])
def test_romi_races_clairvoyant_test_counts_cards_outside_melds(hand, stock, turns, possible):
    """R4, R6: by its own turn t a seat has made t discards; going out needs the rest melded."""
    state = make_state("romi", [hand, "2s 3s 4s"], discard="Kd", stock=stock, cut_card="Qs")
    assert romi_random_races.could_go_out_by(state, 0, turns) is possible


def test_romi_races_counts_only_lost_hands(capsys):
    (row,) = romi_random_races.main(["--agents", "rule", "--hands", "40", "--seed", "3"])
    assert 0 <= row["beyond"] <= row["lost"] <= row["decided"] <= 40
    assert "lost with no stock-clairvoyant way out first" in capsys.readouterr().out


@pytest.mark.parametrize("game", ["indian", "basic"])
def test_duplicate_luck_a_deterministic_agent_replays_its_own_hands(game):
    """The rule agent against itself: the swapped hand is the same hand, so B's points from A's
    cards are A's (ρ = 1, nothing left to a duplicate baseline) and A gains nothing overall."""
    pairs = duplicate_luck.mirrored_points(game, ("rule", "rule"), 24, seed=2)
    assert pairs.shape == (12, 3)
    np.testing.assert_array_equal(pairs[:, 0], pairs[:, 1])
    figures = duplicate_luck.luck_figures(pairs)
    assert figures["rho"] == pytest.approx(1.0) and figures["sd_left_by_baseline"] == pytest.approx(0.0, abs=1e-6)
    assert figures["mean"] == pytest.approx(0.0) and figures["sd"] > 0


def test_duplicate_luck_figures_from_known_pairs(capsys):
    """ρ and what it leaves, on pairs built with a known correlation; bad options refused."""
    rng = np.random.default_rng(0)
    luck = rng.normal(size=20_000)
    own, replayed = luck + rng.normal(size=luck.size), luck + rng.normal(size=luck.size)  # ρ = 1/2
    figures = duplicate_luck.luck_figures(np.stack([own, replayed, -replayed], axis=1))
    assert figures["rho"] == pytest.approx(0.5, abs=0.02)
    assert figures["variance_kept_by_pairing"] == pytest.approx(0.5, abs=0.02)
    assert figures["sd_left_by_baseline"] == pytest.approx(own.std() * math.sqrt(0.75), rel=0.02)
    for argv in (["--hands", "2"], ["--agents", "nope", "rule"], ["--agents", "lookahead", "rule", "--game", "basic"]):
        with pytest.raises(SystemExit):
            duplicate_luck.main(argv)
    assert "lookahead" in capsys.readouterr().err


def test_search_worlds_plays_each_world_model_on_the_same_deals(capsys):
    """experiments/search_worlds.py: one line per mode, on the same duplicate deals; the policy alone
    (none) repeats itself exactly, and a bad --deals is refused."""
    argv = ["--game", "basic", "--modes", "none", "uniform", "true", "--deals", "2",
            "--budget", "worlds=2,candidates=2,depth=0"]
    assert search_worlds.main(argv) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "decided hands" in line]
    assert [line.split()[0] for line in lines] == ["none", "uniform", "true"]
    search_worlds.main(argv[:3] + ["none", "--deals", "2"])
    again = [line for line in capsys.readouterr().out.splitlines() if "decided hands" in line]
    assert again[0].rsplit(",", 1)[0] == lines[0].rsplit(",", 1)[0]  # the same hands, the time apart
    with pytest.raises(SystemExit):
        search_worlds.main(["--deals", "0"])
