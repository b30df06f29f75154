"""Search with a policy: decisions/s and strength per budget, per game (docs/agents.md, "Search with a policy").

A budget is the settings after the policy in ``search:policy=SPEC,...`` (``worlds``,
``candidates``, ``depth``, ``confidence``, ``z``; see ``agents.policy_search``).

* Speed: positions from the policy's greedy self-play (64 hands dealt from ``--seed``, every
  decision of every seat, ``--positions`` of them drawn evenly), decided by the search agent
  ``--batch`` rows at a time (1: one decision at a time; the arena hands it up to 32). The
  decisions the search skips (a confident policy, one legal move) count, as they do in play.
  Decisions per CPU second (``time.process_time``), median of ``--runs`` runs.
* Strength (``--hands`` > 0): the arena, the search agent against each ``--opponents`` spec on
  duplicate deals (``policy`` is the same policy without search). Its share of the decided hands
  won with a 95% Wilson interval, points per hand with a 95% interval over deals, and its
  decisions per CPU second in that play (its own time only).

    python benchmarks/bench_search.py --games indian --budgets worlds=8 worlds=16,depth=2
    python benchmarks/bench_search.py --games basic --budgets worlds=16,z=1 --hands 400 \\
        --opponents policy rule rule:hold_until=3 --json search-basic.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.arena import ArenaConfig, run_arena  # noqa: E402
from agents.base import Agent  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.training.evaluate import summarize_learner  # noqa: E402
from rummy_env.ruleset import GAMES, make_ruleset  # noqa: E402
from rummy_env.vector import VectorGame  # noqa: E402


def search_spec(policy: str, budget: str) -> str:
    return f"search:policy={policy}" + (f",{budget}" if budget else "")


def policy_positions(game: str, policy: str, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` (observation, mask) rows drawn evenly from 64 hands of the policy's greedy self-play."""
    agent = make_agent(policy, make_ruleset(game, 2), seed=seed)
    vector = VectorGame(game, 64, 2, backend="numba")
    vector.reset(seed=seed)
    observations, masks = [], []
    finished = np.zeros(64, bool)
    while not finished.all():
        rows = np.flatnonzero(~finished)
        observations.append(vector.observations[rows].copy())
        masks.append(vector.action_masks[rows].copy())
        vector.step_rows(rows, agent.act_batch(vector.observations[rows], vector.action_masks[rows]))
        finished[rows] |= vector.terminated[rows] | vector.truncated[rows]
    observations, masks = np.concatenate(observations), np.concatenate(masks)
    picked = np.random.default_rng(seed).choice(len(masks), size=min(count, len(masks)), replace=False)
    return observations[np.sort(picked)], masks[np.sort(picked)]


def decision_rate(spec: str, game: str, observations: np.ndarray, masks: np.ndarray, batch: int) -> dict:
    """Decisions per CPU second of ``spec`` on the rows, ``batch`` at a time, and the share searched."""
    agent = make_agent(spec, make_ruleset(game, 2), seed=0)
    start = time.process_time()
    for at in range(0, len(masks), batch):
        agent.act_batch(observations[at:at + batch], masks[at:at + batch])
    spent = time.process_time() - start
    return {"decisions_per_s": len(masks) / spent, "searched": agent.searched / agent.decisions,
            "rollouts_per_searched": agent.engine.rollouts_played / max(agent.searched, 1)}


class TimedAgent(Agent):
    """An agent whose ``act_batch`` time (CPU) and decisions are counted."""

    def __init__(self, inner: Agent):
        super().__init__(inner.rules)
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.decisions = 0

    def reset(self, seed=None):
        self.inner.reset(seed)

    def act_batch(self, observations, masks):
        start = time.process_time()
        actions = self.inner.act_batch(observations, masks)
        self.seconds += time.process_time() - start
        self.decisions += len(masks)
        return actions

    def act(self, observation, action_mask):
        return int(self.act_batch(observation[None], action_mask[None])[0])


def strength(spec: str, game: str, opponent: str, hands: int, seed: int) -> dict:
    """The search agent's results against ``opponent`` on duplicate deals, and its decisions/s in that play."""
    timed: list[TimedAgent] = []

    def factory(agent_spec: str, index: int) -> Agent:
        agent = make_agent(agent_spec, make_ruleset(game, 2), seed=index)
        if index == 0:
            timed.append(TimedAgent(agent))
            return timed[-1]
        return agent

    config = ArenaConfig(game=game, agents=(spec, opponent), hands=hands, seed=seed)
    records = run_arena(config, workers=1, progress=False, factory=factory)
    result = summarize_learner(records)
    decisions, seconds = sum(t.decisions for t in timed), sum(t.seconds for t in timed)
    result["decisions_per_s"] = decisions / seconds if seconds else float("nan")
    return result


def describe(result: dict) -> str:
    return (f"won {100 * result['win_rate']:.1f}% [{100 * result['win_rate_low']:.1f}, "
            f"{100 * result['win_rate_high']:.1f}] of {result['decided']} decided ({result['hands']} hands), "
            f"{result['points']:+.2f} [{result['points_low']:+.2f}, {result['points_high']:+.2f}] points/hand, "
            f"{result['decisions_per_s']:.0f} decisions/s in play")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Budgets and settings: agents.policy_search, docs/agents.md.")
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=GAMES, help="games (default: all)")
    parser.add_argument("--policy", default=None,
                        help="policy spec to search with (default: pretrained:GAME for each game)")
    parser.add_argument("--budgets", nargs="+", default=["worlds=8", "worlds=16,z=1", "worlds=16,depth=2"],
                        help="settings after the policy, e.g. worlds=16,depth=2 (default: three budgets)")
    parser.add_argument("--positions", type=int, default=200, help="positions timed per budget (default 200)")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 32],
                        help="rows per act_batch call when timing (default: 1 and 32)")
    parser.add_argument("--runs", type=int, default=3, help="timing runs, medians printed (default 3)")
    parser.add_argument("--hands", type=int, default=0, help="arena hands per opponent (default 0: speed only)")
    parser.add_argument("--opponents", nargs="+", default=["policy"],
                        help="arena opponents; 'policy' is the same policy without search (default: policy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the positions and the arena deals (default 0)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.runs < 1 or args.hands < 0 or min(args.batch) < 1:
        parser.error("--positions, --runs and --batch must be >= 1 and --hands >= 0")
    figures: dict = {}
    for game in args.games:
        policy = args.policy or f"pretrained:{game}"
        observations, masks = policy_positions(game, policy, args.positions, args.seed)
        for budget in args.budgets:
            spec = search_spec(policy, budget)
            make_agent(spec, make_ruleset(game, 2))  # a bad budget stops here, before any timing
            row = figures.setdefault(game, {}).setdefault(budget or "defaults", {})
            for batch in args.batch:
                runs = [decision_rate(spec, game, observations, masks, batch) for _ in range(args.runs)]
                rate = statistics.median(r["decisions_per_s"] for r in runs)
                row[f"batch {batch}"] = rate
                print(f"{game:>7} {budget or 'defaults':<32} batch {batch:>3}: {rate:8.1f} decisions/s "
                      f"({100 * runs[0]['searched']:.0f}% searched, {runs[0]['rollouts_per_searched']:.0f} rollouts "
                      f"each; median of {args.runs}, CPU time)", flush=True)
            for opponent in args.opponents if args.hands else ():
                against = policy if opponent == "policy" else opponent
                result = strength(spec, game, against, args.hands, args.seed)
                row[f"vs {opponent}"] = result
                print(f"{game:>7} {budget or 'defaults':<32} vs {against}: {describe(result)}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
