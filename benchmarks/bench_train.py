"""End-to-end training speed: env steps/s and learner decisions/s, self-play and against the rule agent.

    python benchmarks/bench_train.py [--game indian] [--updates 4] [--workers 2]

Runs a few PPO updates (no cloning, no evaluation) with the default network and prints, per
mode, the median over updates of env steps/s while collecting, learner decisions/s end to end,
and where an update's time goes (collecting vs the PPO update). Figures are wall-clock rates on
this machine: quote them with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.training.config import make_config  # noqa: E402
from agents.training.trainer import train  # noqa: E402

MODES = {
    "self-play": {"pool_self_fraction": 1.0},
    "vs rule agent": {"pool_self_fraction": 0.0, "pool_rule_min": 1.0, "pool_random": False},
}


def measure(game: str, updates: int, workers: int, rollout: int, mode: dict) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        config = make_config({"game": game, "num_workers": workers, "total_steps": updates * rollout,
                              "rollout_size": rollout, "bc_warm_start": False, "eval_every": 0,
                              "final_eval_deals": 1, "progress": False, "pool_snapshot_every": 0,
                              "run_dir": folder, "checkpoint_every": 1000, **mode})
        train(config, log=lambda *_: None)
        state = torch.load(Path(folder) / "checkpoint.pt", weights_only=True)["training_state"]
        history = json.loads(state["history"])[1:]  # the first update pays for warming up
    median = lambda key: statistics.median(h[key] for h in history)  # noqa: E731
    collect, update = median("charts/collect_seconds"), median("charts/update_seconds")
    return {"env_steps_per_s": median("charts/env_steps_per_s"),
            "learner_steps_per_s": median("charts/learner_steps_per_s"),
            "collect_share": collect / (collect + update)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench_train.py", description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="indian", choices=("indian", "basic", "romi"))
    parser.add_argument("--updates", type=int, default=4, help="PPO updates per mode (the first is not counted)")
    parser.add_argument("--workers", type=int, default=2, help="collecting processes")
    parser.add_argument("--rollout", type=int, default=8192, help="learner decisions per update")
    args = parser.parse_args(argv)
    if args.updates < 2:
        parser.error("--updates must be at least 2 (the first update is not counted)")
    print(f"{args.game}, 2 players, {args.workers} collecting processes, {args.rollout} decisions an update")
    print(f"{'mode':<16}{'env steps/s':>14}{'learner steps/s':>18}{'time collecting':>18}")
    for name, mode in MODES.items():
        r = measure(args.game, args.updates, args.workers, args.rollout, mode)
        print(f"{name:<16}{r['env_steps_per_s']:>14,.0f}{r['learner_steps_per_s']:>18,.0f}{r['collect_share']:>17.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
