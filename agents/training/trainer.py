"""Self-play PPO for the rummy games: clone a teacher, then improve against an opponent pool.

``train(config)`` runs the whole job (docs/training.md):

1. **Cloning warm start** (``bc_warm_start``): the teacher (``bc_teacher``, an agent spec) plays
   every seat of ``bc_decisions`` decisions; the network learns its moves (cross-entropy over the
   legal actions) and the value of each position (the shaped return of the hand); agreement on
   held-out decisions is logged per decision type (draw, discard, declare, meld, place).
2. **PPO** (clipped objective, GAE, masked logits and entropy, advantage normalisation, learning
   rate annealing, gradient clipping, optional value clipping, KL early stop) on rollouts of
   ``rollout_size`` learner decisions collected against the pool (``agents.training.pool``) with
   potential-based shaping (``rummy_env.shaping``). On the CPU the collecting processes
   learn from what they collected and average their gradients (``agents.training.learner``); with
   a GPU the rollouts go to a learner on it. The first ``value_warmup_updates`` updates train the
   value head alone.
3. **Evaluation** every ``eval_every`` updates, after cloning and at the end, greedy, on fixed
   duplicate deals against ``eval_opponents`` (by default the game's panel,
   ``agents.training.evaluate``); the checkpoint with the best panel score is the candidate for
   ``best.pt``, which at the end replays the final evaluation's deals: ``best.pt`` is it or the
   final policy, whichever scores higher there.

The run folder holds ``config.yaml`` (the resolved config), TensorBoard event files,
``checkpoint.pt`` (policy plus training state, written atomically every ``checkpoint_every``
updates and on Ctrl-C), ``best.pt`` and ``final.pt`` (policies), ``results.json``,
``learning_curves.png``, ``pinned/`` (the shipped policy it plays, ``agents.training.pinned``) and
``README.txt``, which says what each of them is.
Collection is re-seeded at every checkpoint, so a run resumed from its last periodic checkpoint
repeats exactly what the uninterrupted run did (CPU, same worker count).
"""

from __future__ import annotations

import collections
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

from agents.panel import is_search
from agents.policy import CheckpointError, build_network, load_training_state, save_checkpoint

from .config import ConfigError, TrainConfig, default_run_dir, resolve_device, to_dict, to_yaml
from .console import next_commands, progress_factory, write_run_readme
from .curves import plot_learning_curves
from .evaluate import describe, evaluate, expand, panel_score, scores
from .interrupts import INTERRUPTS
from .learner import PPOSettings
from .pinned import pin_shipped
from .pool import OpponentPool, is_fixed, snapshot_name
from .rollout import DECISION_TYPES
from .workers import Station, Summary, Workers, minibatch_count

CHECKPOINT = "checkpoint.pt"
RECORDING_CHUNKS = 20
"""The teacher's decisions are recorded in this many parts, so that its progress shows."""
CARD_RANK = 8
"""Card network: the features each card reads from each neighbour (agents/networks.py, layout 2)."""
CLONE_BATCH = 512
"""Samples per cloning step."""
CLONE_LEARNING_RATE = 1e-3
"""Adam step size of cloning (decayed along a cosine to 55%)."""
CLONE_HOLDOUT = 0.1
"""Share of the cloning data held out to measure agreement."""


def model_config(config: TrainConfig) -> dict:
    """The network settings of ``config`` (what a checkpoint stores under ``"model"``)."""
    if config.network == "card":
        return {"kind": "card", "channels": config.channels, "global_size": config.global_size, "layout": 2,
                "rank": CARD_RANK}
    return {"kind": "mlp", "hidden": list(config.mlp_hidden), "activation": "tanh"}


