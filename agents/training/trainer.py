"""Self-play PPO for the rummy games: clone a teacher, then improve against an opponent pool.

``train(config)`` runs the whole job (docs/training.md):

1. **Cloning warm start** (``bc_warm_start``): the teacher (the rule agent) plays every seat of
   ``bc_decisions`` decisions; the network learns its moves (cross-entropy over the legal
   actions) and the value of each position (the shaped return of the hand); agreement on held-out
   decisions is logged per decision type (draw, discard, declare, meld, place).
2. **PPO** (clipped objective, GAE, masked logits and entropy, advantage normalisation, learning
   rate annealing, gradient clipping, optional value clipping, KL early stop) on rollouts of
   ``rollout_size`` learner decisions collected by worker processes through ``rummy_env.vector``
   against the pool (``agents.training.pool``), with potential-based shaping
   (``agents.training.rollout``). Chains cut by the end of a rollout are bootstrapped.
3. **Evaluation** every ``eval_every`` updates and at the end, greedy, on fixed duplicate deals
   against ``eval_opponents``; the best checkpoint by points per hand against the rule agent is
   kept as ``best.pt``.

The run folder holds ``config.yaml`` (the resolved config), TensorBoard event files,
``checkpoint.pt`` (policy plus training state, written atomically every ``checkpoint_every``
updates and on Ctrl-C), ``best.pt`` and ``final.pt`` (policies), ``results.json`` and
``learning_curves.png``. Collection is re-seeded at every checkpoint, so a run resumed from its
last periodic checkpoint repeats exactly what the uninterrupted run did (CPU, same worker count).
"""

from __future__ import annotations

import json
import math
import os
import random
import resource
import shutil
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from agents.policy import CheckpointError, build_network, load_training_state, save_checkpoint

from .config import ConfigError, TrainConfig, default_run_dir, to_dict
from .curves import plot_learning_curves
from .evaluate import describe, evaluate
from .pool import OpponentPool
from .ppo import advantages, explained_variance, ppo_loss
from .rollout import DECISION_TYPES, Rollout, decision_types
from .workers import Stations

CHECKPOINT = "checkpoint.pt"


def model_config(config: TrainConfig) -> dict:
    """The network settings of ``config`` (what a checkpoint stores under ``"model"``)."""
    if config.network == "card":
        return {"kind": "card", "channels": config.channels, "global_size": config.global_size}
    return {"kind": "mlp", "hidden": list(config.mlp_hidden), "activation": "tanh"}


