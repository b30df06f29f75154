"""How much a search at play time is worth with each world model, up to knowing the hidden hands.

A diagnostic, not an agent: the policy plays one seat of duplicate-dealt hands against an
opponent, and at each of its decisions it either plays alone or searches
(``agents.policy_search``) in worlds of one kind:

* ``none``: no search, the policy alone;
* ``uniform``: hidden cards guessed uniformly from what is unseen, as the ``search:policy=`` agent
  guesses them;
* ``true``: the true hands, only the stock's order guessed (``agents.policy_search.true_worlds``):
  what no fair player can know; it bounds what any better guess of the hidden cards can add.

With ``--opponent-model opponent`` the rollouts play the other seat as the real opponent does (the
expert iteration of training does so); the default, ``policy``, plays it as the policy, as the
``search:policy=`` agent must. Reported: the share of decided hands won (95% Wilson interval),
points per hand (95% interval over deals) and seconds per run.

    python experiments/search_worlds.py --game indian --modes none uniform true --deals 300
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.policy_search import Actors, PolicySearch, SearchBudget, load_policy  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.stats import wilson_interval  # noqa: E402
from rummy_env.game import GameState  # noqa: E402
from rummy_env.ruleset import GAMES, make_ruleset  # noqa: E402
from rummy_env.vector import VectorGame  # noqa: E402

MODES = ("none", "uniform", "true")


def play(game: str, mode: str, policy_spec: str, opponent_spec: str, deals: int, budget: SearchBudget,
         opponent_model: str, win_points: float | None, seed: int) -> dict:
    """The policy (searching in ``mode`` worlds) against the opponent on ``deals`` deals, both seatings."""
    policy, points = load_policy(policy_spec, make_ruleset(game, 2))
    opponent = make_agent(opponent_spec, make_ruleset(game, 2), seed=seed)
    if win_points is None:  # the policy's own objective, as the search:policy= agent plays it
        win_points = points.win_points if points is not None else 0.0
    engine = PolicySearch(make_ruleset(game, 2), policy, budget, points, win_points=win_points)
    hands = 2 * deals
    vector = VectorGame(game, hands, 2, backend="numba")
    for deal in range(deals):
        for seat in range(2):
            vector.load(2 * deal + seat, GameState.new(game, 2, seed=seed * 1_000_003 + deal))
    ours = np.tile([0, 1], deals)
    done = np.zeros(hands, bool)
    result_points, won = np.zeros(hands), np.full(hands, -1)
    rng = np.random.default_rng(seed)
    started = time.process_time()
    while not done.all():
        active = np.flatnonzero(~done)
        observations, masks = vector.observations[active], vector.action_masks[active]
        mine = vector.to_act[active] == ours[active]
        actions = np.zeros(active.size, np.int64)
        if mine.any():
            rows = active[mine]
            seeds = rng.integers(0, 2**62, size=rows.size).tolist()
            if mode == "none":
                probabilities, _ = policy(observations[mine], masks[mine])
                actions[mine] = np.where(masks[mine] != 0, probabilities, -1.0).argmax(axis=1)
            elif mode == "true":
                actors = [Actors(opponent, (1 - int(ours[i]),)) if opponent_model == "opponent" else None for i in rows]
                actions[mine] = engine.search_states(observations[mine], masks[mine], [vector.state(i) for i in rows],
                                                     [int(ours[i]) for i in rows], actors, seeds).actions
            else:
                actions[mine] = engine.search(observations[mine], masks[mine], seeds).actions
        if (~mine).any():
            actions[~mine] = opponent.act_batch(observations[~mine], masks[~mine])
        vector.step_rows(active, actions)
        for k in np.flatnonzero(vector.terminated[active] | vector.truncated[active]):
            slot = active[k]
            done[slot] = True
            hand = vector.results[slot]
            result_points[slot] = hand.points[ours[slot]]
            won[slot] = -1 if hand.winner is None else int(hand.winner == ours[slot])
    decided = won >= 0
    wins = int(won[decided].sum())
    low, high = wilson_interval(wins, int(decided.sum()))
    per_deal = result_points.reshape(deals, 2).mean(axis=1)
    half = 1.96 * per_deal.std(ddof=1) / math.sqrt(deals) if deals > 1 else math.nan
    return {"mode": mode, "decided": int(decided.sum()), "won": wins / max(1, int(decided.sum())), "won_low": low,
            "won_high": high, "points": float(result_points.mean()), "points_half_width": float(half),
            "cpu_seconds": time.process_time() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="Modes: " + ", ".join(MODES))
    parser.add_argument("--game", choices=GAMES, default="indian")
    parser.add_argument("--policy", default=None, help="the policy spec (default pretrained:GAME)")
    parser.add_argument("--opponent", default="rule", help="the opponent's agent spec (default rule)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--deals", type=int, default=200,
                        help="duplicate deals, each played in both seats (default 200)")
    parser.add_argument("--budget", default="worlds=16,candidates=3,depth=0,confidence=0.9",
                        help="the search's budget settings (agents.policy_search; default %(default)s)")
    parser.add_argument("--opponent-model", choices=("policy", "opponent"), default="policy",
                        help="who plays the other seat in the rollouts of mode true (default policy)")
    parser.add_argument("--win-points", type=float, default=None,
                        help="points a won hand adds to a rollout's result, its share taken from the other seat "
                             "(default: the policy's own win_bonus / reward_scale, as search:policy= plays)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals {args.deals}: at least 1")
    from agents.policy_search import budget_from_settings

    budget = budget_from_settings(args.budget)
    policy = args.policy or f"pretrained:{args.game}"
    print(f"{args.game}, {policy} against {args.opponent}, {args.deals} deals x 2 seatings, budget {args.budget}")
    for mode in args.modes:
        row = play(args.game, mode, policy, args.opponent, args.deals, budget, args.opponent_model,
                   args.win_points, args.seed)
        print(f"  {mode:8s} won {100 * row['won']:.1f}% [{100 * row['won_low']:.1f}, {100 * row['won_high']:.1f}] "
              f"of {row['decided']} decided hands, {row['points']:+.1f} [±{row['points_half_width']:.1f}] points "
              f"per hand, {row['cpu_seconds']:.0f} CPU-s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
