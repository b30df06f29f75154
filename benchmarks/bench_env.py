"""Environment speed: random legal play through ``rummy_env.env()``.

Each step reads the acting agent's observation and action mask (``env.last()``), picks a
uniformly random legal action from the mask and plays it. Prints steps/s per game with 2 players,
the median of ``--runs`` runs of ``--seconds`` each, by wall clock and per CPU second of this
process. Targets are judged on the CPU figure: it does not count time other work on the machine
takes, so it is the steadier one. When ``rlcard``, ``open_spiel`` (``pyspiel``)
or PettingZoo's gin rummy (``pettingzoo==1.26.1`` with rlcard) are importable, their gin rummy is
timed the same way in the same process and the ratios are printed; a missing one is skipped.

    python benchmarks/bench_env.py --seconds 3 --runs 5
    python benchmarks/bench_env.py --games indian --players 4

It also times the Gymnasium single-agent wrapper (``make_single_agent``, random legal learner
actions against its default random opponents): learner steps per CPU second, the median of
``--runs`` runs, next to the loop it replaced (``AecSingleAgent`` in
``tests/test_single_agent_lockstep.py``, one hand at a time through ``rummy_env.env``) timed the same
way in the same process; ``--no-wrapper`` skips it.

Targets (docs/benchmarks.md): >= 35,000 steps/s Indian, >= 20,000 Basic and römi.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rummy_env.aec_env import ENV_NAMES, raw_env  # noqa: E402

from rummy_env.ruleset import GAMES  # noqa: E402
TARGETS = {"indian": 35_000, "basic": 20_000, "romi": 20_000}


def rummy_steps_per_second(game: str, seconds: float, num_players: int = 2, seed: int = 0) -> tuple[float, float]:
    """(steps per wall second, steps per CPU second) of random legal play through ``env(game)``,
    reading the observation and mask at every step."""
    env = raw_env(game, num_players)
    rng = random.Random(seed)
    env.reset(seed=seed)
    steps = 0
    start, start_cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for _ in range(200):
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.reset()
                continue
            legal = observation["action_mask"].nonzero()[0]
            env.step(int(legal[int(rng.random() * legal.size)]))
            steps += 1
        now = time.perf_counter()
        if now >= deadline:
            return steps / (now - start), steps / (time.process_time() - start_cpu)


def wrapper_steps_per_cpu_second(make, seconds: float, seed: int = 0) -> float:
    """Learner steps per CPU second of ``make()``, a single-agent Gymnasium env, with uniformly
    random legal learner actions (each step also plays the opponents' moves up to the learner's turn)."""
    env = make()
    rng = random.Random(seed)
    env.reset(seed=seed)
    steps = 0
    start, start_cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for _ in range(100):
            legal = np.flatnonzero(env.action_masks())
            _, _, terminated, truncated, _ = env.step(int(legal[int(rng.random() * legal.size)]))
            steps += 1
            if terminated or truncated:
                env.reset()
        if time.perf_counter() >= deadline:
            return steps / (time.process_time() - start_cpu)


def _reference_wrapper():
    """The single-agent loop over the PettingZoo env that the wrapper replaced (kept in the tests)."""
    tests = Path(__file__).resolve().parents[1] / "tests"
    sys.path.insert(0, str(tests))
    try:
        from test_single_agent_lockstep import AecSingleAgent
    finally:
        sys.path.remove(str(tests))
    return AecSingleAgent


def wrapper_figures(seconds: float = 2.0, runs: int = 3, games=GAMES, num_players: int = 2) -> dict[str, dict]:
    """Per game: the median learner steps per CPU second of ``make_single_agent`` and of the
    reference loop (or why the reference was skipped), and their ratio."""
    from rummy_env.single_agent import make_single_agent

    try:
        reference = _reference_wrapper()
    except ImportError as error:
        reference = f"skipped: {error}"
    out = {}
    for game in games:
        row = {"players": num_players, "wrapper": statistics.median(
            wrapper_steps_per_cpu_second(lambda: make_single_agent(game, num_players=num_players), seconds, run)
            for run in range(runs))}
        if isinstance(reference, str):
            row["reference"] = reference
        else:
            row["reference"] = statistics.median(
                wrapper_steps_per_cpu_second(lambda: reference(game, num_players=num_players), seconds, run)
                for run in range(runs))
            row["ratio"] = row["wrapper"] / row["reference"]
        out[game] = row
    return out


# ----------------------------------------------------------------------------- reference engines


def _rlcard_gin(seconds: float, seed: int = 0) -> float:
    import rlcard

    env = rlcard.make("gin-rummy", config={"seed": seed})
    rng = random.Random(seed)
    state, _ = env.reset()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        legal = list(state["legal_actions"])
        state, _ = env.step(legal[int(rng.random() * len(legal))])
        steps += 1
        if env.is_over():
            state, _ = env.reset()
    return steps / (time.perf_counter() - start)


def _open_spiel_gin(seconds: float, seed: int = 0) -> float:
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    state = game.new_initial_state()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if state.is_terminal():
            state = game.new_initial_state()
            continue
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            continue
        state.observation_tensor()
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.random() * len(legal))])
        steps += 1
    return steps / (time.perf_counter() - start)


def _pettingzoo_gin(seconds: float, seed: int = 0) -> float:
    try:
        from pettingzoo.classic import gin_rummy_v4
    except ImportError as error:  # gone from PettingZoo after 1.26, and it needs rlcard
        raise ImportError(f"pettingzoo.classic.gin_rummy_v4 is not importable (pettingzoo==1.26.1 with rlcard): "
                          f"{error.msg[:60]}") from None

    env = gin_rummy_v4.env()
    rng = random.Random(seed)
    env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.reset()
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[int(rng.random() * legal.size)]))
        steps += 1
    return steps / (time.perf_counter() - start)


REFERENCES: dict[str, Callable[[float], float]] = {
    "rlcard gin-rummy": _rlcard_gin,
    "open_spiel gin_rummy (C++, with observation)": _open_spiel_gin,
    "pettingzoo gin_rummy_v4": _pettingzoo_gin,
}


def reference_figures(seconds: float, runs: int = 3) -> dict[str, float | str]:
    """Median steps/s of each installed reference gin rummy, or why it was skipped."""
    out: dict[str, float | str] = {}
    for name, measure in REFERENCES.items():
        try:
            out[name] = statistics.median(measure(seconds) for _ in range(runs))
        except ImportError as error:
            out[name] = f"skipped: {error}"
        except Exception as error:  # a reference engine that breaks must not stop our figures
            out[name] = f"skipped: {type(error).__name__}: {error}"
    return out


def env_figures(seconds: float = 2.0, runs: int = 3, games=GAMES, num_players: int = 2) -> dict[str, dict]:
    """Per game: median steps/s over ``runs`` runs, by wall clock and by this process's CPU time.

    ``{game: {"env", "players", "steps_per_s", "steps_per_cpu_s", "runs", "target"}}``; on a shared
    machine the CPU-time figure is the steadier one.
    """
    out = {}
    for game in games:
        rates = [rummy_steps_per_second(game, seconds, num_players, seed=run) for run in range(runs)]
        out[game] = {"env": ENV_NAMES[game], "players": num_players,
                     "steps_per_s": statistics.median(wall for wall, _ in rates),
                     "steps_per_cpu_s": statistics.median(cpu for _, cpu in rates),
                     "runs": rates, "target": TARGETS[game]}
    return out


def target_verdict(row: dict) -> str:
    """``"meets"`` or ``"below"``: the steps per CPU second of ``row`` against its target."""
    return "meets" if row["steps_per_cpu_s"] >= row["target"] else "below"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one timed run (default 2)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the median is printed (default 3)")
    parser.add_argument("--games", nargs="+", choices=GAMES, default=list(GAMES), help="games to time")
    parser.add_argument("--players", type=int, default=2, help="players per game (default 2)")
    parser.add_argument("--no-references", action="store_true", help="skip the reference gin rummy engines")
    parser.add_argument("--no-wrapper", action="store_true", help="skip the single-agent wrapper figures")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.runs < 1:
        parser.error("--seconds must be > 0 and --runs >= 1")

    figures = env_figures(args.seconds, args.runs, args.games, args.players)
    print(f"rummy_env: random legal play, observation + mask every step, {args.players} players, "
          f"median of {args.runs} x {args.seconds:g}s")
    print(f"  {'env':<18} {'steps/s':>10} {'per CPU s':>10}   target (judged per CPU second)")
    for game, row in figures.items():
        verdict = target_verdict(row)
        print(f"  {row['env']:<18} {row['steps_per_s']:>10,.0f} {row['steps_per_cpu_s']:>10,.0f}   "
              f"{row['target']:,} ({verdict})")
    if not args.no_wrapper:
        wrapper = wrapper_figures(args.seconds, args.runs, args.games, args.players)
        print(f"single-agent wrapper (make_single_agent, random opponents): learner steps per CPU s, "
              f"median of {args.runs}; before = the loop over rummy_env.env it replaced")
        for game, row in wrapper.items():
            before = row["reference"]
            before_text = before if isinstance(before, str) else f"{before:>10,.0f}   after/before x{row['ratio']:.2f}"
            print(f"  {ENV_NAMES[game]:<18} after {row['wrapper']:>10,.0f}   before {before_text}")
        figures["wrapper"] = wrapper
    if not args.no_references:
        refs = reference_figures(args.seconds, args.runs)
        print("reference engines (gin rummy, same process):")
        for name, value in refs.items():
            if isinstance(value, str):
                print(f"  {name:<46} {value}")
                continue
            ratios = ", ".join(f"{g} x{figures[g]['steps_per_s'] / value:.2f}" for g in figures)
            print(f"  {name:<46} {value:>10,.0f} steps/s   (rummy_env / it: {ratios})")
        figures["references"] = refs
    return figures


if __name__ == "__main__":
    main()
