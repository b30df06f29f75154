"""Play-loop speed: the arena (hands/s) and the search agent (decisions/s), by CPU time.

Both play through ``rummy_env.vector``: the arena steps every hand of a task together, and the
search agent plays its rollouts there. Figures are medians of ``--runs`` runs and count this
process's CPU time (``time.process_time``), so other work on the machine hardly moves them.

* Arena: ``run_arena`` with one worker, no progress bar, on ``--hands`` hands per pairing
  (``random`` vs ``rule`` and ``rule`` vs ``rule``, 2 players); hands per CPU second.
* Search agent: the positions of rule-vs-rule hands dealt from seeds ``bench:0``, ``bench:1``, ...
  (every decision with more than one legal action, ``--positions`` of them); the agent is reset
  with the position's index and decides; decisions per CPU second of ``act``.

    python benchmarks/bench_play.py                        # all games
    python benchmarks/bench_play.py --games indian --runs 5 --hands 200 --positions 60
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.arena import ArenaConfig, run_arena  # noqa: E402
from agents.rule_agent import RuleAgent  # noqa: E402
from agents.search_agent import SearchAgent  # noqa: E402
from rummy_env.ruleset import GAMES, make_ruleset  # noqa: E402
from rummy_env.vector import VectorGame  # noqa: E402

PAIRINGS = (("random", "rule"), ("rule", "rule"))


def arena_rate(game: str, agents: tuple[str, ...], hands: int, seed: int = 0) -> float:
    """Hands per CPU second of one arena run (one worker)."""
    config = ArenaConfig(game=game, agents=agents, hands=hands, seed=seed)
    start = time.process_time()
    records = run_arena(config, workers=1, progress=False)
    return len(records) / (time.process_time() - start)


def rule_positions(game: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` (observation, mask) pairs with more than one legal action, from rule-vs-rule play."""
    vector = VectorGame(game, 1, 2)
    vector.reset(seed=0)
    rule = RuleAgent(make_ruleset(game, 2))
    observations, masks = [], []
    while len(masks) < count:
        if vector.action_masks[0].sum() > 1:
            observations.append(vector.observations[0].copy())
            masks.append(vector.action_masks[0].copy())
        vector.step(rule.act_batch(vector.observations, vector.action_masks))
    return np.stack(observations), np.stack(masks)


def search_rate(game: str, observations: np.ndarray, masks: np.ndarray) -> float:
    """Decisions per CPU second of the search agent (default settings) over the positions."""
    agent = SearchAgent(make_ruleset(game, 2), seed=0)
    spent = 0.0
    for index, (observation, mask) in enumerate(zip(observations, masks)):
        agent.reset(seed=index)
        start = time.process_time()
        agent.act(observation, mask)
        spent += time.process_time() - start
    return len(masks) / spent


def play_figures(games=GAMES, runs: int = 3, hands: int = 100, positions: int = 40) -> dict:
    """``{game: {"arena random-rule": hands/s, "arena rule-rule": hands/s, "search": decisions/s}}``."""
    out = {}
    for game in games:
        row = {}
        for agents in PAIRINGS:
            row[f"arena {'-'.join(agents)}"] = statistics.median(arena_rate(game, agents, hands, seed=r)
                                                                 for r in range(runs))
        observations, masks = rule_positions(game, positions)
        row["search"] = statistics.median(search_rate(game, observations, masks) for _ in range(runs))
        out[game] = row
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", choices=GAMES, default=list(GAMES), help="games to time (default: all)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the median is printed (default 3)")
    parser.add_argument("--hands", type=int, default=100, help="arena hands per pairing and run (default 100)")
    parser.add_argument("--positions", type=int, default=40, help="search agent positions per run (default 40)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.hands < 2 or args.positions < 1:
        parser.error("--runs and --positions must be >= 1 and --hands >= 2")
    figures = play_figures(args.games, args.runs, args.hands, args.positions)
    print(f"per CPU second, 2 players, median of {args.runs} runs")
    columns = list(next(iter(figures.values())))
    print(f"  {'game':<8}" + "".join(f"{c:>20}" for c in columns))
    for game, row in figures.items():
        print(f"  {game:<8}" + "".join(f"{row[c]:>20,.1f}" for c in columns))
    print("  (arena: hands/s; search: decisions/s)")
    return figures


if __name__ == "__main__":
    main()