def seed_everything(seed: int) -> torch.Generator:
    """Seed ``random``, numpy and torch in one place; the generator that shuffles minibatches."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


class Run:
    """What a run keeps between updates, and writes to its checkpoint."""

    def __init__(self, config: TrainConfig, run_dir: Path):
        self.config = config
        self.run_dir = run_dir
        self.generator = seed_everything(config.seed)
        self.model = build_network(config.game, config.num_players, model_config(config))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.learning_rate, eps=1e-5)
        self.pool = OpponentPool(config.pool_self_fraction, config.pool_rule_min, config.pool_random,
                                 config.pool_max_snapshots, config.pfsp_power)
        self.snapshots: dict[str, dict] = {}
        self.update = 0
        self.learner_steps = 0
        self.env_steps = 0
        self.cloned = False
        self.best_points = -math.inf
        self.history: list[dict] = []
        self.evaluations: list[dict] = []
        self.clone_report: dict = {}
        self.cpu_seconds = 0.0
        self.cpu_seconds_all = 0.0

    # ------------------------------------------------------------------ checkpoints

    def training_state(self) -> dict:
        return {
            "optimizer": self.optimizer.state_dict(), "pool": self.pool.state(),
            "snapshots": self.snapshots, "generator": self.generator.get_state(),
            "torch_rng": torch.get_rng_state(), "counters": {
                "update": self.update, "learner_steps": self.learner_steps, "env_steps": self.env_steps,
                "cloned": self.cloned, "best_points": self.best_points, "cpu_seconds": self.cpu_seconds,
                "cpu_seconds_all": self.cpu_seconds_all},
            "history": json.dumps(self.history), "evaluations": json.dumps(self.evaluations),
            "clone_report": json.dumps(self.clone_report),
        }

    def save(self, name: str = CHECKPOINT, with_state: bool = True) -> Path:
        return save_checkpoint(self.run_dir / name, self.model, self.config.game, self.config.num_players,
                               to_dict(self.config), self.training_state() if with_state else None)

    def restore(self, path: Path) -> None:
        model, meta, state = load_training_state(path)
        if meta.get("model") != model_config(self.config):
            raise CheckpointError(f"checkpoint {str(path)!r}: its network {meta.get('model')} is not the "
                                  f"config's {model_config(self.config)}")
        try:
            self.model.load_state_dict(model.state_dict())
            self.optimizer.load_state_dict(state["optimizer"])
            self.pool.load_state(state["pool"])
            self.snapshots = dict(state["snapshots"])
            self.generator.set_state(state["generator"])
            torch.set_rng_state(state["torch_rng"])
            counters = state["counters"]
            self.update = int(counters["update"])
            self.learner_steps = int(counters["learner_steps"])
            self.env_steps = int(counters["env_steps"])
            self.cloned = bool(counters["cloned"])
            self.best_points = float(counters["best_points"])
            self.cpu_seconds = float(counters["cpu_seconds"])
            self.cpu_seconds_all = float(counters.get("cpu_seconds_all", 0.0))
            self.history = json.loads(state["history"])
            self.evaluations = json.loads(state["evaluations"])
            self.clone_report = json.loads(state["clone_report"])
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CheckpointError(f"checkpoint {str(path)!r}: its training state is incomplete or foreign "
                                  f"({type(error).__name__}: {error})") from None


# ----------------------------------------------------------------------------- cloning


def clone_teacher(run: Run, stations: Stations, writer, log) -> dict:
    """Behaviour cloning of ``bc_teacher`` (moves and values); held-out agreement per decision type."""
    config = run.config
    stations.reseed(config.seed + 7919)
    data = stations.collect(run.model.state_dict(), config.bc_decisions, teacher=config.bc_teacher)
    returns = advantages(data.rewards, np.zeros(len(data), np.float32), data.next_index, data.done,
                         data.bootstrap, config.gamma, 1.0)[1]
    count = len(data)
    held = max(1, int(count * config.bc_holdout))
    order = np.random.default_rng(config.seed).permutation(count)
    train_rows, test_rows = order[held:], order[:held]
    obs = torch.from_numpy(data.observations)
    masks = torch.from_numpy(data.masks)
    actions = torch.from_numpy(data.actions)
    targets = torch.from_numpy(returns)
    types = decision_types(config.game)[data.actions]
    optimizer = torch.optim.Adam(run.model.parameters(), lr=config.bc_learning_rate)
    report: dict = {}
    steps_per_epoch = math.ceil(len(train_rows) / config.bc_batch_size)
    total = steps_per_epoch * config.bc_epochs
    step = 0
    for epoch in range(config.bc_epochs):
        run.model.train()
        permutation = torch.from_numpy(train_rows)[torch.randperm(len(train_rows), generator=run.generator)]
        for start in range(0, len(permutation), config.bc_batch_size):
            rows = permutation[start:start + config.bc_batch_size]
            for group in optimizer.param_groups:  # cosine decay to 10%
                group["lr"] = config.bc_learning_rate * (0.55 + 0.45 * math.cos(math.pi * step / total))
            logits, values = run.model(obs[rows], masks[rows])
            policy_loss = torch.nn.functional.cross_entropy(logits, actions[rows])
            value_loss = 0.5 * ((values - targets[rows]) ** 2).mean()
            loss = policy_loss + config.vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(run.model.parameters(), config.max_grad_norm * 10)
            optimizer.step()
            step += 1
        report = clone_accuracy(run.model, obs[test_rows], masks[test_rows], actions[test_rows], types[test_rows],
                                targets[test_rows])
        for name, value in report.items():
            writer.add_scalar(f"clone/{name}", value, epoch + 1)
        log(f"cloning epoch {epoch + 1}/{config.bc_epochs}: held-out agreement {100 * report['accuracy']:.1f}% "
            + " ".join(f"{t} {100 * report[f'accuracy_{t}']:.0f}%" for t in DECISION_TYPES
                       if not math.isnan(report[f'accuracy_{t}'])))
    report["decisions"] = count
    run.model.eval()
    return report


@torch.no_grad()
def clone_accuracy(model, obs, masks, actions, types, returns) -> dict:
    """Held-out agreement with the teacher, overall and per decision type, and the value error."""
    model.eval()
    chosen, values = [], []
    for start in range(0, len(obs), 2048):
        logits, value = model(obs[start:start + 2048], masks[start:start + 2048])
        chosen.append(logits.argmax(dim=-1))
        values.append(value)
    agree = (torch.cat(chosen) == actions).numpy()
    report = {"accuracy": float(agree.mean()), "value_mse": float(((torch.cat(values) - returns) ** 2).mean())}
    for index, name in enumerate(DECISION_TYPES):
        rows = types == index
        report[f"accuracy_{name}"] = float(agree[rows].mean()) if rows.any() else math.nan
    return report


# ----------------------------------------------------------------------------- PPO


def ppo_update(run: Run, rollout: Rollout, adv: np.ndarray, returns: np.ndarray, value_only: bool) -> dict:
    """The epochs of one PPO update on ``rollout``; mean losses and the statistics CleanRL logs."""
    config = run.config
    model, optimizer = run.model, run.optimizer
    obs = torch.from_numpy(rollout.observations)
    masks = torch.from_numpy(rollout.masks)
    actions = torch.from_numpy(rollout.actions)
    old_logp = torch.from_numpy(rollout.logp)
    old_values = torch.from_numpy(rollout.values)
    adv_t = torch.from_numpy(adv)
    returns_t = torch.from_numpy(returns)
    n = len(rollout)
    totals: dict[str, float] = {}
    batches = 0
    model.train()
    for epoch in range(config.update_epochs):
        permutation = torch.randperm(n, generator=run.generator)
        kls = []
        for start in range(0, n, config.minibatch_size):
            rows = permutation[start:start + config.minibatch_size]
            logits, values = model(obs[rows], masks[rows])
            loss, parts = ppo_loss(logits, values, masks[rows], actions[rows], old_logp[rows], old_values[rows],
                                   adv_t[rows], returns_t[rows], config.clip_coef, config.clip_value,
                                   config.ent_coef, config.vf_coef)
            if value_only:
                loss = config.vf_coef * 0.5 * ((values - returns_t[rows]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            optimizer.step()
            for key, value in parts.items():
                totals[key] = totals.get(key, 0.0) + float(value)
            kls.append(float(parts["approx_kl"]))
            batches += 1
        if config.target_kl and not value_only and np.mean(kls) > config.target_kl:
            totals["early_stop_epoch"] = epoch + 1
            break
    model.eval()
    stats = {key: value / batches for key, value in totals.items() if key != "early_stop_epoch"}
    stats["epochs"] = totals.get("early_stop_epoch", config.update_epochs)
    stats["explained_variance"] = explained_variance(rollout.values, returns)
    return stats


def hand_statistics(rollout: Rollout, pool: OpponentPool) -> dict:
    """True results of the hands the rollout finished: per opponent the learner's share of decided
    hands won and points per hand; hand length and stalemate rate. Feeds the pool's win rates."""
    stats: dict = {}
    by_opponent: dict[str, list] = {}
    turns, stalemates = [], 0
    for opponent, seats, outcome, winner, points, hand_turns in rollout.hands:
        turns.append(hand_turns)
        stalemates += outcome == "stalemate"
        if opponent == "self":
            continue
        seat = seats[0]
        record = by_opponent.setdefault(opponent, [0, 0, 0.0, 0])
        record[3] += 1
        record[2] += points[seat]
        if winner is not None:
            record[1] += 1
            record[0] += winner == seat
            pool.record(opponent, float(winner == seat))
    for opponent, (wins, decided, points, hands) in by_opponent.items():
        stats[f"train/win_rate/{opponent}"] = wins / decided if decided else math.nan
        stats[f"train/points_per_hand/{opponent}"] = points / hands
    if turns:
        stats["charts/hand_length_turns"] = float(np.mean(turns))
        stats["charts/stalemate_rate"] = stalemates / len(turns)
        stats["charts/hands"] = len(turns)
    return stats


