"""Record römi positions whose going-out look-ahead is deep, for the compiled core's tests.

Plays römi hands of rule agents at 3 and 4 players on the numba core with a small look-ahead
budget, and saves every position the core hands to the Python engine because a look-ahead ran
out of it (almost all: taking the cut card to go out, R4, with a crowded table and an unopened
hand; almost all answered no), and the positions where going out with the cut card is legal
whose search is longest (answered yes), as ``GameState.to_dict()`` records in
``going_out_positions.json.gz`` beside this file.

    python tests/data/record_going_out_positions.py --decisions 20000

``tests/test_romi_going_out.py`` replays them on the core at its own budget.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents.registry import make_agent  # noqa: E402
from rummy_env.ruleset import make_ruleset
from rummy_env.encoding import ROMI_TAKE_CUT_ACTION, move_ids  # noqa: E402
from rummy_env.game import GameState  # noqa: E402
from rummy_env.vector import VectorGame  # noqa: E402

OUT = Path(__file__).with_name("going_out_positions.json.gz")


def record(players: int, decisions: int, budget: int, seed: int, keep: int) -> list[dict]:
    """The positions handed to the engine at ``budget``, and the ``keep`` positions where the
    player may go out with the cut card whose search visits the most positions."""
    venv = VectorGame("romi", 64, players, seed=seed, backend="numba")
    core = venv.core
    core.search_budget = budget
    agent = make_agent("rule", make_ruleset("romi", players), seed=seed)
    deep: list[dict] = []
    going_out: list[dict] = []
    fallback = core._ask_python

    def ask_python(rows: np.ndarray) -> None:
        deep.extend(core.state_dict(row, seed, None) for row in rows.tolist())  # every row the engine is asked for
        fallback(rows)

    core._ask_python = ask_python
    venv.reset(seed)
    for _ in range(decisions // venv.num_envs):
        for row in np.flatnonzero(venv.action_masks[:, ROMI_TAKE_CUT_ACTION]).tolist():
            going_out.append(core.state_dict(row, seed, None))
        venv.step(agent.act_batch(venv.observations, venv.action_masks))
    return deep + sorted(going_out, key=search_size, reverse=True)[:keep]


def search_size(position: dict) -> int:
    """Positions the core's look-ahead visits when deciding whether ``position``'s player may go
    out with the cut card (the last search of a draw phase)."""
    state = GameState.from_dict(position)
    core = VectorGame("romi", 1, state.rules.num_players, seed=0, backend="numba").core
    budget = core.search_budget = 10 ** 7
    core.load(0, state, move_ids("romi"))
    return budget - int(core.workspace[10][0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=20000, help="decisions per table size")
    parser.add_argument("--budget", type=int, default=300, help="look-ahead budget while recording")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=int, default=30, help="positions kept per table size where going out is legal")
    args = parser.parse_args(argv)
    positions = []
    for players in (3, 4):
        positions += record(players, args.decisions, args.budget, args.seed, args.keep)
    with gzip.open(OUT, "wt") as f:
        json.dump(positions, f, separators=(",", ":"))
    print(f"{len(positions)} positions -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