def seed_everything(seed: int) -> None:
    """Seed ``random``, numpy and torch in one place."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Run:
    """What a run keeps between updates, and writes to its checkpoint."""

    def __init__(self, config: TrainConfig, run_dir: Path):
        self.config = config
        self.run_dir = run_dir
        seed_everything(config.seed)
        self.model = build_network(config.game, config.num_players, model_config(config))
        self.model.eval()
        self.optimizer_state: dict | None = None
        self.pool = OpponentPool(config.pool_self_fraction, config.pool_rule_min, config.pool_max_snapshots,
                                 tuple(config.pool_opponents), config.pool_opponents_only)
        self.snapshots: dict[str, dict] = {}
        self.update = 0
        self.learner_steps = 0
        self.env_steps = 0
        self.cloned = False
        self.best_score = -math.inf
        self.history: list[dict] = []
        self.evaluations: list[dict] = []
        self.clone_report: dict = {}
        self.stand_ins = pin_shipped(expand(config.eval_opponents, config.game, config.num_players)
                                     + list(config.pool_opponents) + [config.bc_teacher],
                                     config.game, config.num_players, run_dir)
        self.cpu_seconds = 0.0
        self.cpu_seconds_all = 0.0

    # ------------------------------------------------------------------ checkpoints

    def training_state(self) -> dict:
        return {
            "optimizer": self.optimizer_state or {}, "pool": self.pool.state(),
            "snapshots": self.snapshots,
            "torch_rng": torch.get_rng_state(), "counters": {
                "update": self.update, "learner_steps": self.learner_steps, "env_steps": self.env_steps,
                "cloned": self.cloned, "best_score": self.best_score, "cpu_seconds": self.cpu_seconds,
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
            self.optimizer_state = state["optimizer"] or None
            self.pool.load_state(state["pool"])
            self.snapshots = dict(state["snapshots"])
            torch.set_rng_state(state["torch_rng"])
            counters = state["counters"]
            self.update = int(counters["update"])
            self.learner_steps = int(counters["learner_steps"])
            self.env_steps = int(counters["env_steps"])
            self.cloned = bool(counters["cloned"])
            self.best_score = float(counters["best_score"])
            self.cpu_seconds = float(counters["cpu_seconds"])
            self.cpu_seconds_all = float(counters.get("cpu_seconds_all", 0.0))
            self.history = json.loads(state["history"])
            self.evaluations = json.loads(state["evaluations"])
            self.clone_report = json.loads(state["clone_report"])
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CheckpointError(f"checkpoint {str(path)!r}: its training state is incomplete or foreign "
                                  f"({type(error).__name__}: {error})") from None


# ----------------------------------------------------------------------------- cloning


def clone_teacher(run: Run, workers: Workers, learner: Workers, central: Station | None, writer, log,
                  progress) -> dict:
    """Behaviour cloning of ``bc_teacher``: its moves and the value of each position, on
    ``bc_decisions`` decisions recorded with it in every seat; the held-out agreement per decision
    type."""
    config = run.config
    workers.reseed(config.seed + 7919)
    chunk = -(-config.bc_decisions // RECORDING_CHUNKS)
    recorded = 0
    with progress(total=config.bc_decisions, desc=f"recording {config.bc_teacher}", unit="decision") as bar:
        while recorded < config.bc_decisions:
            share = workers.share(min(chunk, config.bc_decisions - recorded))
            if central is None:
                recorded = sum(workers.record_teacher(share, config.bc_teacher))
            else:
                recorded = central.keep_teacher(workers.collect_teacher(share, config.bc_teacher))
            bar.update(min(recorded, config.bc_decisions) - bar.n)
    minibatches = minibatch_count(sum(learner.clone_split(CLONE_HOLDOUT, config.seed)), CLONE_BATCH)
    total_steps = minibatches * config.bc_epochs
    with progress(total=config.bc_epochs, desc="cloning", unit="epoch") as bar:
        for epoch in range(config.bc_epochs):  # the step size in a cosine decay to 55%
            rates = [CLONE_LEARNING_RATE * (0.55 + 0.45 * math.cos(math.pi * (epoch * minibatches + k) / total_steps))
                     for k in range(minibatches)]
            learner.clone_epoch(minibatches, rates, config.seed * 100 + epoch)
            report = clone_report(np.sum(learner.clone_accuracy(), axis=0))
            for name, value in report.items():
                writer.add_scalar(f"clone/{name}", value, epoch + 1)
            bar.update(1)
            bar.set_postfix_str(f"held-out agreement {100 * report['accuracy']:.1f}%")
    learner.clone_done()
    log(f"cloning: held-out agreement {100 * report['accuracy']:.1f}% ("
        + ", ".join(f"{t} {100 * report[f'accuracy_{t}']:.0f}%" for t in DECISION_TYPES
                    if not math.isnan(report[f'accuracy_{t}'])) + f") on {recorded:,} decisions")
    report["decisions"] = recorded
    return report


def clone_report(sums: np.ndarray) -> dict:
    """Agreement overall and per decision type, and the value error, from the processes' sums."""
    agree, count = sums[:-1].sum(axis=0)
    report = {"accuracy": float(agree / count) if count else math.nan,
              "value_mse": float(sums[-1, 0] / sums[-1, 1]) if sums[-1, 1] else math.nan}
    for index, name in enumerate(DECISION_TYPES):
        report[f"accuracy_{name}"] = float(sums[index, 0] / sums[index, 1]) if sums[index, 1] else math.nan
    return report


