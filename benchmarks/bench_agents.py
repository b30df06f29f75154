"""Agent speed: decisions per second of the rule agent (and the search agent) in each game.

The agent plays seat 0 against the rule agent through the engine and the encoding (as in the
arena); only the time spent in the measured agent's ``act`` counts. Hands are dealt from seeds
0, 1, 2, ... until ``--seconds`` of agent time have been spent per game.

    python benchmarks/bench_agents.py                       # rule agent, 3 s per game
    python benchmarks/bench_agents.py --agents rule search --seconds 10
    python benchmarks/bench_agents.py --games indian --players 4

``agent_figures(seconds)`` returns the same figures as a dict, for a combined benchmark script.

``--batch N`` times the rule agent's ``act_batch`` instead: N hands are played side by side
(every seat by the rule agent) and each round's observations go to ``act_batch`` at once; the
old path, ``act`` row by row on the Python solver (``solver.use_compiled(False)``), decides the
same rows in the same run (its answers are checked equal), so the ratio holds whatever else the
machine is doing. CPU time (``time.process_time``), median of ``--runs`` runs.

    python benchmarks/bench_agents.py --batch 256 --seconds 3 --runs 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.registry import make_agent  # noqa: E402
from rummy_env.encoding import ObservationEncoder, action_layout, action_mask  # noqa: E402
from rummy_env import solver  # noqa: E402
from rummy_env.game import GameState  # noqa: E402

from rummy_env.ruleset import GAMES, make_ruleset  # noqa: E402


def decisions_per_second(spec: str, game: str, seconds: float, num_players: int = 2) -> dict:
    """{"decisions_per_s", "decisions", "hands", "agent_seconds"} for agent ``spec`` in seat 0."""
    agent = make_agent(spec, make_ruleset(game, num_players), seed=0)
    opponents = [make_agent("rule", make_ruleset(game, num_players), seed=s) for s in range(1, num_players)]
    moves = action_layout(game).moves
    decisions = hands = 0
    spent = 0.0
    seed = 0
    while spent < seconds:
        state = GameState.new(game, num_players, seed=f"bench:{seed}")
        encoder = ObservationEncoder(state.rules)
        seats = [agent, *opponents]
        for s, player in enumerate(seats):
            player.reset(seed=seed * 10 + s)
        while not state.is_over and spent < seconds:
            seat = state.current
            observation = encoder.encode(state, seat)
            mask = action_mask(state)
            if seat == 0:
                start = time.perf_counter()
                action = agent.act(observation, mask)
                spent += time.perf_counter() - start
                decisions += 1
            else:
                action = seats[seat].act(observation, mask)
            state.apply(moves[action])
        hands += state.is_over
        seed += 1
    return {"decisions_per_s": decisions / spent if spent else 0.0, "decisions": decisions, "hands": hands,
            "agent_seconds": spent}


def batch_rates(game: str, seconds: float, batch: int, num_players: int = 2, seed: int = 0) -> dict:
    """Decisions/s of ``act_batch`` (compiled) and of ``act`` on the Python solver, on the same rows.

    ``batch`` hands are played side by side until ``seconds`` of ``act_batch`` time are spent.
    """
    fast = make_agent("rule", make_ruleset(game, num_players), seed=0)
    slow = make_agent("rule", make_ruleset(game, num_players), seed=0)
    moves = action_layout(game).moves
    hand = 0

    def deal():
        nonlocal hand
        hand += 1
        state = GameState.new(game, num_players, seed=f"batch:{seed}:{hand}")
        return state, ObservationEncoder(state.rules)

    games = [deal() for _ in range(batch)]
    fast_time = slow_time = 0.0
    decisions = 0
    while fast_time < seconds:
        observations = np.stack([encoder.encode(state, state.current) for state, encoder in games])
        masks = np.stack([action_mask(state) for state, _ in games])
        solver.use_compiled(True)
        start = time.process_time()
        actions = fast.act_batch(observations, masks)
        fast_time += time.process_time() - start
        solver.use_compiled(False)
        start = time.process_time()
        old = [slow.act(o, m) for o, m in zip(observations, masks)]
        slow_time += time.process_time() - start
        solver.use_compiled(True)
        if old != actions.tolist():
            raise AssertionError(f"{game}: act_batch and act disagree on "
                                 f"{sum(a != b for a, b in zip(old, actions))} rows")
        decisions += len(actions)
        for i, ((state, _), action) in enumerate(zip(games, actions.tolist())):
            state.apply(moves[action])
            if state.is_over:
                games[i] = deal()
    return {"batch_per_s": decisions / fast_time, "act_python_per_s": decisions / slow_time, "decisions": decisions}


def batch_figures(seconds: float, runs: int, batch: int, games: tuple[str, ...] = GAMES, num_players: int = 2) -> dict:
    """{game: (act_batch decisions/s, old path decisions/s, ratio)}: medians over ``runs`` runs."""
    out = {}
    for game in games:
        got = [batch_rates(game, seconds, batch, num_players, seed=run) for run in range(runs)]
        fast = statistics.median(g["batch_per_s"] for g in got)
        slow = statistics.median(g["act_python_per_s"] for g in got)
        ratio = statistics.median(g["batch_per_s"] / g["act_python_per_s"] for g in got)
        out[game] = (fast, slow, ratio)
    return out


def agent_figures(seconds: float = 3.0, agents: tuple[str, ...] = ("rule",), games: tuple[str, ...] = GAMES,
                  num_players: int = 2) -> dict:
    """{agent: {game: decisions/s}} for each agent and game (``seconds`` of agent time each)."""
    return {spec: {game: round(decisions_per_second(spec, game, seconds, num_players)["decisions_per_s"], 1)
                   for game in games} for spec in agents}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description="Decisions per second of the rule (and search) agent per game.")
    parser.add_argument("--seconds", type=float, default=3.0, help="agent time measured per agent and game (default 3)")
    parser.add_argument("--agents", nargs="+", default=["rule"],
                        help="agent specs to time (default: rule; try rule search)")
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=GAMES, help="games to time (default: all)")
    parser.add_argument("--players", type=int, default=2, help="players per hand (default 2)")
    parser.add_argument("--batch", type=int, default=0,
                        help="time the rule agent's act_batch on this many hands side by side (see above)")
    parser.add_argument("--runs", type=int, default=3, help="with --batch: runs per game, medians printed (default 3)")
    args = parser.parse_args(argv)
    if args.batch:
        if args.batch < 1 or args.runs < 1 or not args.seconds > 0:
            parser.error("--batch and --runs must be >= 1 and --seconds > 0")
        figures = batch_figures(args.seconds, args.runs, args.batch, tuple(args.games), args.players)
        print(f"{'game':>7} {'act_batch/s':>12} {'act (python solver)/s':>22} {'ratio':>6}   "
              f"(CPU time, median of {args.runs} runs, {args.batch} hands side by side)")
        for game, (fast, slow, ratio) in figures.items():
            print(f"{game:>7} {fast:>12,.0f} {slow:>22,.0f} {ratio:>6.2f}", flush=True)
        return figures
    figures = {}
    for spec in args.agents:
        figures[spec] = {}
        for game in args.games:
            got = decisions_per_second(spec, game, args.seconds, args.players)
            figures[spec][game] = round(got["decisions_per_s"], 1)
            print(f"{spec:>8} {game:>7} {args.players}p: {got['decisions_per_s']:9.1f} decisions/s "
                  f"({got['decisions']} decisions, {got['hands']} hands finished)", flush=True)
    return figures


if __name__ == "__main__":
    main()
