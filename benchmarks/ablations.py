"""Ablations of the trainer: what each ingredient adds, several seeds each, with intervals.

    python benchmarks/ablations.py [--game indian] [--seeds 1 2 3] [--cpu-minutes 8]
                                   [--variants defaults no-cloning no-shaping ...] [--out runs/ablations]
    python benchmarks/ablations.py --report-only --out runs/ablations

Trains every variant (the defaults with one ingredient removed or changed, ``VARIANTS``) once per
seed with ``train.py``, each stopped at the same CPU budget (every process of the run together:
compute, not wall time, so runs on a busy machine stay comparable), then tables the final
evaluation of each run (``results.json``: the greedy policy on the same duplicate deals against
each opponent). Per variant it prints the mean over seeds of the share of decided hands won and of
the points per hand with a 95% Student-t interval over the seeds (the spread between runs, which
is what a user rerunning the command sees), each seed's figure, and the PPO decisions and
CPU-minutes reached. A run whose folder already holds ``results.json`` is not trained again, so an
interrupted sweep continues where it stopped. The table is written to ``OUT/ablations.md`` and
``OUT/ablations.json``. docs/training.md ("Ablations") quotes the measured table.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> (what it tests, the train.py options that make it)
VARIANTS = {
    "defaults": ("the trainer's defaults", []),
    "no-cloning": ("PPO from random weights (no cloning warm start)", ["--bc-warm-start", "false"]),
    "no-shaping": ("no potential-based shaping: the hand's result only", ["--shaping", "false"]),
    "self-play-only": ("no opponent pool: every hand against the current policy",
                       ["--pool-self-fraction", "1.0"]),
    "wide-network": ("the card network twice as wide (channels 64, global summary 256)",
                     ["--channels", "64", "--global-size", "256"]),
}
DEFAULT_VARIANTS = ["defaults", "no-cloning", "no-shaping", "self-play-only", "wide-network"]

# two-sided 95% quantiles of Student's t by degrees of freedom (1 ... 10); beyond, the normal's
T_975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def t_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean of ``values`` and its 95% Student-t interval (the mean twice for a single value)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    quantile = T_975[len(values) - 2] if len(values) - 1 <= len(T_975) else 1.96
    half = quantile * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def run_folder(out: Path, variant: str, seed: int) -> Path:
    return out / f"{variant}_s{seed}"


def train_command(arguments: argparse.Namespace, variant: str, seed: int) -> list[str]:
    """The ``train.py`` command of one run of the sweep."""
    opponents = arguments.opponents or ["rule", f"pretrained:{arguments.game}"]
    return [sys.executable, str(ROOT / "train.py"), "--game", arguments.game, "--num-players", str(arguments.players),
            "--seed", str(seed), "--run-dir", str(run_folder(arguments.out, variant, seed)),
            "--cpu-limit-minutes", str(arguments.cpu_minutes), "--total-steps", str(arguments.total_steps),
            "--num-workers", str(arguments.workers), "--eval-every", "1000000", "--eval-deals", "20",
            "--final-eval-deals", str(arguments.deals), "--eval-opponents", *opponents,
            "--final-eval-search-deals", "0", "--progress", "false",
            *arguments.extra, *VARIANTS[variant][1]]


def _cpu_minutes(result: dict) -> float:
    """A run's CPU-minutes, every process; NaN where the total is below the training process's own
    (a worker left unreaped at the end went uncounted, before the trainer waited for every worker)."""
    total, own = result["cpu_seconds"], result.get("cpu_seconds_main_process", 0.0)
    return total / 60 if total >= own else math.nan


def collect(out: Path, variants: list[str], seeds: list[int]) -> dict:
    """Per variant and opponent: each seed's result and the mean with its interval over seeds."""
    table: dict = {}
    for variant in variants:
        runs = []
        for seed in seeds:
            path = run_folder(out, variant, seed) / "results.json"
            if path.is_file():
                runs.append((seed, json.loads(path.read_text())))
        if not runs:
            continue
        opponents: dict = {}
        for name in runs[0][1]["final_evaluation"]:
            won = [100 * r["final_evaluation"][name]["win_rate"] for _, r in runs]
            points = [r["final_evaluation"][name]["points"] for _, r in runs]
            opponents[name] = {"won": t_interval(won), "points": t_interval(points), "won_by_seed": won,
                               "points_by_seed": points,
                               "hands_per_seed": runs[0][1]["final_evaluation"][name]["hands"]}
        table[variant] = {"what": VARIANTS[variant][0], "seeds": [s for s, _ in runs], "opponents": opponents,
                          "ppo_decisions": [r["learner_steps"] for _, r in runs],
                          "cpu_minutes": [_cpu_minutes(r) for _, r in runs]}
    return table


