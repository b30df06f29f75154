"""Solver speed: hands per second of the exact solver on random hands, one core.

Figures (median of ``--runs`` runs, each on freshly dealt hands from its own seed):

* ``indian_penalty``: 13 cards from two decks and two printed jokers (106 cards), no wild rank;
  ``indian_penalty_wild``: the same with a random wild rank (I2);
* ``declare_discards``: 14 cards, the same decks (the engine asks this at every Indian discard);
  ``declare_discards_wild``: with a random wild rank;
* ``min_deadwood_basic``: 10 cards from one deck; ``min_deadwood_romi``: 13 cards from 106;
* ``hand_penalty_text``: the public ``rules.hand_penalty("indian", text)``, parsing included (13
  cards in G2 notation, 106-card deck); ``hand_penalty_array``: the same hands as count arrays.

The solver's compiled search is used unless ``--python`` (``solver.use_compiled(False)``); with
``--compare`` both are timed in the same run and the ratio is printed.

The solver memoises suit profiles across hands, so a long training run gets faster as it goes:
each figure is taken after a warm-up of ``--warmup`` CPU seconds (default: as long as one timed
run) on hands from another seed; ``indian_penalty_cold`` is the first hands of a fresh process,
before any warm-up. The whole run takes about (cases × (runs + 1) + 1) × ``--seconds``. Time is CPU time of this process
(``time.process_time``), so other work on the machine does not count against it.

    python benchmarks/bench_solver.py --seconds 2 --runs 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from rummy_env import rules, solver
from rummy_env.cards import JOKER, format_cards, from_counts, to_counts

TWO_DECKS = [c for c in range(52) for _ in range(2)] + [JOKER, JOKER]
ONE_DECK = list(range(52))

# name: (function of (counts, wild rank), deck, hand size, with a random wild rank)
CASES: dict[str, tuple[Callable, list[int], int, bool]] = {
    "indian_penalty": (solver.indian_penalty, TWO_DECKS, 13, False),
    "indian_penalty_wild": (solver.indian_penalty, TWO_DECKS, 13, True),
    "declare_discards": (solver.declare_discards, TWO_DECKS, 14, False),
    "declare_discards_wild": (solver.declare_discards, TWO_DECKS, 14, True),
    "min_deadwood_basic": (lambda c, w: solver.min_deadwood(c, "basic"), ONE_DECK, 10, False),
    "min_deadwood_romi": (lambda c, w: solver.min_deadwood(c, "romi"), TWO_DECKS, 13, False),
    "hand_penalty_text": (lambda c, w: rules.hand_penalty("indian", c), TWO_DECKS, 13, False),
    "hand_penalty_array": (lambda c, w: rules.hand_penalty("indian", c), TWO_DECKS, 13, False),
}
PREPARE: dict[str, Callable] = {
    "hand_penalty_text": lambda counts: format_cards(from_counts(counts)),
    "hand_penalty_array": lambda counts: np.asarray(counts, np.int64),
}
"""How a case's hands are handed over (made before the clock starts)."""


def deal(rng: random.Random, deck: list[int], size: int, wild: bool, count: int, name: str = "") -> list[tuple]:
    prepare = PREPARE.get(name, lambda counts: counts)
    return [(prepare(to_counts(rng.sample(deck, size))), rng.randrange(13) if wild else None) for _ in range(count)]


def warm_up(name: str, seconds: float, seed: int = 20_000) -> None:
    """Solve hands of one case from ``seed`` for about ``seconds`` of CPU time, filling the caches."""
    if seconds > 0:
        hands_per_second(name, seconds, seed)


def hands_per_second(name: str, seconds: float, seed: int) -> float:
    """Hands/s of one case on fresh hands from ``seed`` for about ``seconds`` of CPU time."""
    fn, deck, size, wild = CASES[name]
    rng = random.Random(seed)
    done = 0
    spent = 0.0
    while spent < seconds:
        batch = deal(rng, deck, size, wild, 500, name)
        start = time.process_time()
        for counts, w in batch:
            fn(counts, w)
        spent += time.process_time() - start
        done += len(batch)
    return done / spent


def solver_figures(seconds: float = 1.0, runs: int = 5, warmup: float | None = None) -> dict[str, float]:
    """Hands/s per case (median of ``runs`` runs of about ``seconds`` each), plus the cold start.

    Each case is first warmed up for ``warmup`` CPU seconds (default ``seconds``).
    """
    warmup = seconds if warmup is None else warmup
    out = {}
    solver.clear_caches()
    out["indian_penalty_cold"] = hands_per_second("indian_penalty", min(seconds, 0.5), seed=10_000)
    for name in CASES:
        warm_up(name, warmup)
        out[name] = statistics.median(hands_per_second(name, seconds, seed=r) for r in range(runs))
    return out


def compare_figures(seconds: float, runs: int, warmup: float | None) -> dict[str, tuple[float, float]]:
    """{case: (compiled hands/s, Python hands/s)}, both timed in this run."""
    before = solver.use_compiled(True)
    try:
        fast = solver_figures(seconds, runs, warmup)
        solver.use_compiled(False)
        slow = solver_figures(seconds, runs, warmup)
    finally:
        solver.use_compiled(before)
    return {name: (fast[name], slow[name]) for name in fast}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds of one timed run per case (default 1)")
    parser.add_argument("--runs", type=int, default=5, help="runs per case; the median is printed (default 5)")
    parser.add_argument("--warmup", type=float, default=None,
                        help="CPU seconds of solving before timing each case (default: --seconds)")
    parser.add_argument("--python", action="store_true", help="time the Python search (the reference)")
    parser.add_argument("--compare", action="store_true", help="time the compiled and the Python search")
    args = parser.parse_args(argv)
    if not args.seconds > 0 or args.runs < 1 or (args.warmup is not None and args.warmup < 0):
        parser.error("--seconds must be > 0, --runs >= 1 and --warmup >= 0")
    if args.compare:
        both = compare_figures(args.seconds, args.runs, args.warmup)
        print(f"{'case':<24}{'compiled/s':>12}{'python/s':>12}{'ratio':>8}")
        for name, (fast, slow) in both.items():
            print(f"{name:<24}{fast:>12,.0f}{slow:>12,.0f}{fast / slow:>8.2f}")
        return
    solver.use_compiled(not args.python)
    figures = solver_figures(args.seconds, args.runs, args.warmup)
    print(f"{'case':<24}{'hands/s':>12}")
    for name, rate in figures.items():
        print(f"{name:<24}{rate:>12,.0f}")


if __name__ == "__main__":
    main()
