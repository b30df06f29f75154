"""rummy_env.vector speed: steps/s with observation and mask every step, against the AEC environment.

    python benchmarks/bench_vector.py [--seconds 2] [--runs 3] [--sizes 1 64 256]

Random legal play, 2 players. For each game: the PettingZoo environment one hand at a time
(reading observation and mask each step) and the vector loop at each size, in the same process;
median steps per CPU second over the runs, and the ratio to the environment. Choosing the random
actions is not timed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rummy_env  # noqa: E402
from rummy_env.vector import VectorGame  # noqa: E402


def env_rate(game: str, seconds: float, seed: int) -> float:
    env = rummy_env.env(game, 2)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps, spent = 0, 0.0
    while spent < seconds:
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        action = int(legal[rng.integers(legal.size)])
        start = time.process_time()
        env.step(action)
        if all(env.terminations.values()) or all(env.truncations.values()):
            env.reset()
        else:
            env.observe(env.agent_selection)
        spent += time.process_time() - start
        steps += 1
    return steps / spent


def vector_rate(game: str, size: int, seconds: float, seed: int) -> float:
    vector = VectorGame(game, size, 2, seed=seed)
    vector.reset(seed)
    rng = np.random.default_rng(seed)
    steps, spent = 0, 0.0
    while spent < seconds:
        masks = vector.action_masks
        actions = np.array([np.flatnonzero(m)[rng.integers(m.sum())] for m in masks])
        start = time.process_time()
        vector.step(actions)
        spent += time.process_time() - start
        steps += size
    return steps / spent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench_vector.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per measurement")
    parser.add_argument("--runs", type=int, default=3, help="measurements per figure (the median is shown)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 256], help="hands stepped together")
    parser.add_argument("--games", nargs="+", default=["indian", "basic", "romi"])
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.runs < 1 or min(args.sizes) < 1:
        parser.error("--seconds must be > 0, --runs >= 1 and every size >= 1")
    print(f"steps per CPU second, 2 players, median of {args.runs} runs of {args.seconds} s")
    header = f"{'game':<8}{'AEC env':>10}" + "".join(f"{f'N={n}':>16}" for n in args.sizes)
    print(header)
    for game in args.games:
        base = statistics.median(env_rate(game, args.seconds, r) for r in range(args.runs))
        cells = []
        for size in args.sizes:
            rate = statistics.median(vector_rate(game, size, args.seconds, r) for r in range(args.runs))
            cells.append(f"{rate:>9,.0f} ({rate / base:.1f}x)")
        print(f"{game:<8}{base:>10,.0f}" + "".join(f"{c:>16}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
