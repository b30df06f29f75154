"""Statistics for the arena: confidence intervals and ratings.

* ``wilson_interval``: the Wilson score interval of a proportion (hand win rates).
* ``mean_interval``: a mean with its normal-approximation interval (points per hand).
* ``elo_ratings``: Elo-scale ratings from head-to-head results, the maximum-likelihood
  Bradley-Terry fit (order independent), with half a win and half a loss added to every pair
  that met so that an agent that always wins gets a finite rating.
* ``openskill_ratings``: openskill Plackett-Luce ratings from multi-player results, updated in
  the order given.
* ``choice_ratings``: Elo-scale ratings under the Luce choice model (a seat wins a decided hand
  with probability proportional to its strength: Bradley-Terry at two players, any table size
  alike), fitted by maximum likelihood with some ratings held fixed (``rummy-bench``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile."""


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` out of ``trials``; (0, 1) when there are no trials."""
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"wilson_interval: need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its normal-approximation interval (sample sd / sqrt n).

    With fewer than two values the interval is unknown and given as (nan, nan).
    """
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = math.fsum(values) / n
    if n < 2:
        return mean, math.nan, math.nan
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(variance / n)
    return mean, mean - half, mean + half


def elo_ratings(num_agents: int, results: Sequence[tuple[int, int, float]], prior: float = 0.5,
                mean: float = 1500.0, iterations: int = 2000) -> list[float]:
    """Elo-scale ratings from head-to-head results ``(i, j, score of i)``; score 1 win, 0 loss, 0.5 draw.

    The Bradley-Terry strengths are fitted by minorisation-maximisation; every pair that met gets
    ``prior`` extra wins each way. Agents that met nobody get ``mean``. The ratings average ``mean``
    over the agents that played.
    """
    wins = [[0.0] * num_agents for _ in range(num_agents)]
    for i, j, score in results:
        if i == j:
            continue
        wins[i][j] += score
        wins[j][i] += 1.0 - score
    games = [[wins[i][j] + wins[j][i] for j in range(num_agents)] for i in range(num_agents)]
    for i in range(num_agents):
        for j in range(num_agents):
            if games[i][j]:
                wins[i][j] += prior
                games[i][j] += 2 * prior
    played = [any(games[i]) for i in range(num_agents)]
    strength = [1.0] * num_agents
    for _ in range(iterations):
        change = 0.0
        new = strength[:]
        for i in range(num_agents):
            if not played[i]:
                continue
            total_wins = sum(wins[i])
            denominator = sum(games[i][j] / (strength[i] + strength[j]) for j in range(num_agents) if games[i][j])
            new[i] = total_wins / denominator
        logs = [math.log(new[i]) for i in range(num_agents) if played[i]]
        shift = math.fsum(logs) / len(logs) if logs else 0.0
        for i in range(num_agents):
            if played[i]:
                value = math.exp(math.log(new[i]) - shift)
                change = max(change, abs(value - strength[i]) / strength[i])
                strength[i] = value
        if change < 1e-10:
            break
    scale = 400.0 / math.log(10.0)
    return [mean + scale * math.log(strength[i]) if played[i] else mean for i in range(num_agents)]


def expected_score(rating: float, other: float) -> float:
    """The Elo expected score of ``rating`` against ``other``."""
    return 1.0 / (1.0 + 10.0 ** ((other - rating) / 400.0))


def openskill_ratings(num_agents: int, games: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[dict]:
    """openskill Plackett-Luce ratings from games ``(agents, ranks)``, in order; rank 1 is best.

    An agent listed more than once in a game (it holds several seats) takes part with its best
    rank. Returns per agent ``{"mu", "sigma", "ordinal"}`` (ordinal = mu - 3 sigma).
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=str(i)) for i in range(num_agents)]
    for agents, ranks in games:
        best: dict[int, int] = {}
        for agent, rank in zip(agents, ranks):
            best[agent] = min(rank, best.get(agent, rank))
        if len(best) < 2:
            continue
        order = sorted(best)
        teams = [[ratings[a]] for a in order]
        updated = model.rate(teams, ranks=[best[a] for a in order])
        for a, team in zip(order, updated):
            ratings[a] = team[0]
    return [{"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for r in ratings]


def choice_ratings(num_agents: int, tables: Sequence[tuple[Sequence[int], dict[int, float]]],
                   fixed: dict[int, float] | None = None, prior: float = 0.5, iterations: int = 5000) -> list[float]:
    """Elo-scale ratings from decided hands at tables ``(seats, wins)``: the agent in each seat, and
    the decided hands each agent won there.

    Model (Luce's choice axiom): a decided hand is won by agent ``i`` with probability
    ``c_i g_i / sum_j c_j g_j`` over the agents at the table, ``c`` the seats each holds and
    ``g = 10 ** (rating / 400)``; at two players this is Bradley-Terry, the model behind Elo (a
    rating 400 higher wins 10 hands to 1). Every seat of a table adds ``prior`` wins to its agent
    there, so that one that always wins (or loses) has a finite rating. The ratings in ``fixed`` are held;
    the others are the maximum-likelihood fit (minorisation-maximisation, Hunter 2004). With
    nothing fixed they average 0 over the agents that played; an agent that met nobody gets 0.
    """
    fixed = fixed or {}
    counts, wins, decided = [], [], []
    for seats, won in tables:
        count: dict[int, int] = {}
        for agent in seats:
            count[agent] = count.get(agent, 0) + 1
        with_prior = {agent: won.get(agent, 0.0) + prior * c for agent, c in count.items()}
        counts.append(count)
        wins.append(with_prior)
        decided.append(math.fsum(with_prior.values()))
    strength = [10.0 ** (fixed.get(i, 0.0) / 400.0) for i in range(num_agents)]
    total_wins = [0.0] * num_agents
    for won in wins:
        for agent, w in won.items():
            total_wins[agent] += w
    free = [i for i in range(num_agents) if i not in fixed and total_wins[i] > 0]
    for _ in range(iterations):
        exposure = [0.0] * num_agents
        for count, d in zip(counts, decided):
            pool = math.fsum(c * strength[a] for a, c in count.items())
            for agent, c in count.items():
                exposure[agent] += d * c / pool
        new = {i: total_wins[i] / exposure[i] for i in free}
        if not fixed and new:
            shift = math.fsum(math.log(v) for v in new.values()) / len(new)
            new = {i: math.exp(math.log(v) - shift) for i, v in new.items()}
        change = max((abs(v - strength[i]) / strength[i] for i, v in new.items()), default=0.0)
        for i, v in new.items():
            strength[i] = v
        if change < 1e-12:
            break
    return [fixed[i] if i in fixed else 400.0 * math.log10(strength[i]) for i in range(num_agents)]


def percent_text(rate: float, low: float, high: float) -> str:
    """A rate as the project writes rates for people: ``54.3% [50.3, 58.3]`` (a 95% interval in
    percent); ``n/a`` when nothing was counted."""
    if math.isnan(rate) or math.isnan(low):
        return "n/a"
    return f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def points_text(mean: float, low: float, high: float) -> str:
    """Mean points as the project writes them for people: ``+10.8 [+7.1, +14.5]`` (a 95% interval);
    ``n/a`` when nothing was counted."""
    if math.isnan(mean):
        return "n/a"
    interval = "n/a" if math.isnan(low) else f"[{low:+.1f}, {high:+.1f}]"
    return f"{mean:+.1f} {interval}"
