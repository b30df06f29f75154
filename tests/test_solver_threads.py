"""The solver from many threads at once (the web table's games share the process): the same answers as alone.

The compiled search keeps one workspace per process; a compiled call holds the GIL, and
``best_arrangement`` takes its melds out of the workspace within its call
(``rummy_env.compiled.solver.laid_out``), so another thread's search cannot overwrite them first.
"""

from __future__ import annotations

import random
import sys
import threading

import pytest

from rummy_env import solver
from rummy_env.cards import JOKER, NUM_TYPES


def random_hand(rng: random.Random, size: int, jokers: bool) -> list[int]:
    counts = [0] * NUM_TYPES
    while sum(counts) < size:
        card = rng.randrange(NUM_TYPES if jokers else JOKER)
        if counts[card] < 2:
            counts[card] += 1
    return counts


@pytest.mark.skipif(not solver.compiled_in_use(), reason="the compiled search is off (no numba)")
def test_arrangements_from_many_threads_equal_those_found_alone():
    rng = random.Random(5)
    games = ("romi", "basic", "indian")
    hands = [random_hand(rng, rng.choice((10, 13, 14)), games[i % 3] != "basic") for i in range(300)]
    alone = [solver.best_arrangement(h, games[i % 3]) for i, h in enumerate(hands)]
    found: dict[int, list] = {}
    errors = []

    def work(worker: int) -> None:
        try:
            order = list(range(len(hands)))
            random.Random(worker).shuffle(order)
            got = found.setdefault(worker, [None] * len(hands))
            for i in order:
                got[i] = solver.best_arrangement(hands[i], games[i % 3])
                solver.min_deadwood(hands[i - 1 - i % 3], "romi")  # another search between, writing the workspace
        except Exception as error:  # noqa: BLE001 - reported below, with the thread
            errors.append((worker, error))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        solver.clear_caches()
        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    for worker, got in found.items():
        assert got == alone, f"thread {worker} found other arrangements"
