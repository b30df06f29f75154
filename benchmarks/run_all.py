"""Every figure of the project in one run: engine, solver, environment, agents.

Each section is the function of its own script (``bench_engine.engine_figures``,
``bench_solver.solver_figures``, ``bench_env.env_figures``, ``bench_agents.agent_figures``),
so the figures match the scripts run one by one. Medians of ``--runs`` runs.

    python benchmarks/run_all.py --seconds 2 --runs 3 --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_agents import agent_figures  # noqa: E402
from bench_engine import engine_figures  # noqa: E402
from bench_env import env_figures  # noqa: E402
from bench_solver import solver_figures  # noqa: E402


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one timed run")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the median is kept")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = parser.parse_args(argv)
    started = time.time()
    figures = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "engine": engine_figures(args.seconds, args.runs),
        "solver": solver_figures(args.seconds / 2, max(args.runs, 3)),
        "env": env_figures(args.seconds, args.runs),
        "agents": agent_figures(args.seconds),
    }
    print("engine (random legal play, legal_moves + apply):")
    for name, fig in figures["engine"].items():
        print(f"  {name:<12}{fig['games_per_s']:>10,.1f} games/s{fig['moves_per_s']:>12,.0f} moves/s")
    print("solver (hands/s, one core):")
    for name, rate in figures["solver"].items():
        print(f"  {name:<24}{rate:>12,.0f}")
    print("environment (steps/s with observation and mask, 2 players):")
    for name, fig in figures["env"].items():
        print(f"  {name:<20}{json.dumps(fig)}")
    print("agents (decisions/s):")
    for name, fig in figures["agents"].items():
        print(f"  {name:<20}{json.dumps(fig)}")
    print(f"done in {time.time() - started:.0f} s; load average at start {figures['machine']['load']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    return figures


if __name__ == "__main__":
    main()
