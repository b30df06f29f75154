"""Record the rule agent's decisions, so that a faster agent can be checked against them.

Plays hands of rule agent against rule agent (2 players) and saves, for every decision with more
than one legal action, the observation, the action mask and the action the agent chose, one
compressed ``.npz`` per case (``rule_positions_<case>.npz`` beside this file).

    python tests/data/record_rule_positions.py --decisions 2500

The files were recorded with the rule agent as it stood before ``RuleAgent.act_batch`` was
compiled; ``tests/test_rule_agent_batch.py`` replays them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents.rule_agent import RuleAgent  # noqa: E402
from rummy_env.ruleset import make_ruleset
from rummy_env.encoding import ObservationEncoder, action_layout, action_mask  # noqa: E402
from rummy_env.game import GameState  # noqa: E402

CASES = {
    "indian": ("indian", {}),
    "indian_wild": ("indian", {"wild_joker": True}),
    "basic": ("basic", {}),
    "romi": ("romi", {}),
}
"""Case name: (game, rule options)."""


def record(game: str, options: dict, decisions: int, seed: int = 0) -> dict[str, np.ndarray]:
    agent = RuleAgent(make_ruleset(game, 2, **options))
    moves = action_layout(game).moves
    observations, masks, actions = [], [], []
    hand = 0
    while len(actions) < decisions:
        state = GameState.new(game, 2, seed=f"record:{seed}:{hand}", **options)
        encoder = ObservationEncoder(state.rules)
        while not state.is_over and len(actions) < decisions:
            observation = encoder.encode(state, state.current)
            mask = action_mask(state)
            action = agent.act(observation, mask)
            if np.count_nonzero(mask) > 1:
                observations.append(observation)
                masks.append(mask.astype(np.int8))
                actions.append(action)
            state.apply(moves[action])
        hand += 1
    return {"observations": np.asarray(observations, np.float32), "masks": np.asarray(masks, np.int8),
            "actions": np.asarray(actions, np.int64), "hands": np.asarray(hand)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Record the rule agent's decisions (tests/data).")
    parser.add_argument("--decisions", type=int, default=2500, help="decisions recorded per case (default 2500)")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    args = parser.parse_args(argv)
    for name in args.cases:
        game, options = CASES[name]
        got = record(game, options, args.decisions)
        path = Path(__file__).with_name(f"rule_positions_{name}.npz")
        np.savez_compressed(path, options=np.asarray(repr(sorted(options.items()))), **got)
        print(f"{name}: {len(got['actions'])} decisions from {int(got['hands'])} hands -> {path.name} "
              f"({path.stat().st_size / 1e6:.2f} MB)", flush=True)


if __name__ == "__main__":
    main()
