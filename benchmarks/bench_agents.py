"""Agent speed: decisions per second of the rule agent (and the search agent) in each game.

The agent plays seat 0 against the rule agent through the engine and the encoding (as in the
arena); only the time spent in the measured agent's ``act`` counts. Hands are dealt from seeds
0, 1, 2, ... until ``--seconds`` of agent time have been spent per game.

    python benchmarks/bench_agents.py                       # rule agent, 3 s per game
    python benchmarks/bench_agents.py --agents rule search --seconds 10
    python benchmarks/bench_agents.py --games indian --players 4

``agent_figures(seconds)`` returns the same figures as a dict, for a combined benchmark script.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.registry import make_agent  # noqa: E402
from rummy_env.encoding import ObservationEncoder, action_layout, action_mask  # noqa: E402
from rummy_env.game import GameState  # noqa: E402

from rummy_env.ruleset import GAMES  # noqa: E402


def decisions_per_second(spec: str, game: str, seconds: float, num_players: int = 2) -> dict:
    """{"decisions_per_s", "decisions", "hands", "agent_seconds"} for agent ``spec`` in seat 0."""
    agent = make_agent(spec, game, num_players, seed=0)
    opponents = [make_agent("rule", game, num_players, seed=s) for s in range(1, num_players)]
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
    args = parser.parse_args(argv)
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