# ----------------------------------------------------------------------------- PPO


def ppo_settings(config: TrainConfig, update: int, num_updates: int) -> PPOSettings:
    """The settings of PPO update number ``update`` (learning rate annealed, warm-up, seed)."""
    rate = (config.learning_rate * (1 - update / num_updates) if config.anneal_lr and num_updates
            else config.learning_rate)
    return PPOSettings(epochs=config.update_epochs,
                       minibatches=minibatch_count(config.rollout_size, config.minibatch_size),
                       clip_coef=config.clip_coef, ent_coef=config.ent_coef,
                       vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm, target_kl=config.target_kl,
                       gamma=config.gamma, gae_lambda=config.gae_lambda, learning_rate=rate,
                       value_only=update < config.value_warmup_updates, seed=config.seed * 100_003 + update)


def oracle_share(config: TrainConfig, learner_steps: int) -> float:
    """The share of the learner's decisions that see the other hands (``oracle_decisions``): from 1
    at the first PPO decision linearly to 0 at ``oracle_decisions``."""
    if not config.oracle_decisions:
        return 0.0
    return max(0.0, 1.0 - learner_steps / config.oracle_decisions)


def hand_statistics(hands: list, pool: OpponentPool) -> tuple[dict, dict]:
    """True results of the hands an update finished: per opponent the learner's share of decided
    hands won and points per hand, and the share of the learner's turns played against it (a
    self-play hand counts a turn for every seat, so at a table of N it weighs N times a hand
    against an opponent); hand length and stalemate rate. Feeds the pool's win rates. Also
    (wins, decided) per opponent, for the progress bar."""
    stats: dict = {}
    by_opponent: dict[str, list] = {}
    learner_turns: collections.Counter = collections.Counter()
    turns, stalemates = [], 0
    for opponent, seats, outcome, winner, points, hand_turns in hands:
        turns.append(hand_turns)
        stalemates += outcome == "stalemate"
        learner_turns[opponent] += hand_turns * len(seats)
        if opponent == "self":
            continue
        won = winner in seats
        record = by_opponent.setdefault(opponent, [0, 0, 0.0, 0])
        record[3] += 1
        record[2] += float(np.mean([points[seat] for seat in seats]))
        if winner is not None:
            record[1] += 1
            record[0] += won
            pool.record(opponent, float(won))
    for opponent, (wins, decided, points, count) in by_opponent.items():
        if decided:
            stats[f"train/win_rate/{opponent}"] = wins / decided
        stats[f"train/points_per_hand/{opponent}"] = points / count
    total_turns = sum(learner_turns.values())
    if total_turns:
        stats |= {f"train/turn_share/{o}": count / total_turns for o, count in learner_turns.items()}
    if turns:
        stats["charts/hand_length_turns"] = float(np.mean(turns))
        stats["charts/stalemate_rate"] = stalemates / len(turns)
        stats["charts/hands"] = len(turns)
    return stats, {o: (r[0], r[1]) for o, r in by_opponent.items()}


