"""Evaluation of a learner checkpoint in the arena, on fixed duplicate deals, against a panel.

The learner sits in one seat against ``num_players − 1`` copies of each opponent, on ``deals``
deals, every deal once per seat rotation (the arena's duplicate scheme, seeded, so every
evaluation of a run sees the same cards, and the learner holds every seat of each deal in turn).
The learner plays greedily; its fair share of decided hands is ``1 / num_players``. Reported:
hands, decided hands (with a winner), the learner's share of decided hands won with a 95% Wilson
interval, and its points per hand with a 95% interval over deals (a deal's rotations averaged
first, since they share the cards).

**The panel** (``panel``, the spec ``panel`` in ``eval_opponents``) is ``agents.panel``'s, fixed
per game and table. The **panel score** that picks ``best.pt`` is the mean points per hand
against every panel member but random (which every policy beats) and the search agent (too few
deals to choose on). The best of many evaluations on the same few deals flatters its checkpoint
(its luck on those deals is part of why it was chosen), so at the end of a run the candidate
plays the final evaluation's deals too, and ``best.pt`` is whichever of it and the final policy
scores higher there (``agents.training.trainer``).
"""

from __future__ import annotations

import math
from collections import defaultdict

from agents.arena import ArenaConfig, run_arena
from agents.panel import is_search, panel
from agents.stats import mean_interval, wilson_interval

LEARNER = 0
PANEL = "panel"


def expand(opponents: list[str], game: str, num_players: int) -> list[str]:
    """``opponents`` with ``panel`` replaced by the panel's members (each spec once, in order)."""
    specs: list[str] = []
    for spec in opponents:
        for member in panel(game, num_players) if spec == PANEL else [spec]:
            if member not in specs:
                specs.append(member)
    return specs


def scores(spec: str) -> bool:
    """Does the panel score count the results against ``spec`` (every opponent but random and search)?"""
    return spec != "random" and not is_search(spec)


def panel_score(results: dict[str, dict]) -> float:
    """Mean points per hand against every opponent but random and the search agents; what picks best.pt."""
    chosen = [r["points"] for spec, r in results.items() if scores(spec)]
    chosen = [p for p in chosen if math.isfinite(p)]
    return sum(chosen) / len(chosen) if chosen else -math.inf


def evaluate(checkpoint: str, game: str, num_players: int, opponents: list[str], deals: int, seed: int,
             workers: int = 1, progress: bool = False, search_deals: int | None = None,
             stand_ins: dict[str, str] | None = None) -> dict[str, dict]:
    """Per opponent spec (``panel`` expanded): the learner's results against it (see the module
    docstring). Searching opponents play ``search_deals`` deals (skipped when 0); an opponent in
    ``stand_ins`` is played by the spec it maps to (a run's copy of a shipped policy) and reported
    under its own."""
    results = {}
    for opponent in expand(opponents, game, num_players):
        count = deals if search_deals is None or not is_search(opponent) else search_deals
        if count == 0:
            continue
        played = (stand_ins or {}).get(opponent, opponent)
        lineup = (f"ppo:{checkpoint}",) + (played,) * (num_players - 1)  # the learner in one seat, in turn each
        config = ArenaConfig(game=game, agents=lineup, hands=count * num_players, num_players=num_players, seed=seed)
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
    """One line per opponent, e.g. ``vs rule: won 47.5% [43.1, 51.9] of 500 decided hands (520 played),
    −3.8 [−8.2, +0.6] points per hand``."""
    width = max((len(o) for o in results), default=0)
    lines = []
    for opponent, r in results.items():
        if r["decided"]:
            won = (f"won {100 * r['win_rate']:.1f}% [{100 * r['win_rate_low']:.1f}, {100 * r['win_rate_high']:.1f}] "
                   f"of {r['decided']} decided hands ({r['hands']} played)")
        else:
            won = f"no hand decided ({r['hands']} played)"
        lines.append(f"  vs {opponent:<{width}}  {won}, {r['points']:+.1f} [{r['points_low']:+.1f}, "
                     f"{r['points_high']:+.1f}] points per hand")
    return "\n".join(lines)