# ----------------------------------------------------------------------------- the run


def train(config: TrainConfig, resume: str | os.PathLike | None = None, log=print) -> dict:
    """Train as ``config`` says (continuing ``resume``'s checkpoint if given); the final results."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    torch.set_num_threads(config.learner_threads)
    run_dir = Path(resume) if resume else Path(config.run_dir or default_run_dir(config))
    config.run_dir = str(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    run = Run(config, run_dir)
    if resume:
        path = run_dir / CHECKPOINT
        if not path.is_file():
            raise CheckpointError(f"run folder {str(run_dir)!r}: no {CHECKPOINT} to resume from")
        run.restore(path)
        log(f"resuming {run_dir} at update {run.update} ({run.learner_steps:,} learner decisions)")
    (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(config), sort_keys=False))
    writer = SummaryWriter(str(run_dir))
    if not resume:
        writer.add_text("hyperparameters", "|field|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in to_dict(config).items()))
    num_updates = math.ceil(config.total_steps / config.rollout_size) if config.total_steps else 0
    stations = Stations(to_dict(config), model_config(config))
    cpu_start = time.process_time()
    all_start = _cpu_of_all()
    wall_start = time.perf_counter()
    bar = None
    try:
        if config.bc_warm_start and not run.cloned:
            log(f"cloning the {config.bc_teacher} agent: {config.bc_decisions:,} decisions")
            run.clone_report = clone_teacher(run, stations, writer, log)
            run.cloned = True
            _evaluate(run, writer, config.eval_deals, log, None)
            run.save()
        stations.reseed(config.seed + run.update)
        stations.pool_update(*_pool_arguments(run), run.snapshots)
        bar = tqdm(total=num_updates * config.rollout_size, initial=min(run.update, num_updates) * config.rollout_size,
                   unit="step", disable=not config.progress, dynamic_ncols=True, smoothing=0.1)
        while run.update < num_updates:
            if config.time_limit_minutes and time.perf_counter() - wall_start > 60 * config.time_limit_minutes:
                log(f"time limit of {config.time_limit_minutes} minutes reached at update {run.update}")
                break
            started = time.perf_counter()
            if config.anneal_lr:
                for group in run.optimizer.param_groups:
                    group["lr"] = config.learning_rate * (1 - run.update / num_updates)
            rollout = stations.collect(run.model.state_dict(), config.rollout_size)
            collected = time.perf_counter()
            adv, returns = advantages(rollout.rewards, rollout.values, rollout.next_index, rollout.done,
                                      rollout.bootstrap, config.gamma, config.gae_lambda)
            stats = ppo_update(run, rollout, adv, returns, value_only=run.update < config.value_warmup_updates)
            run.update += 1
            run.learner_steps += len(rollout)
            run.env_steps += rollout.env_steps
            elapsed = time.perf_counter() - started
            stats |= hand_statistics(rollout, run.pool)
            stats |= {"charts/learning_rate": run.optimizer.param_groups[0]["lr"],
                      "charts/env_steps_per_s": rollout.env_steps / (collected - started),
                      "charts/learner_steps_per_s": len(rollout) / elapsed,
                      "charts/collect_seconds": collected - started, "charts/update_seconds": elapsed - (collected - started),
                      "pool/learner_elo": run.pool.learner_elo}
            names, probs = run.pool.probabilities()  # before this update's snapshot: what the workers hold
            for name, p in zip(names, probs):
                stats[f"pool/probability/{name}"] = float(p)
            for name in run.pool.opponents:
                stats[f"pool/win_rate/{name}"] = run.pool.win_rate[name]
                stats[f"pool/elo/{name}"] = run.pool.elo[name]
            for key, value in stats.items():
                prefix = "" if "/" in key else "losses/"
                writer.add_scalar(prefix + key, value, run.learner_steps)
            run.history.append({"update": run.update, "learner_steps": run.learner_steps, **{
                k: v for k, v in stats.items() if isinstance(v, float) and math.isfinite(v)}})
            bar.update(len(rollout))
            bar.set_postfix({"steps/s": f"{stats['charts/env_steps_per_s']:.0f}",
                             **{f"won vs {n}": f"{100 * run.pool.win_rate[n]:.0f}%" for n in run.pool.fixed}})
            if config.pool_snapshot_every and run.update % config.pool_snapshot_every == 0 and config.pool_max_snapshots:
                name = f"snapshot-{run.update}"
                gone = run.pool.add_snapshot(name)
                run.snapshots[name] = {k: v.clone() for k, v in run.model.state_dict().items()}
                run.snapshots.pop(gone, None)
            if config.eval_every and run.update % config.eval_every == 0 and run.update < num_updates:
                _evaluate(run, writer, config.eval_deals, log, bar)
            if run.update % config.checkpoint_every == 0:
                run.cpu_seconds += time.process_time() - cpu_start
                cpu_start = time.process_time()
                run.save()
                stations.reseed(config.seed + run.update)
            stations.pool_update(*_pool_arguments(run), {n: s for n, s in run.snapshots.items() if n not in names})
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        stations.close()
        run.cpu_seconds += time.process_time() - cpu_start
        run.cpu_seconds_all += _cpu_of_all() - all_start
        run.save()
        log(f"interrupted: checkpoint written at update {run.update}; continue with --resume {run_dir}")
        raise
    finally:
        if bar is not None:
            bar.close()
        stations.close()
    run.cpu_seconds += time.process_time() - cpu_start
    log("final evaluation")
    final = _evaluate(run, writer, config.final_eval_deals, log, None, final=True)
    run.cpu_seconds_all += _cpu_of_all() - all_start
    run.save()
    run.save("final.pt", with_state=False)
    if not (run_dir / "best.pt").exists():
        shutil.copyfile(run_dir / "final.pt", run_dir / "best.pt")
    results = {"run_dir": str(run_dir), "updates": run.update, "learner_steps": run.learner_steps,
               "env_steps": run.env_steps, "cpu_seconds": run.cpu_seconds_all,
               "cpu_seconds_main_process": run.cpu_seconds,
               "wall_seconds": time.perf_counter() - wall_start, "clone": run.clone_report,
               "final_evaluation": final, "best_points_vs_rule": run.best_points, "config": to_dict(config)}
    (run_dir / "results.json").write_text(json.dumps(results, indent=2, default=float))
    plot_learning_curves(run.history, run.evaluations, run_dir / "learning_curves.png",
                         title=f"{config.game}, {config.num_players} players, seed {config.seed}")
    writer.close()
    log(describe(final))
    log(f"run folder: {run_dir} (tensorboard --logdir {run_dir.parent})")
    return results


def _cpu_of_all() -> float:
    """CPU seconds of this process and of its finished children (the collecting and arena processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _pool_arguments(run: Run) -> tuple[list[str], list[float]]:
    names, probs = run.pool.probabilities()
    return names, [float(p) for p in probs]


def _evaluate(run: Run, writer, deals: int, log, bar, final: bool = False) -> dict:
    config = run.config
    path = run.save("evaluated.pt", with_state=False)
    results = evaluate(str(path), config.game, config.num_players, config.eval_opponents, deals,
                       seed=config.seed + (10_000 if final else 0), workers=max(1, config.num_workers))
    for opponent, r in results.items():
        for key in ("win_rate", "win_rate_low", "win_rate_high", "points", "points_low", "points_high"):
            writer.add_scalar(f"eval/{opponent}/{key}", r[key], run.learner_steps)
    run.evaluations.append({"learner_steps": run.learner_steps, "final": final, "results": results})
    target = "rule" if "rule" in results else next(iter(results))
    if results[target]["points"] > run.best_points:
        run.best_points = results[target]["points"]
        os.replace(path, run.run_dir / "best.pt")
    else:
        path.unlink(missing_ok=True)
    text = describe(results)
    (bar.write if bar is not None else log)(f"evaluation at {run.learner_steps:,} decisions:\n{text}")
    return results


__all__ = ["train", "model_config", "ConfigError"]
