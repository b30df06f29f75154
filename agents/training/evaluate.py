"""Evaluation of a learner checkpoint in the arena, on fixed duplicate deals.

Each opponent plays the learner on ``deals`` deals, every deal once per seat rotation (the arena's
duplicate scheme, seeded, so every evaluation of a run sees the same cards). The learner plays
greedily. Reported: hands, decided hands (with a winner), the learner's share of decided hands
won with a 95% Wilson interval, and its points per hand with a 95% interval over deals (a deal's
rotations averaged first, since they share the cards).
"""

from __future__ import annotations

import math
from collections import defaultdict

from agents.arena import ArenaConfig, run_arena
from agents.stats import mean_interval, wilson_interval

LEARNER = 0


def evaluate(checkpoint: str, game: str, num_players: int, opponents: list[str], deals: int, seed: int,
             workers: int = 1, progress: bool = False) -> dict[str, dict]:
    """Per opponent spec: the learner's results against it (see the module docstring)."""
    results = {}
    for opponent in opponents:
        config = ArenaConfig(game=game, agents=(f"ppo:{checkpoint}", opponent), hands=deals * num_players,
                             num_players=num_players, seed=seed)
        records = run_arena(config, workers=workers, progress=progress)
        results[opponent] = summarize_learner(records)
    return results


def summarize_learner(records: list[dict]) -> dict:
    """The learner's (agent 0's) results over arena hand records."""
    hands = decided = wins = 0
    per_deal: dict[tuple, list[float]] = defaultdict(list)
    for record in records:
        learner_seats = [seat for seat, agent in enumerate(record["seats"]) if agent == LEARNER]
        if not learner_seats:
            continue
        hands += 1
        if record["winner"] is not None:
            decided += 1
            wins += record["winner"] in learner_seats
        points = sum(record["points"][s] for s in learner_seats) / len(learner_seats)
        per_deal[(record["table"], record["deal"])].append(points)
    low, high = wilson_interval(wins, decided)
    deal_means = [sum(v) / len(v) for v in per_deal.values()]
    mean, points_low, points_high = mean_interval(deal_means) if deal_means else (math.nan, math.nan, math.nan)
    return {"hands": hands, "decided": decided, "wins": wins,
            "win_rate": wins / decided if decided else math.nan, "win_rate_low": low, "win_rate_high": high,
            "points": mean, "points_low": points_low, "points_high": points_high}


def describe(results: dict[str, dict]) -> str:
    """One line per opponent, e.g. ``rule: won 47.5% [43.1, 51.9] of 500 decided hands, −3.8 [−8.2, +0.6] points/hand``."""
    lines = []
    for opponent, r in results.items():
        lines.append(f"{opponent}: won {100 * r['win_rate']:.1f}% [{100 * r['win_rate_low']:.1f}, "
                     f"{100 * r['win_rate_high']:.1f}] of {r['decided']} decided hands ({r['hands']} played), "
                     f"{r['points']:+.1f} [{r['points_low']:+.1f}, {r['points_high']:+.1f}] points per hand")
    return "\n".join(lines)
