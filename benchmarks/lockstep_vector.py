"""The numba VectorGame against the Python one over many hands: the long form of the lockstep
cases of ``tests/test_vector_compiled.py``, on the same driver (``tests/vector_lockstep.py``).

    python benchmarks/lockstep_vector.py [--games indian basic romi] [--steps 20000] [--envs 32]
                                         [--players 2 3 4 5 6]

Indian, for each number of players: whole hands (stock rebuilt, stalemates, declarations from
loaded hands), short hands cut off by the turn cap (G9), the wild joker (I2), match mode (I8),
and refusals with mid-turn loads. Basic (2 to 4 players): whole hands with illegal actions
refused and hands loaded mid-turn, the rummy bonus (B6), timid play that runs the stock out (G8),
the turn cap (G9) and match mode. Römi (2 to 4 players): whole hands with illegal actions refused
and hands loaded mid-turn, the turn cap, match mode (R8), and a tiny look-ahead budget (masks
written by the Python engine). Every step both backends must agree on every buffer and result.
Prints how the hands ended.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from rummy_env.ruleset import game_spec  # noqa: E402
from vector_lockstep import lockstep  # noqa: E402

CASES = {
    "indian": {
        "whole hands": {},
        "turn cap 30": {"max_turns": 30},
        "wild joker": {"wild_joker": True},
        "match, target 60": {"match": True, "match_target": 60, "max_turns": 80},
        "refusals, loads": {"illegal_every": 41, "load_every": 37, "max_turns": 60},
    },
    "basic": {
        "whole hands": {"illegal_every": 41, "load_every": 37, "out_of_range": 0.1},
        "rummy bonus": {"rummy_bonus": True, "prefer": 3.0},
        "timid (G8)": {"prefer": -0.9},
        "turn cap 30": {"max_turns": 30, "rows_every": 5},
        "match, target 60": {"match": True, "match_target": 60, "max_hands": 5, "rummy_bonus": True},
    },
    "romi": {
        "whole hands": {"illegal_every": 41, "load_every": 37},
        "turn cap 30": {"max_turns": 30, "rows_every": 5},
        "match, target 100": {"match": True, "match_target": 100, "max_hands": 5},
        "budget 3": {"search_budget": 3, "load_every": 37},
    },
}
"""Per game, the cases run for every number of players (their ``lockstep`` options)."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="lockstep_vector.py", description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["indian", "basic", "romi"],
                        choices=["indian", "basic", "romi"])
    parser.add_argument("--steps", type=int, default=20000, help="steps per case")
    parser.add_argument("--envs", type=int, default=32, help="slots per VectorGame")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5, 6],
                        help="numbers of players (Basic and römi play those from 2 to 4)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    total = 0
    for game in args.games:
        for players in args.players:
            low, high = game_spec(game).players
            if not low <= players <= high:
                continue
            loaded = args.envs // 4 if game_spec(game).declares else 0  # hands one draw from declaring (I5)
            for name, options in CASES[game].items():
                start = time.perf_counter()
                ended = lockstep(game, players, args.envs, args.steps, args.seed + players, loaded=loaded,
                                 look_every=499, **options)
                hands = sum(ended[k] for k in ("declare", "out", "stalemate", "cut_off", "match"))
                total += hands
                shown = {k: v for k, v in sorted(ended.items()) if v and k not in ("rebuilt", "layoff")}
                outcomes = ", ".join(f"{k} {v}" for k, v in shown.items())
                print(f"{game} {players} players, {name:<18} {hands:>6} ended ({outcomes}) in "
                      f"{time.perf_counter() - start:.0f} s: identical", flush=True)
    print(f"{total} hands or matches, every step identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
