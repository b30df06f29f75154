"""rummy_env.vector speed: steps/s with observation and mask every step, against the AEC environment.

    python benchmarks/bench_vector.py [--seconds 2] [--runs 3] [--sizes 1 64 256]
                                      [--numba-sizes 1 64 256 1024] [--backends python numba]
                                      [--reference REV]

Random legal play, 2 players. For each game: the PettingZoo environment one hand at a time
(reading observation and mask each step) and the vector loop at each size, in the same process;
median steps per CPU second over the runs, and the ratio to the environment. Choosing the random
actions is not timed.

The numba backend (Indian Rummy, Basic Rummy and römi) gets its own line per game at ``--numba-sizes``,
against the same environment figure; its kernels are compiled (or loaded from the disk cache)
before timing starts. Targets at N >= 256: Indian 500,000 steps per CPU second, Basic and römi 100,000.

``--reference REV`` compares the numba backend with the compiled cores of git revision ``REV``
in the same process instead: ``rummy_env/compiled/`` of ``REV`` is copied into a folder of its own
(``reference_cores``, its numba cache kept there between runs) and imported under another
package name. Each run times the reference and the working tree one after the other, in turns;
the line shows both medians, their ratio (new / reference) and the range of the runs' ratios.
"""

from __future__ import annotations

import argparse
import importlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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


def vector_rate(game: str, size: int, seconds: float, seed: int, backend: str = "python",
                vector_class: type = VectorGame) -> float:
    vector = vector_class(game, size, 2, seed=seed, backend=backend)
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
    parser.add_argument("--reference", metavar="REV",
                        help="compare the numba backend with the compiled cores of git revision REV instead")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.runs < 1 or min(args.sizes + args.numba_sizes) < 1:
        parser.error("--seconds must be > 0, --runs >= 1 and every size >= 1")
    if args.reference:
        return compare_with(args.reference, args)
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


def reference_vector_class(rev: str) -> type:
    """``CompiledVectorGame`` of the compiled cores of git revision ``rev``, imported from a copy."""
    commit = subprocess.run(["git", "rev-parse", "--short=12", rev], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    package = f"reference_cores_{commit}"
    folder = Path(tempfile.gettempdir()) / "reference_cores" / package
    names = subprocess.run(["git", "ls-tree", "--name-only", commit, "rummy_env/compiled/"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        target = folder / Path(name).name
        if name.endswith(".py") and not target.exists():  # kept: an unchanged file keeps its numba cache
            text = subprocess.run(["git", "show", f"{commit}:{name}"], cwd=ROOT, check=True, capture_output=True,
                                  text=True).stdout
            text = re.sub(r"^(\s*)from \.\. import", r"\1from rummy_env import", text, flags=re.M)
            text = re.sub(r"^(\s*)from \.\.(\w)", r"\1from rummy_env.\2", text, flags=re.M)
            target.write_text(text)
    sys.path.insert(0, str(folder.parent))
    return importlib.import_module(f"{package}.vector").CompiledVectorGame


def compare_with(rev: str, args) -> int:
    """The numba backend of the working tree against that of ``rev``, run by run in the same process."""
    reference = reference_vector_class(rev)
    games = [game for game in args.games if game in NUMBA_GAMES]
    for game in games:
        for vector_class in (reference, VectorGame):
            vector_rate(game, 1, 0.01, 0, "numba", vector_class)  # compiles the kernels, or loads them
    print(f"steps per CPU second, numba backend, 2 players, median of {args.runs} runs of {args.seconds} s: "
          f"this tree against {rev}")
    for game in games:
        for size in args.numba_sizes:
            old, new = [], []
            for r in range(args.runs):
                pair = [(old, reference), (new, VectorGame)]
                for rates, vector_class in (pair if r % 2 == 0 else pair[::-1]):
                    rates.append(vector_rate(game, size, args.seconds, r, "numba", vector_class))
            ratios = sorted(b / a for a, b in zip(old, new))
            print(f"{game:<8}N={size:<6}{rev}: {statistics.median(old):>11,.0f}   now: {statistics.median(new):>11,.0f}"
                  f"   ratio {statistics.median(new) / statistics.median(old):.3f} "
                  f"(runs {ratios[0]:.3f} to {ratios[-1]:.3f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