def _known_mean(values: list[float]) -> str:
    """The mean of the values that are known, or n/a."""
    known = [v for v in values if not math.isnan(v)]
    return f"{statistics.fmean(known):.1f}" if known else "n/a"


def markdown(table: dict) -> str:
    """The sweep as a Markdown table, one row per variant and opponent."""
    lines = ["| variant | opponent | seeds | won, mean [95% over seeds] | points per hand | won by seed | "
             "PPO decisions (M) | CPU-min |", "|---|---|---:|---|---|---|---:|---:|"]
    for variant, row in table.items():
        for name, result in row["opponents"].items():
            won, points = result["won"], result["points"]
            lines.append(
                f"| {variant} | {name} | {len(row['seeds'])} | {won[0]:.1f}% [{won[1]:.1f}, {won[2]:.1f}] | "
                f"{points[0]:+.1f} [{points[1]:+.1f}, {points[2]:+.1f}] | "
                + ", ".join(f"{w:.1f}" for w in result["won_by_seed"])
                + f" | {statistics.fmean(row['ppo_decisions']) / 1e6:.2f} | {_known_mean(row['cpu_minutes'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="docs/training.md, 'Ablations'")
    parser.add_argument("--game", default="indian", choices=["indian", "basic", "romi"])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--variants", nargs="+", default=DEFAULT_VARIANTS, choices=sorted(VARIANTS),
                        help=f"default: {' '.join(DEFAULT_VARIANTS)}")
    parser.add_argument("--cpu-minutes", type=float, default=8.0, help="CPU budget of each run, every process")
    parser.add_argument("--total-steps", type=int, default=1_200_000,
                        help="PPO decisions the learning rate anneals over (a run may stop earlier at its CPU budget)")
    parser.add_argument("--workers", type=int, default=1, help="collecting processes per run")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals per opponent in each final evaluation")
    parser.add_argument("--opponents", nargs="+", help="evaluation opponents (default: rule pretrained:GAME)")
    parser.add_argument("--out", type=Path, default=Path("runs/ablations"))
    parser.add_argument("--report-only", action="store_true", help="table the runs already in OUT, train nothing")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                        help="further train.py options for every run (last on the line)")
    arguments = parser.parse_args(argv)
    if arguments.players < 2:
        parser.error(f"--players {arguments.players}: a table has at least 2 players")
    if arguments.cpu_minutes <= 0:
        parser.error(f"--cpu-minutes {arguments.cpu_minutes}: must be positive")
    arguments.out.mkdir(parents=True, exist_ok=True)
    if not arguments.report_only:
        for seed in arguments.seeds:  # seed-major: a stopped sweep has every variant at its first seeds
            for variant in arguments.variants:
                folder = run_folder(arguments.out, variant, seed)
                if (folder / "results.json").is_file():
                    continue
                command = train_command(arguments, variant, seed)
                print(f"[{variant}, seed {seed}] " + " ".join(command[1:]), flush=True)
                with open(arguments.out / f"{variant}_s{seed}.log", "w") as log:
                    code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
                if code:
                    print(f"[{variant}, seed {seed}] train.py exited with {code}: see {folder}.log", flush=True)
                    return code
    table = collect(arguments.out, arguments.variants, arguments.seeds)
    if not table:
        print(f"no finished runs in {arguments.out}")
        return 1
    text = markdown(table)
    (arguments.out / "ablations.md").write_text(text + "\n")
    (arguments.out / "ablations.json").write_text(json.dumps(table, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
