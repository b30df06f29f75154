"""The observation spec (``rummy_env/obs_spec.py``, ``docs/env.md`` "Observation").

The golden file (``tests/data/observations_golden.json.gz``, written by
``tests/data/record_observations.py`` before the spec replaced the hand-written layout) pins the
observation bytes: the compiled vector core and trained policies depend on them.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from agents.view import ObservationReader
from rummy_env.ruleset import make_ruleset
from rummy_env import obs_spec
from rummy_env.aec_env import raw_env
from rummy_env.encoding import EncodingError, ObservationEncoder, ObservationTracker, layout_for
from rummy_env.game import GameState

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


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
    reader = ObservationReader(make_ruleset(case["game"], case["players"], **case["options"]))
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


# ----------------------------------------------------------------------------- the spec drives everything


def test_the_docs_table_is_the_one_the_spec_generates():
    text = obs_spec.DOCS_PAGE.read_text(encoding="utf-8")
    assert obs_spec.docs_section(text) == obs_spec.markdown_table(), (
        "docs/env.md's observation table is out of date: run python -m rummy_env.obs_spec --write-docs")


@pytest.mark.parametrize("game, players", [("indian", 2), ("indian", 5), ("basic", 3), ("romi", 2), ("romi", 4)])
def test_every_plane_is_written_at_its_size_and_read_into_its_view_fields(game, players):
    rules = GameState.new(game, players).rules
    layout = layout_for(rules)
    encoder = ObservationEncoder(rules)
    state = GameState.new(game, players, seed=5)
    written = 0
    for entry in layout.planes:
        part = layout.slices[entry.name]
        size = part.stop - part.start
        assert size == obs_spec.plane_size(entry, game, players)
        if entry.write is None:  # written with the plane before it (the table, read once)
            assert entry.written_with is not None and entry.written_with in layout.slices
            continue
        data = entry.write(encoder, state, 0)
        follower = [p for p in layout.planes if p.written_with == entry.name]
        assert len(data) == size + sum(layout.slices[p.name].stop - layout.slices[p.name].start for p in follower)
        written += len(data)
        bound = np.asarray(entry.high(rules), np.float32)
        assert bound.shape in ((), (entry.width,)), entry.name
    assert written == layout.size
    reader = ObservationReader(make_ruleset(game, players))
    fields = [f.name for f in dataclasses.fields(reader.read(encoder.encode(state, 0)))]
    assert fields == [name for entry in obs_spec.OBSERVATION_PLANES for name, *_ in entry.view]


@pytest.mark.parametrize("keep", [obs_spec.MOVES, obs_spec.MATCH])
def test_the_tracker_refuses_a_plane_it_has_no_code_to_keep(monkeypatch, keep):
    extra = dataclasses.replace(obs_spec.plane("hand"), name="hand_again", keep=keep)
    monkeypatch.setattr(obs_spec, "OBSERVATION_PLANES", obs_spec.OBSERVATION_PLANES + (extra,))
    rules = GameState.new("basic", 2).rules
    layout_for.cache_clear()  # layouts are cached per rule set: drop them on both sides of the change
    try:
        with pytest.raises(EncodingError, match="hand_again"):
            ObservationTracker(ObservationEncoder(rules))
    finally:
        layout_for.cache_clear()


ADD_A_PLANE = '''
import dataclasses, random
import numpy as np
from rummy_env import obs_spec
from rummy_env.cards import NUM_TYPES

# the one edit: a plane holding the stock's bottom card (hidden information, but easy to check)
def write(enc, state, observer):
    return obs_spec.one_hot(state.stock[0] if state.stock else -1)

def read(counts, obs, part, reader):
    plane = counts[part].tolist()
    return plane.index(1) if 1 in plane else -1

obs_spec.OBSERVATION_PLANES = obs_spec.OBSERVATION_PLANES + (obs_spec.Plane(
    "stock_bottom", NUM_TYPES, obs_spec.ONE, lambda spec: True, lambda rules: 1.0, write, obs_spec.OBSERVE,
    "one-hot of the stock's bottom card", read, (("stock_bottom", int, -1, "The stock's bottom card."),)),)

from agents.view import ObservationReader
from rummy_env.aec_env import raw_env
from rummy_env.ruleset import make_ruleset
from rummy_env.encoding import encode_observation, observation_size

for game, size in (("indian", 488), ("basic", 1391), ("romi", 2451)):
    assert observation_size(game, 2) == size + NUM_TYPES
    env = raw_env(game, 2)
    assert env.observation_space("player_0")["observation"].shape == (size + NUM_TYPES,)
    env.reset(seed=3)
    rng = random.Random(3)
    reader = ObservationReader(make_ruleset(game, 2))
    for step in range(300):
        for seat, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)["observation"]
            assert np.array_equal(obs, encode_observation(env.game_state, seat)), (game, step)
            stock = env.game_state.stock
            assert reader.read(obs).stock_bottom == (stock[0] if stock else -1)
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.reset()
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.randrange(legal.size)]))
assert "| `stock_bottom` " in obs_spec.markdown_table()
print("ok")
'''


def test_adding_a_plane_is_one_entry_in_the_spec():
    """A plane added to ``OBSERVATION_PLANES`` alone reaches the layout, the Box, the encoder, the
    tracker (equal to the encoder at every step), the reader and the docs table."""
    done = subprocess.run([sys.executable, "-c", ADD_A_PLANE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
