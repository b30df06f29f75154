"""rummy_env.vector speed: steps/s with observation and mask every step, against the AEC environment.

    python benchmarks/bench_vector.py [--seconds 2] [--runs 3] [--sizes 1 64 256]
                                      [--numba-sizes 1 64 256 1024] [--backends python numba]

Random legal play, 2 players. For each game: the PettingZoo environment one hand at a time
(reading observation and mask each step) and the vector loop at each size, in the same process;
median steps per CPU second over the runs, and the ratio to the environment. Choosing the random
actions is not timed.

The numba backend (Indian Rummy, Basic Rummy and römi) gets its own line per game at ``--numba-sizes``,
against the same environment figure; its kernels are compiled (or loaded from the disk cache)
before timing starts. Targets at N >= 256: Indian 500,000 steps per CPU second, Basic and römi 100,000.
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


NUMBA_GAMES = ("indian", "basic", "romi")
"""The games ``backend="numba"`` plays."""


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


def vector_rate(game: str, size: int, seconds: float, seed: int, backend: str = "python") -> float:
    vector = VectorGame(game, size, 2, seed=seed, backend=backend)
    vector.reset(seed)
    rng = np.random.default_rng(seed)
    steps, spent = 0, 0.0
    while spent < seconds:
        masks = vector.action_masks
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)  # uniform over each row's legal actions
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
    parser.add_argument("--numba-sizes", type=int, nargs="+", default=[1, 64, 256, 1024],
                        help="hands stepped together by the numba backend (every game)")
    parser.add_argument("--backends", nargs="+", default=["python", "numba"], choices=["python", "numba"])
    parser.add_argument("--games", nargs="+", default=["indian", "basic", "romi"])
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.runs < 1 or min(args.sizes + args.numba_sizes) < 1:
        parser.error("--seconds must be > 0, --runs >= 1 and every size >= 1")
    for game in NUMBA_GAMES:
        if "numba" in args.backends and game in args.games:
            vector_rate(game, 1, 0.01, 0, "numba")  # compiles the kernels, or loads them from the cache
    print(f"steps per CPU second, 2 players, median of {args.runs} runs of {args.seconds} s")
    header = f"{'game':<8}{'AEC env':>10}" + "".join(f"{f'N={n}':>16}" for n in args.sizes)
    print(header)
    for game in args.games:
        base = statistics.median(env_rate(game, args.seconds, r) for r in range(args.runs))
        if "python" in args.backends:
            cells = []
            for size in args.sizes:
                rate = statistics.median(vector_rate(game, size, args.seconds, r) for r in range(args.runs))
                cells.append(f"{rate:>9,.0f} ({rate / base:.1f}x)")
            print(f"{game:<8}{base:>10,.0f}" + "".join(f"{c:>16}" for c in cells))
        if "numba" in args.backends and game in NUMBA_GAMES:
            print(numba_line(game, base, args))
    return 0


def numba_line(game: str, base: float, args) -> str:
    """The numba backend's figures for ``game``, with the ratio to the environment's ``base``."""
    cells = []
    for size in args.numba_sizes:
        rate = statistics.median(vector_rate(game, size, args.seconds, r, "numba") for r in range(args.runs))
        cells.append(f"N={size}: {rate:,.0f} ({rate / base:.1f}x)")
    return f"{game:<8}{'numba':>10}  " + "   ".join(cells)


if __name__ == "__main__":
    sys.exit(main())
