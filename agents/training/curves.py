"""The learning-curve picture of a run: evaluation results and training statistics against decisions."""

from __future__ import annotations

from pathlib import Path


def plot_learning_curves(history: list[dict], evaluations: list[dict], path: str | Path, title: str = "") -> Path:
    """Four panels: evaluation share of decided hands won and points per hand (95% intervals),
    training win rate per pool opponent, and the PPO losses; written as a PNG to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(12, 8))
    (won, points), (train, losses) = axes
    opponents = sorted({o for e in evaluations for o in e["results"]})
    for opponent in opponents:
        rows = [(e["learner_steps"], e["results"][opponent]) for e in evaluations if opponent in e["results"]]
        x = [s for s, _ in rows]
        for axis, key, scale in ((won, "win_rate", 100), (points, "points", 1)):
            y = [r[key] * scale for _, r in rows]
            low = [r[f"{key}_low"] * scale for _, r in rows]
            high = [r[f"{key}_high"] * scale for _, r in rows]
            axis.plot(x, y, marker="o", label=f"vs {opponent}")
            axis.fill_between(x, low, high, alpha=0.2)
    won.set(title="evaluation: decided hands won (%), 95% interval", xlabel="learner decisions", ylim=(0, 100))
    won.axhline(50, color="grey", linewidth=0.8, linestyle="--")
    points.set(title="evaluation: points per hand, 95% interval", xlabel="learner decisions")
    points.axhline(0, color="grey", linewidth=0.8, linestyle="--")
    steps = [h["learner_steps"] for h in history]
    keys = sorted({k for h in history for k in h if k.startswith("train/win_rate/")})
    for key in keys:
        train.plot(steps, [100 * h.get(key, float("nan")) for h in history], label=key.rsplit("/", 1)[-1], alpha=0.8)
    train.set(title="training hands: share of decided hands won (%), per update", xlabel="learner decisions",
              ylim=(0, 100))
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl"):
        losses.plot(steps, [h.get(key, float("nan")) for h in history], label=key)
    losses.set(title="PPO", xlabel="learner decisions")
    for axis in (won, points, train, losses):
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=8)
        axis.grid(alpha=0.3)
    figure.suptitle(title)
    figure.tight_layout()
    target = Path(path)
    figure.savefig(target, dpi=90)
    plt.close(figure)
    return target
