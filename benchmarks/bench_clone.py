"""Cloning's recording speed: a teacher's kept decisions per CPU-second, and what it was asked.

    python benchmarks/bench_clone.py [--game indian] [--players 2] [--teacher rule] [--decisions 4000] [--runs 3]
    python benchmarks/bench_clone.py --teacher lookahead --decisions 2000      # a slow teacher

Records ``--decisions`` teacher decisions ``--runs`` times with the trainer's collector
(``agents.training.rollout.Collector``, 64 slots, every seat played by the teacher, every hand
played to its end: docs/training.md, "What a run does") and prints the medians of

* **kept decisions per CPU-second**: the recording's speed, engine and teacher together;
* **positions asked per kept decision**: how many positions the teacher decided for each one
  kept (1.00 when it is asked only about what is kept; the collector before it let finished
  slots play on and asked 1.5 to 2.1 for each, docs/benchmarks.md "Cloning");
* **teacher share**: the part of the recording's CPU time spent in the teacher.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rummy_env.ruleset import make_ruleset
from agents.policy import build_network  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.training.rollout import Collector  # noqa: E402

SLOTS = 64


class TimedTeacher:
    """A teacher that counts the positions it decides and the CPU time it spends deciding them."""

    def __init__(self, agent):
        self.agent = agent
        self.asked = 0
        self.cpu_seconds = 0.0

    def act_batch(self, observations, action_masks):
        start = time.process_time()
        actions = self.agent.act_batch(observations, action_masks)
        self.cpu_seconds += time.process_time() - start
        self.asked += len(observations)
        return actions


def measure(game: str, players: int, teacher: str, decisions: int, seed: int = 1) -> dict:
    """One recording of ``decisions`` teacher decisions: its speed, positions asked and teacher share."""
    torch.manual_seed(seed)
    model = build_network(game, players, {"kind": "card", "layout": 2}).eval()
    collector = Collector(game, players, SLOTS, seed, model, reward_scale=0.01, gamma=0.995, shaping=False,
                          shaping_coef=1.0,
                          backend="numba")
    timed = TimedTeacher(make_agent(teacher, make_ruleset(game, players)))
    collector.collect(SLOTS, timed)  # warm-up: compiled kernels, caches
    timed.asked, timed.cpu_seconds = 0, 0.0
    start = time.process_time()
    kept = len(collector.collect(decisions, timed))
    seconds = time.process_time() - start
    return {"kept": kept, "kept_per_cpu_s": kept / seconds, "asked_per_kept": timed.asked / kept,
            "teacher_share": timed.cpu_seconds / seconds}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="indian", choices=("indian", "basic", "romi"))
    parser.add_argument("--players", type=int, default=2, help="players per hand (default 2)")
    parser.add_argument("--teacher", default="rule", help="the teacher, an agent spec (default: rule)")
    parser.add_argument("--decisions", type=int, default=4000, help="decisions recorded per run (default 4000)")
    parser.add_argument("--runs", type=int, default=3, help="recordings; medians printed (default 3)")
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.runs < 1:
        parser.error("--decisions and --runs must be >= 1")
    try:
        runs = [measure(args.game, args.players, args.teacher, args.decisions, seed)
                for seed in range(1, args.runs + 1)]
    except ValueError as error:  # a bad teacher spec (AgentError) or table
        parser.error(str(error))
    figures = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(f"{args.game}, {args.players} players, teacher {args.teacher}: {SLOTS} slots, CPU time, "
          f"median of {args.runs} recordings of {args.decisions:,} decisions")
    print(f"  kept decisions per CPU-second   {figures['kept_per_cpu_s']:>10,.0f}")
    print(f"  positions asked per kept one    {figures['asked_per_kept']:>10.2f}")
    print(f"  teacher's share of the CPU time {figures['teacher_share']:>10.0%}")
    return figures


if __name__ == "__main__":
    main()