# ----------------------------------------------------------------------------- the run


@INTERRUPTS.installed()
def train(config: TrainConfig, resume: str | os.PathLike | None = None, log=print) -> dict:
    """Train as ``config`` says (continuing ``resume``'s checkpoint if given); the final results.

    The loop: collect a rollout against the pool, compute its advantages and take the PPO update
    (``Learner.ppo_update``, where the rollout lies: in every collecting process on the CPU, here on
    a GPU), then now and then snapshot, evaluate and checkpoint. Ctrl-C, and SIGTERM (``kill``, a
    cluster scheduler's stop) the same way: a checkpoint is written, the workers are closed, and
    ``KeyboardInterrupt`` (``Terminated`` for SIGTERM) is raised. The handlers are installed only
    when called from the main thread, and the previous ones are put back after
    (``agents.training.interrupts``)."""
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(config.torch_threads)
    device = resolve_device(config)
    run_dir = Path(resume) if resume else Path(config.run_dir or default_run_dir(config))
    config.run_dir = str(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    log(f"run folder: {run_dir} (README.txt there says what each file is; watch it learn: "
        f"tensorboard --logdir {run_dir})")
    run = Run(config, run_dir)
    if resume:
        path = run_dir / CHECKPOINT
        if not path.is_file():
            raise CheckpointError(f"run folder {str(run_dir)!r}: no {CHECKPOINT} to resume from")
        run.restore(path)
        log(f"resuming at update {run.update} ({run.learner_steps:,} learner decisions)")
    (run_dir / "config.yaml").write_text(to_yaml(config))
    write_run_readme(run_dir)
    writer = SummaryWriter(str(run_dir))
    if not resume:
        writer.add_text("hyperparameters", "|field|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in to_dict(config).items()))
    num_updates = math.ceil(config.total_steps / config.rollout_size) if config.total_steps else 0
    progress = progress_factory(config.progress)
    log(f"starting {max(1, config.num_workers)} collecting process(es) and compiling the game engine (numba: "
        "a minute or two the first time on this machine, cached after)")
    workers = Workers(to_dict(config) | {"stand_ins": run.stand_ins}, model_config(config))
    central = central_learner(config, device)
    learner = workers if central is None else Workers(to_dict(config), model_config(config), local=[central])
    learner.set_state(run.model.state_dict(), run.optimizer_state)
    clock = _Clock(workers)
    try:
        if config.bc_warm_start and not run.cloned:
            workers.pool_update(*_pool_arguments(run), run.snapshots)
            run.clone_report = clone_teacher(run, workers, learner, central, writer, log, progress)
            run.model.load_state_dict(_weights(learner))
            run.cloned = True
            _evaluate(run, writer, config.eval_deals, 0, log, progress)
            _checkpoint(run, learner, clock)
        workers.pool_update(*_pool_arguments(run), run.snapshots)
        workers.reseed(config.seed + run.update)
        recent: collections.deque = collections.deque(maxlen=10)
        with progress(total=_projected_decisions(run, num_updates, config.rollout_size),
                      initial=run.learner_steps, desc="PPO", unit="decision") as bar:
            while run.update < num_updates and not _out_of_time(run, clock, log):
                started = time.perf_counter()
                # 1. collect a rollout against the pool, with the learner's current weights
                revealed = oracle_share(config, run.learner_steps)
                if central is None:  # each process keeps its share for its own update
                    summary = Summary.of(workers.collect(workers.share(config.rollout_size), revealed))
                else:
                    workers.set_state(central.get_state()["model"])
                    rollouts = workers.collect(workers.share(config.rollout_size), revealed, False)
                    central.keep(rollouts)
                    summary = Summary.of(rollouts)
                collected = time.perf_counter()
                # 2. advantages (GAE) and 3. the PPO update, gradients averaged over the processes
                stats = learner.ppo_update(ppo_settings(config, run.update, num_updates))[0]
                run.model.load_state_dict(_weights(learner))
                run.update += 1
                run.learner_steps += summary.decisions
                run.env_steps += summary.env_steps
                stats |= _update_statistics(run, summary, recent, started, collected, clock, num_updates)
                _log(run, writer, stats)
                bar.total = _projected_decisions(run, num_updates, config.rollout_size)
                bar.update(summary.decisions)
                bar.set_postfix_str(_rates_text(stats, recent))
                held = run.pool.probabilities()[0]  # before this update's snapshot: what the workers hold
                if config.pool_snapshot_every and run.update % config.pool_snapshot_every == 0:
                    _snapshot(run)
                # 4. evaluate now and then (the final evaluation comes after the loop)
                if config.eval_every and run.update % config.eval_every == 0 and run.update < num_updates:
                    _evaluate(run, writer, config.eval_deals, 0, bar.write if config.progress else log, progress)
                workers.pool_update(*_pool_arguments(run),
                                    {n: s for n, s in run.snapshots.items() if n not in held})
                # 5. checkpoint, after the pool update, as a resumed run does
                if run.update % config.checkpoint_every == 0:
                    _checkpoint(run, learner, clock)
                    workers.reseed(config.seed + run.update)
    except KeyboardInterrupt:
        _checkpoint(run, learner, clock)
        workers.close()
        log(f"interrupted: checkpoint written at update {run.update}; continue with --resume {run_dir}")
        raise
    finally:
        workers.close()
    return _finish(run, writer, clock, log, progress)


def central_learner(config: TrainConfig, device: torch.device) -> Station | None:
    """Where the PPO update runs: None on the CPU (in the collecting processes, where the rollouts
    are kept), else a learner here on ``device`` (a GPU) that the rollouts are sent to."""
    return None if device.type == "cpu" else learner_here(config, device)


def learner_here(config: TrainConfig, device: torch.device | str) -> Station:
    """A learner in this process on ``device``; its network is built without drawing from torch's
    global generator (the loaded weights replace it), so the run draws as a CPU run does."""
    with torch.random.fork_rng(devices=[]):
        return Station(to_dict(config), model_config(config), 0, device=device)


def _snapshot(run: Run) -> None:
    """A frozen copy of the learner joins the pool (the oldest leaves past ``pool_max_snapshots``)."""
    if not run.config.pool_max_snapshots:
        return
    name = snapshot_name(run.update)
    gone = run.pool.add_snapshot(name)
    run.snapshots[name] = {k: v.clone() for k, v in run.model.state_dict().items()}
    run.snapshots.pop(gone, None)


def _weights(learner: Workers) -> dict:
    """The learner's network weights (its first replica's: they are all the same)."""
    return learner.call("get_state", first_only=True)[0]["model"]


def _out_of_time(run: Run, clock: _Clock, log) -> bool:
    """Has the run reached its time or CPU limit (``time_limit_minutes``, ``cpu_limit_minutes``)?"""
    config = run.config
    if config.time_limit_minutes and clock.wall() > 60 * config.time_limit_minutes:
        log(f"time limit of {config.time_limit_minutes} minutes reached at update {run.update}")
        return True
    if config.cpu_limit_minutes and run.cpu_seconds_all + clock.cpu_all() > 60 * config.cpu_limit_minutes:
        log(f"CPU limit of {config.cpu_limit_minutes} CPU-minutes reached at update {run.update}")
        return True
    return False


def _update_statistics(run: Run, summary: Summary, recent: collections.deque, started: float, collected: float,
                       clock: _Clock, num_updates: int) -> dict:
    """An update's training statistics beside its losses: the hands' results (feeding the pool),
    rates, times and the pool's state."""
    config = run.config
    elapsed = time.perf_counter() - started
    hand_stats, tallies = hand_statistics(summary.hands, run.pool)
    recent.append(tallies)
    stats = hand_stats | {
        "charts/learning_rate": ppo_settings(config, run.update - 1, num_updates).learning_rate,
        "charts/env_steps_per_s": summary.env_steps / max(collected - started, 1e-9),
        "charts/learner_decisions_per_s": summary.decisions / max(elapsed, 1e-9),
        "charts/collect_seconds": collected - started, "charts/update_seconds": elapsed - (collected - started),
        "charts/cpu_minutes": (run.cpu_seconds_all + clock.cpu_all()) / 60,
        "charts/oracle_share": oracle_share(config, run.learner_steps - summary.decisions),
        "pool/learner_elo": run.pool.learner_elo}
    names, probs = run.pool.probabilities()
    for name, p in zip(names, probs):
        stats[f"pool/probability/{name}"] = float(p)
    for name in run.pool.opponents:
        stats[f"pool/win_rate/{name}"] = run.pool.win_rate[name]
        stats[f"pool/elo/{name}"] = run.pool.elo[name]
    return stats


def _log(run: Run, writer, stats: dict) -> None:
    """An update's statistics to TensorBoard (losses under ``losses/``) and the run's history."""
    for key, value in stats.items():
        writer.add_scalar(("" if "/" in key else "losses/") + key, value, run.learner_steps)
    run.history.append({"update": run.update, "learner_steps": run.learner_steps, **{
        k: v for k, v in stats.items() if isinstance(v, float) and math.isfinite(v)}})


def _finish(run: Run, writer, clock: _Clock, log, progress) -> dict:
    """The final evaluation, ``final.pt`` and ``best.pt``, results.json and the curves; the results."""
    config, run_dir = run.config, run.run_dir
    log("final evaluation")
    final = _evaluate(run, writer, config.final_eval_deals, config.final_eval_search_deals, log, progress,
                      final=True)
    _checkpoint(run, None, clock)
    run.save("final.pt", with_state=False)
    best = _confirm_best(run, final, log, progress)
    results = {"run_dir": str(run_dir), "updates": run.update, "learner_steps": run.learner_steps,
               "env_steps": run.env_steps, "cpu_seconds": run.cpu_seconds_all,
               "cpu_seconds_main_process": run.cpu_seconds,
               "wall_seconds": clock.wall(), "clone": run.clone_report,
               "final_evaluation": final, "panel_score": panel_score(final),
               "best_panel_score": run.best_score, "best": best, "config": to_dict(config)}
    (run_dir / "results.json").write_text(json.dumps(results, indent=2, default=float))
    plot_learning_curves(run.history, run.evaluations, run_dir / "learning_curves.png",
                         title=f"{config.game}, {config.num_players} players, seed {config.seed}")
    writer.close()
    log(f"final evaluation, {_deals_text(config, config.final_eval_deals)} per opponent (greedy):\n"
        f"{describe(final)}\n"
        f"{run.learner_steps:,} learner decisions in {clock.wall() / 60:.1f} minutes, "
        f"{run.cpu_seconds_all / 60:.1f} CPU-minutes; run folder: {run_dir}\n"
        f"{next_commands(run_dir, config.game, config.num_players)}")
    return results


def _deals_text(config: TrainConfig, deals: int) -> str:
    """``deals`` duplicate deals, said with the hands they make."""
    n = config.num_players
    played = "twice with the seats swapped" if n == 2 else f"{n} times with the seats rotated"
    return f"{deals:,} deals, each played {played} = {deals * n:,} hands"


def _rates_text(stats: dict, recent: collections.deque) -> str:
    """The bar's labelled rates, and the share of decided training hands won over the last updates
    against each fixed opponent, snapshots aside (only once some were decided)."""
    parts = [f"{stats['charts/learner_decisions_per_s']:,.0f} learner decisions/s",
             f"{stats['charts/env_steps_per_s']:,.0f} env steps/s"]
    extra = sorted({o for t in recent for o in t if o not in ("rule", "random") and is_fixed(o)})
    for opponent in ["rule", "random", *extra]:
        wins = sum(t.get(opponent, (0, 0))[0] for t in recent)
        decided = sum(t.get(opponent, (0, 0))[1] for t in recent)
        if decided:
            parts.append(f"won {100 * wins / decided:.0f}% of {decided} vs {opponent}")
    return ", ".join(parts)


def _own_cpu() -> float:
    """CPU seconds of this process (one clock for the process alone and for the run's total, so
    the total is never below the part)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


class _Clock:
    """Wall time since the start, and CPU time of this process and every process it started."""

    def __init__(self, workers: Workers):
        self.workers = workers
        self.wall_start = time.perf_counter()
        self.restart()

    def wall(self) -> float:
        return time.perf_counter() - self.wall_start

    def cpu_main(self) -> float:
        return _own_cpu() - self.cpu_start

    def cpu_all(self) -> float:
        return self._all(_own_cpu()) - self.all_start

    def _all(self, own: float) -> float:
        finished = resource.getrusage(resource.RUSAGE_CHILDREN)  # the arena's processes, and closed workers
        return (own + finished.ru_utime + finished.ru_stime
                + sum(_cpu_of(pid) for pid in self.workers.pids()))

    def restart(self) -> None:
        own = _own_cpu()  # one reading for both starts, so the total never trails the part
        self.cpu_start = own
        self.all_start = self._all(own)


def _cpu_of(pid: int) -> float:
    """CPU seconds of a live process (Linux /proc; 0 where that cannot be read)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _checkpoint(run: Run, learner: Workers | None, clock: _Clock) -> None:
    """Write ``checkpoint.pt`` with the learner's optimiser state, counting the CPU time so far."""
    with INTERRUPTS.held():  # counted once and written whole, even when Ctrl-C comes meanwhile
        if learner is not None:
            run.optimizer_state = learner.call("get_state", True, first_only=True)[0]["optimizer"]
        run.cpu_seconds += clock.cpu_main()
        run.cpu_seconds_all += clock.cpu_all()
        clock.restart()
        run.save()


def _pool_arguments(run: Run) -> tuple[list[str], list[float]]:
    names, probs = run.pool.probabilities()
    return names, [float(p) for p in probs]


def _evaluate(run: Run, writer, deals: int, search_deals: int, log, progress, final: bool = False) -> dict:
    config = run.config
    path = run.save("evaluated.pt", with_state=False)
    opponents = [spec for spec in expand(config.eval_opponents, config.game, config.num_players)
                 if search_deals or not is_search(spec)]
    results = _play_panel(run, path, opponents, deals, _evaluation_seed(config, final), search_deals,
                          progress(total=len(opponents), desc="final evaluation" if final else "evaluation",
                                   unit="opponent"))
    for opponent, r in results.items():
        for key in ("win_rate", "win_rate_low", "win_rate_high", "points", "points_low", "points_high"):
            if math.isfinite(r[key]):
                writer.add_scalar(f"eval/{opponent}/{key}", r[key], run.learner_steps)
    score = panel_score(results)
    writer.add_scalar("eval/panel_score", score, run.learner_steps)
    run.evaluations.append({"learner_steps": run.learner_steps, "final": final, "results": results,
                            "panel_score": score})
    if not final and score > run.best_score:
        run.best_score = score
        os.replace(path, run.run_dir / "best.pt")
    else:
        path.unlink(missing_ok=True)
    if not final:
        scored = [spec for spec in results if scores(spec)]
        log(f"evaluation at {run.learner_steps:,} decisions, {_deals_text(config, deals)} per opponent; panel "
            f"score {score:+.1f} (the mean points per hand against {', '.join(scored) or 'none'}: it picks "
            f"best.pt):\n{describe(results)}")
    return results


def _evaluation_seed(config: TrainConfig, final: bool) -> int:
    """The deals' seed: the periodic evaluations share one set of deals, the final evaluation (and the
    ``best.pt`` confirmation that replays it) another, unseen by the choice of ``best.pt``."""
    return config.seed + (10_000 if final else 0)


def _play_panel(run: Run, path, opponents: list[str], deals: int, seed: int, search_deals: int,
                bar) -> dict[str, dict]:
    """The checkpoint at ``path`` against each opponent in turn on the same ``deals`` (arena results
    by opponent spec; a shipped policy played from the run's copy), one step of ``bar`` per opponent."""
    config = run.config
    results: dict[str, dict] = {}
    with bar:
        for opponent in opponents:
            bar.set_postfix_str(f"vs {opponent}")
            results |= evaluate(str(path), config.game, config.num_players, [opponent], deals, seed=seed,
                                workers=max(1, config.num_workers), search_deals=search_deals,
                                stand_ins=run.stand_ins)
            bar.update(1)
    return results


def _confirm_best(run: Run, final: dict, log, progress) -> dict:
    """``best.pt`` confirmed on fresh deals: the candidate the evaluations chose replays the final
    evaluation's deals against the opponents that score, and the final policy takes its place
    unless the candidate scores higher there (a best of many evaluations on the same few deals is
    flattered by its luck on them). What was kept, and both scores on those deals."""
    config, run_dir = run.config, run.run_dir
    final_score = panel_score(final)
    chosen = [e for e in run.evaluations if not e["final"] and e["panel_score"] == run.best_score]
    candidate = run_dir / "best.pt"
    kept = {"kept": "final", "panel_score": final_score, "final_panel_score": final_score}
    if chosen and candidate.exists():
        opponents = [spec for spec in final if scores(spec)]
        seed = _evaluation_seed(config, final=True)
        replayed = _play_panel(run, candidate, opponents, config.final_eval_deals, seed, 0,
                               progress(total=len(opponents), desc="confirming best.pt", unit="opponent"))
        steps = chosen[0]["learner_steps"]
        candidate_score = panel_score(replayed)
        log(f"best.pt candidate (the evaluation at {steps:,} decisions, {run.best_score:+.1f} points per hand "
            f"there) on the final evaluation's deals: {candidate_score:+.1f} against {final_score:+.1f} for the "
            f"final policy; best.pt is the {'candidate' if candidate_score > final_score else 'final policy'}")
        if candidate_score > final_score:
            return {"kept": "evaluation", "learner_steps": steps, "panel_score": candidate_score,
                    "final_panel_score": final_score, "evaluation": replayed}
        kept |= {"candidate_learner_steps": steps, "candidate_panel_score": candidate_score}
    shutil.copyfile(run_dir / "final.pt", run_dir / "best.pt.tmp")
    os.replace(run_dir / "best.pt.tmp", candidate)  # whole or not at all, as every checkpoint
    return kept


def _projected_decisions(run, num_updates: int, rollout_size: int) -> int:
    """The PPO bar's total: the decisions so far plus the updates left at the mean per update.

    A rollout ends on its last batch of turns, so it holds a little more than ``rollout_size``
    decisions; projecting keeps the bar's end at the run's end instead of short of it."""
    per_update = run.learner_steps / run.update if run.update else rollout_size
    return run.learner_steps + round(max(num_updates - run.update, 0) * per_update)


__all__ = ["train", "model_config", "ConfigError", "Summary"]
