"""End-to-end training speed: learner decisions/s, self-play and against the rule agent.

    python benchmarks/bench_train.py [--game indian] [--players 2] [--updates 6] [--workers 2] [--runs 1] [--device cpu]
    python benchmarks/bench_train.py --game romi --players 4 --settings default   # a full table

Runs a few PPO updates (no cloning, no evaluation) and prints, per mode, the median over updates
(the first is not counted: it pays for warming up) of

* **env steps/s** while collecting;
* **learner decisions/s**, wall clock, end to end (collecting plus learning);
* **decisions per CPU-second**, every process of the run together: on a busy machine the figure to
  compare, and times the cores used (``× workers``) it is what those cores would give if the run had
  them to itself;
* where an update's time goes (collecting, learning).

Two settings are timed alternately in the same process: ``default`` (the trainer's defaults: 1
epoch, learning inside the collecting processes) and ``reference`` (4 epochs, the earlier
default), so their ratio holds on a noisy machine. ``--device
cuda`` puts the learner on the GPU (the workers only collect; docs/training.md, "Data-parallel
learning").
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

from agents.training.config import ConfigError, make_config  # noqa: E402
from agents.training.trainer import train  # noqa: E402

MODES = {
    "self-play": {"pool_self_fraction": 1.0},
    "vs rule agent": {"pool_self_fraction": 0.0, "pool_rule_min": 1.0},
}
SETTINGS = {
    "default": {},
    "reference": {"update_epochs": 4},
}


def bench_config(game: str, players: int, updates: int, workers: int, rollout: int, mode: dict, setting: dict,
                 device: str, folder: str):
    """The run one measurement makes: a few updates from random weights, no cloning, no evaluation."""
    return make_config({"game": game, "num_players": players, "num_workers": workers,
                        "total_steps": updates * rollout, "rollout_size": rollout, "bc_warm_start": False,
                        "eval_every": 0, "final_eval_deals": 1, "eval_opponents": ["random"], "progress": False,
                        "pool_snapshot_every": 0, "run_dir": folder, "checkpoint_every": 1000, "device": device,
                        **mode, **setting})


def measure(game: str, updates: int, workers: int, rollout: int, mode: dict, setting: dict,
            device: str = "cpu", players: int = 2) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        config = bench_config(game, players, updates, workers, rollout, mode, setting, device, folder)
        train(config, log=lambda *_: None)
        state = torch.load(Path(folder) / "checkpoint.pt", weights_only=True)["training_state"]
        history = json.loads(state["history"])
    cpu = [60 * (b["charts/cpu_minutes"] - a["charts/cpu_minutes"]) for a, b in zip(history, history[1:])]
    decisions = [b["learner_steps"] - a["learner_steps"] for a, b in zip(history, history[1:])]
    later = history[1:]
    median = lambda key: statistics.median(h[key] for h in later)  # noqa: E731
    collect, update = median("charts/collect_seconds"), median("charts/update_seconds")
    return {"env_steps_per_s": median("charts/env_steps_per_s"),
            "learner_decisions_per_s": median("charts/learner_decisions_per_s"),
            "decisions_per_cpu_s": statistics.median(d / c for d, c in zip(decisions, cpu) if c > 0),
            "collect_share": collect / (collect + update)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench_train.py", description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="indian", choices=("indian", "basic", "romi"))
    parser.add_argument("--players", type=int, default=2,
                        help="players at the table (the learner in one seat; Indian 2-6, Basic and römi 2-4)")
    parser.add_argument("--updates", type=int, default=6, help="PPO updates per measurement (the first is not counted)")
    parser.add_argument("--workers", type=int, default=2, help="collecting (and learning) processes")
    parser.add_argument("--rollout", type=int, default=8192, help="learner decisions per update")
    parser.add_argument("--runs", type=int, default=1, help="measurements of each setting (alternated; medians)")
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="where the learner runs (default: cpu, the tested default)")
    args = parser.parse_args(argv)
    if args.updates < 3:
        parser.error("--updates must be at least 3 (the first update is not counted)")
    try:
        for mode in MODES.values():
            for setting in args.settings:
                bench_config(args.game, args.players, args.updates, args.workers, args.rollout, mode,
                             SETTINGS[setting], args.device, "unused")
    except ConfigError as error:
        parser.error(f"options (--game, --players, --rollout, --workers, --device) give a run the trainer "
                     f"refuses: {error}")
    print(f"{args.game}, {args.players} players, {args.workers} processes, learner on {args.device}, "
          f"{args.rollout} decisions an update, medians of {args.runs} run(s)")
    print(f"{'mode':<15}{'setting':<11}{'env steps/s':>13}{'decisions/s':>13}{'per CPU-s':>11}"
          f"{'x cores':>9}{'collecting':>12}")
    for name, mode in MODES.items():
        found: dict[str, list[dict]] = {s: [] for s in args.settings}
        for _ in range(args.runs):
            for setting in args.settings:
                found[setting].append(measure(args.game, args.updates, args.workers, args.rollout, mode,
                                              SETTINGS[setting], args.device, args.players))
        for setting, rows in found.items():
            m = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
            cores = max(1, args.workers)
            print(f"{name:<15}{setting:<11}{m['env_steps_per_s']:>13,.0f}{m['learner_decisions_per_s']:>13,.0f}"
                  f"{m['decisions_per_cpu_s']:>11,.0f}{cores * m['decisions_per_cpu_s']:>9,.0f}"
                  f"{m['collect_share']:>12.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
