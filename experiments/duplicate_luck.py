"""How much of a hand's result is its deal? Two agents on the arena's duplicate deals.

    python experiments/duplicate_luck.py          # Indian, the shipped policy against the rule agent
    python experiments/duplicate_luck.py --game basic --agents pretrained:basic rule --hands 1000

Plays each deal twice at 2 players, the seats swapped (``agents.arena``, seed ``--seed``), and
prints for the first agent, A: its points per hand over both seatings (mean and standard
deviation), and ρ, the
correlation between A's points on a deal and the points B made from the same cards when the seats
were swapped (the same deal replayed by the other player). From ρ:

* **left by a duplicate baseline**, σ·√(1 − ρ²): the standard deviation of A's return once the
  best multiple of the replayed result is taken off it, the most a training baseline built from
  the same deal played by another player (a lower-variance return) could leave;
* **variance kept by duplicate dealing**, 1 − ρ: what the pairing of the arena leaves of the
  variance of a difference of means, against deals drawn independently.

With ρ near 1 the deal decides the hand and pairing removes most of the noise; near 0 the play
diverges so fast that the same cards say little about the result (experiments/LOG.md, "A duplicate
baseline").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.arena import ArenaConfig, check_config, play_deals  # noqa: E402


def mirrored_points(game: str, agents: tuple[str, str], hands: int, seed: int) -> np.ndarray:
    """(deals, 3): on each deal A's points, B's points from A's cards with the seats swapped, and
    A's points in that swapped hand."""
    config = ArenaConfig(game=game, agents=agents, hands=hands, seed=seed)
    records = play_deals(config, 0, range(config.deals), check_config(config))
    first_of = {r["deal"]: r for r in records if r["rotation"] == 0}
    pairs = []
    for record in records:
        if record["rotation"] != 1:
            continue
        first = first_of[record["deal"]]
        seat_of_a = first["seats"].index(0)  # B holds these cards in the swapped hand
        pairs.append((first["points"][seat_of_a], record["points"][seat_of_a],
                      record["points"][record["seats"].index(0)]))
    return np.asarray(pairs, np.float64)


def luck_figures(pairs: np.ndarray) -> dict:
    """A's mean and spread, ρ, and what a duplicate baseline and duplicate dealing leave."""
    own, replayed = pairs[:, 0], pairs[:, 1]
    both_seats = np.concatenate([own, pairs[:, 2]])  # A's points in both hands of each deal
    spread = float(both_seats.std())
    rho = float(np.corrcoef(own, replayed)[0, 1]) if own.std() and replayed.std() else 0.0
    return {"deals": len(pairs), "mean": float(both_seats.mean()), "sd": spread, "rho": rho,
            "sd_left_by_baseline": spread * float(np.sqrt(max(0.0, 1.0 - rho * rho))),
            "variance_kept_by_pairing": 1.0 - rho}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python experiments/duplicate_luck.py", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="indian", choices=("indian", "basic", "romi"),
                        help="the game (default indian)")
    parser.add_argument("--agents", nargs=2, default=["pretrained:indian", "rule"], metavar=("A", "B"),
                        help="two agent specs (default: pretrained:indian rule)")
    parser.add_argument("--hands", type=int, default=2000, help="hands, two per deal (default 2000)")
    parser.add_argument("--seed", type=int, default=5, help="seed of the deals (default 5)")
    args = parser.parse_args(argv)
    if args.hands < 4:
        parser.error("--hands must be at least 4 (two deals)")
    try:
        pairs = mirrored_points(args.game, tuple(args.agents), args.hands, args.seed)
    except ValueError as error:  # a bad agent spec, or one for another game (AgentError)
        parser.error(str(error))
    figures = luck_figures(pairs)
    a, b = args.agents
    print(f"{args.game}, {a} against {b}: {figures['deals']:,} deals, each played twice with the seats swapped")
    print(f"  {a}'s points per hand               {figures['mean']:+8.1f}  (standard deviation {figures['sd']:.1f})")
    print(f"  ρ, its points against {b}'s from the same cards  {figures['rho']:8.3f}")
    print(f"  left by a duplicate baseline (σ√(1−ρ²))  {figures['sd_left_by_baseline']:8.1f}")
    print(f"  variance kept by duplicate dealing (1−ρ) {figures['variance_kept_by_pairing']:8.2f}")
    return figures


if __name__ == "__main__":
    main()
