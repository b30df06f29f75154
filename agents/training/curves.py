"""The learning-curve picture of a run: evaluation results and training statistics against decisions.

``python -m agents.training.curves RUN_DIR`` draws it again from the run's ``checkpoint.pt``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from .pool import is_fixed

SMOOTHING = 5
"""Updates averaged in the training-hands panel."""


def plot_learning_curves(history: list[dict], evaluations: list[dict], path: str | Path, title: str = "") -> Path:
    """Six panels: evaluation share of decided hands won and points per hand (shaded: 95% intervals), the
    panel score (what picks best.pt), training win rate per pool opponent, the PPO losses, and the
    speed (learner decisions/s and CPU-minutes used); written as a PNG to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 3, figsize=(18, 10), layout="constrained")
    (won, points, score), (train, losses, speed) = axes
    opponents = sorted({o for e in evaluations for o in e["results"]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for opponent in opponents:
        for final in (False, True):
            rows = [(e["learner_steps"], e["results"][opponent]) for e in evaluations
                    if opponent in e["results"] and e.get("final", False) == final]
            if not rows:
                continue
            x = [s for s, _ in rows]
            for axis, key, scale in ((won, "win_rate", 100), (points, "points", 1)):
                y = [r[key] * scale for _, r in rows]
                low = [r[f"{key}_low"] * scale for _, r in rows]
                high = [r[f"{key}_high"] * scale for _, r in rows]
                color = colors[opponents.index(opponent) % len(colors)]
                if final:  # other, more deals: a point of its own with its interval
                    axis.errorbar(x, y, yerr=[[a - b for a, b in zip(y, low)], [b - a for a, b in zip(y, high)]],
                                  fmt="D", capsize=4, color=color, label=f"vs {opponent}, final (more deals)")
                else:
                    axis.plot(x, y, marker="o", color=color, label=f"vs {opponent}")
                    axis.fill_between(x, low, high, color=color, alpha=0.2)
    won.set(title="evaluation: decided hands won (%)", xlabel="learner decisions", ylim=(0, 101))
    won.axhline(50, color="grey", linewidth=0.8, linestyle="--")
    points.set(title="evaluation: points per hand", xlabel="learner decisions")
    points.axhline(0, color="grey", linewidth=0.8, linestyle="--")
    steps = [h["learner_steps"] for h in history]
    fixed = sorted({k.removeprefix("train/win_rate/") for h in history for k in h
                    if k.startswith("train/win_rate/") and is_fixed(k.removeprefix("train/win_rate/"))})
    for name in fixed:
        key = f"train/win_rate/{name}"
        values = [100 * h.get(key, float("nan")) for h in history]
        smooth = [_mean(values[max(0, i - SMOOTHING + 1):i + 1]) for i in range(len(values))]
        train.plot(steps, smooth, label=f"vs {name}")
    train.axhline(50, color="grey", linewidth=0.8, linestyle="--")
    train.set(title=f"training hands: decided hands won (%), {SMOOTHING}-update mean",
              xlabel="learner decisions", ylim=(0, 101))
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl"):
        losses.plot(steps, [h.get(key, float("nan")) for h in history], label=key)
    losses.set(title="PPO", xlabel="learner decisions")
    scored = [(e["learner_steps"], e["panel_score"]) for e in evaluations
              if not e.get("final") and e.get("panel_score") is not None and math.isfinite(e["panel_score"])]
    if scored:
        score.plot([x for x, _ in scored], [y for _, y in scored], marker="o", label="panel score")
    score.axhline(0, color="grey", linewidth=0.8, linestyle="--")
    score.set(title="panel score (picks best.pt): points per hand", xlabel="learner decisions")
    rates = [h.get("charts/learner_decisions_per_s", h.get("charts/learner_steps_per_s", float("nan")))
             for h in history]
    speed.plot(steps, rates, label="learner decisions/s", color="tab:blue")
    speed.set(title="speed", xlabel="learner decisions", ylabel="learner decisions/s")
    extra = ([], [])
    if any("charts/cpu_minutes" in h for h in history):
        cpu = speed.twinx()
        cpu.plot(steps, [h.get("charts/cpu_minutes", float("nan")) for h in history], color="tab:orange",
                 label="CPU-minutes, all processes")
        cpu.set_ylabel("CPU-minutes, all processes")
        extra = cpu.get_legend_handles_labels()
    for axis in (won, points, score, train, losses, speed):
        handles, labels = axis.get_legend_handles_labels()
        if axis is speed:
            handles, labels = handles + extra[0], labels + extra[1]
        if handles:  # below the panel, off the curves
            axis.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2,
                        frameon=False)
        axis.grid(alpha=0.3)
    figure.suptitle(title)
    target = Path(path)
    figure.savefig(target, dpi=90)
    plt.close(figure)
    return target


def _mean(values: list[float]) -> float:
    finite = [v for v in values if v == v]
    return sum(finite) / len(finite) if finite else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.training.curves",
                                     description="Draw a training run's learning curves again from its checkpoint.pt.")
    parser.add_argument("run_dir", help="the run folder")
    parser.add_argument("--out", help="the PNG to write (default: RUN_DIR/learning_curves.png)")
    args = parser.parse_args(argv)
    from agents.policy import CheckpointError, load_training_state

    run_dir = Path(args.run_dir)
    try:
        _, meta, state = load_training_state(run_dir / "checkpoint.pt")
    except CheckpointError as error:
        parser.error(str(error))
    config = meta.get("config", {})
    title = f"{config.get('game')}, {config.get('num_players')} players, seed {config.get('seed')}"
    out = plot_learning_curves(json.loads(state["history"]), json.loads(state["evaluations"]),
                               args.out or run_dir / "learning_curves.png", title)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
