"""Rules-engine speed: random legal games through ``GameState`` (no RL encoding).

Prints, per game, games/s and moves/s (median of ``--runs`` runs), where each move is
``legal_moves()`` followed by ``apply()`` of a uniformly random legal move.

    python benchmarks/bench_engine.py --seconds 3 --runs 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from rummy_env.game import GameState

SETUPS = (("indian", 2), ("basic", 2), ("romi", 2), ("indian", 6), ("basic", 4), ("romi", 4))


def random_play_rate(game: str, players: int, seconds: float, seed: int = 0) -> tuple[float, float]:
    """(games/s, moves/s) of uniformly random legal play for about ``seconds``."""
    rng = random.Random(seed)
    games = moves = 0
    start = time.perf_counter()
    while True:
        state = GameState.new(game, players, seed=seed + games)
        while not state.is_over:
            state.apply(rng.choice(state.legal_moves()))
            moves += 1
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return games / elapsed, moves / elapsed


def engine_figures(seconds: float = 2.0, runs: int = 3, setups=SETUPS) -> dict[str, dict[str, float]]:
    """Median games/s and moves/s per (game, players)."""
    out = {}
    for game, players in setups:
        rates = [random_play_rate(game, players, seconds, seed=1000 * r) for r in range(runs)]
        out[f"{game}-{players}p"] = {
            "games_per_s": statistics.median(g for g, _ in rates),
            "moves_per_s": statistics.median(m for _, m in rates),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one timed run per game")
    parser.add_argument("--runs", type=int, default=3, help="runs per game; the median is printed")
    args = parser.parse_args(argv)
    print(f"{'game':<12}{'games/s':>10}{'moves/s':>12}")
    for name, fig in engine_figures(args.seconds, args.runs).items():
        print(f"{name:<12}{fig['games_per_s']:>10,.1f}{fig['moves_per_s']:>12,.0f}")


if __name__ == "__main__":
    main()
