"""Record observations of random play, so that a change to the encoding can be checked against them.

For each case (game, player count, rule options) plays 360 seeded uniformly random steps and keeps
every third state and every hand's last (its ``to_dict()``, history left out: the observation does
not read it), with, for every seat, the SHA-256 (first 20 hex digits) of the float32 observation
bytes and of the decoded ``View`` (``agents.view``), and that of the ``Box`` bounds. Every fourth
state is observed with match totals, so the ``match_scores`` part is covered too; three cases with
a short turn cap end hands cut off (G9).

    python tests/data/record_observations.py

``tests/test_observation_spec.py`` rebuilds each state with ``GameState.from_dict`` and checks the
encoder, the tracker (a seat's first look) and the reader still give the same bytes. The file was
recorded before the observation spec (``rummy_env/obs_spec.py``) replaced the hand-written layout.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents.view import ObservationReader  # noqa: E402
from rummy_env.ruleset import make_ruleset
from rummy_env.encoding import encode_observation, layout_for  # noqa: E402
from rummy_env.game import GameState  # noqa: E402

OUT = Path(__file__).with_name("observations_golden.json.gz")
CASES = [("indian", n, {}) for n in range(2, 7)]
CASES += [("indian", 2, {"wild_joker": True}), ("indian", 3, {"printed_jokers": 0})]
CASES += [("basic", n, {}) for n in range(2, 5)] + [("romi", n, {}) for n in range(2, 5)]
# short turn caps: hands cut off (G9), the turn entry at its top
CASES += [("indian", 2, {"max_turns": 30}), ("basic", 3, {"max_turns": 25}), ("romi", 2, {"max_turns": 20})]
STEPS = 360


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def view_digest(view) -> str:
    """The SHA-256 of a ``View``'s fields as canonical JSON (arrays as nested lists)."""
    fields = {name: (value.tolist() if isinstance(value, np.ndarray) else value) for name, value in vars(view).items()}
    return digest(json.dumps(fields, sort_keys=True).encode())


def totals_for(i: int, players: int) -> list[int] | None:
    return None if i % 4 else [37 * (p + 1) + 11 * i for p in range(players)]


def record_case(game: str, players: int, options: dict) -> dict:
    rng = random.Random(f"{game}:{players}:{sorted(options.items())}")
    reader = ObservationReader(make_ruleset(game, players, **options))
    states = []
    steps, hand = 0, 0
    while steps < STEPS:
        state = GameState.new(game, players, seed=f"golden:{hand}", first_player=hand % players, **options)
        hand += 1
        while steps < STEPS:
            if steps % 3 == 0 or state.is_over:
                data = state.to_dict()
                data["history"] = []
                totals = totals_for(len(states), players)
                seats = []
                for seat in range(players):
                    obs = encode_observation(state, seat, totals)
                    seats.append({"observation": digest(obs.tobytes()), "view": view_digest(reader.read(obs))})
                states.append({"state": data, "match_totals": totals, "seats": seats})
            steps += 1
            if state.is_over:
                break
            moves = state.legal_moves()
            state.apply(moves[rng.randrange(len(moves))])
    layout = layout_for(GameState.new(game, players, **options).rules)
    return {"game": game, "players": players, "options": options, "size": layout.size,
            "bounds": digest(layout.low.tobytes() + layout.high.tobytes()),
            "slices": {name: [s.start, s.stop] for name, s in layout.slices.items()}, "states": states}


def main() -> None:
    cases = [record_case(*case) for case in CASES]
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        json.dump({"cases": cases}, f, separators=(",", ":"))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {sum(len(c['states']) for c in cases)} states)")


if __name__ == "__main__":
    main()
