"""The observation spec (``rummy_env/obs_spec.py``, ``docs/env.md`` "Observation").

The golden file (``tests/data/observations_golden.json.gz``, written by
``tests/data/record_observations.py`` before the spec replaced the hand-written layout) pins the
observation bytes: the compiled vector core and trained policies depend on them.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

import pytest

from agents.view import ObservationReader
from rummy_env.aec_env import raw_env
from rummy_env.encoding import ObservationEncoder, ObservationTracker, layout_for
from rummy_env.game import GameState

DATA = Path(__file__).resolve().parent / "data"


@cache
def golden() -> list[dict]:
    with gzip.open(DATA / "observations_golden.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)["cases"]


def case_id(case: dict) -> str:
    options = ",".join(f"{k}={v}" for k, v in case["options"].items())
    return f"{case['game']}-{case['players']}p" + (f"-{options}" if options else "")


def golden_cases():
    return [pytest.param(i, id=case_id(case)) for i, case in enumerate(golden())]


@pytest.fixture(autouse=True, scope="module")
def _recorder_on_path():
    """The recorder's own hashing (``record_observations.digest``), so both hash alike."""
    import sys

    sys.path.insert(0, str(DATA))
    yield
    sys.path.remove(str(DATA))


@pytest.mark.parametrize("index", golden_cases())
def test_observations_are_byte_identical_to_the_recorded_ones(index):
    from record_observations import digest, view_digest

    case = golden()[index]
    rules = GameState.new(case["game"], case["players"], **case["options"]).rules
    layout = layout_for(rules)
    assert layout.size == case["size"]
    assert {name: [s.start, s.stop] for name, s in layout.slices.items()} == case["slices"]
    assert digest(layout.low.tobytes() + layout.high.tobytes()) == case["bounds"]
    encoder = ObservationEncoder(rules)
    reader = ObservationReader(case["game"], case["players"], **case["options"])
    for i, entry in enumerate(case["states"]):
        state = GameState.from_dict(entry["state"])
        tracker = ObservationTracker(encoder)
        tracker.start(state)
        for seat, want in enumerate(entry["seats"]):
            obs = encoder.encode(state, seat, entry["match_totals"])
            assert digest(obs.tobytes()) == want["observation"], f"state {i}, seat {seat}"
            assert view_digest(reader.read(obs)) == want["view"], f"state {i}, seat {seat}: the reader"
            tracked = tracker.observe(state, seat, entry["match_totals"])
            assert digest(tracked.tobytes()) == want["observation"], f"state {i}, seat {seat}: the tracker"


@pytest.mark.parametrize("index", golden_cases())
def test_the_env_box_bounds_are_the_recorded_ones(index):
    from record_observations import digest

    case = golden()[index]
    env = raw_env(case["game"], case["players"], **case["options"])
    box = env.observation_space("player_0")["observation"]
    assert digest(box.low.tobytes() + box.high.tobytes()) == case["bounds"]
