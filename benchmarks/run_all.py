"""Every figure of the project in one run: engine, solver, environment, agents.

Each section is the function of its own script (``bench_engine.engine_figures``,
``bench_solver.solver_figures``, ``bench_env.env_figures``, ``bench_agents.agent_figures``,
``bench_play.play_figures``),
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
from bench_play import play_figures  # noqa: E402
from bench_env import env_figures, target_verdict  # noqa: E402
from bench_solver import solver_figures  # noqa: E402


def report(figures: dict) -> str:
    """The figures as text tables for people (``--json`` writes them for programs)."""
    machine = figures["machine"]
    load = ", ".join(f"{x:.1f}" for x in machine["load"])
    lines = [f"Python {machine['python']}, {machine['cpus']} cores, load average at start {load}", "",
             "Rules engine: random legal play, legal_moves() + apply() each move",
             f"  {'game':<12}{'games/s':>10}{'moves/s':>12}"]
    for name, fig in figures["engine"].items():
        lines.append(f"  {name:<12}{fig['games_per_s']:>10,.1f}{fig['moves_per_s']:>12,.0f}")
    lines += ["", "Solver: hands/s, one core, CPU time", f"  {'case':<24}{'hands/s':>12}"]
    for name, rate in figures["solver"].items():
        lines.append(f"  {name:<24}{rate:>12,.0f}")
    lines += ["", "Environment: random legal play with observation and mask every step",
              f"  {'env':<18}{'players':>8}{'steps/s':>10}{'per CPU s':>11}   target (judged per CPU second)"]
    for row in figures["env"].values():
        lines.append(f"  {row['env']:<18}{row['players']:>8}{row['steps_per_s']:>10,.0f}"
                     f"{row['steps_per_cpu_s']:>11,.0f}   {row['target']:,} ({target_verdict(row)})")
    games = sorted({game for per_game in figures["agents"].values() for game in per_game})
    lines += ["", "Agents: decisions/s", f"  {'agent':<10}" + "".join(f"{game:>10}" for game in games)]
    for spec, per_game in figures["agents"].items():
        lines.append(f"  {spec:<10}" + "".join(f"{per_game.get(game, float('nan')):>10,.1f}" for game in games))
    if "play" in figures:
        columns = list(next(iter(figures["play"].values())))
        lines += ["", "Play loop (rummy_env.vector): arena hands/s, search agent decisions/s, per CPU second",
                  f"  {'game':<10}" + "".join(f"{c:>20}" for c in columns)]
        for game, row in figures["play"].items():
            lines.append(f"  {game:<10}" + "".join(f"{row[c]:>20,.1f}" for c in columns))
    return "\n".join(lines)


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
        "play": play_figures(runs=args.runs, hands=50, positions=10),
    }
    print(report(figures))
    print(f"done in {time.time() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    return figures


if __name__ == "__main__":
    main()
