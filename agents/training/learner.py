"""The learner's gradient steps: cloning epochs and PPO epochs, on one process or several.

The update is decentralised (DD-PPO, Wijmans et al. 2019): every collecting process keeps the
decisions it collected, holds a replica of the network and of its Adam optimiser, and computes
gradients on its own share of each minibatch; the gradients are averaged over the processes
(one all-reduce of one flat buffer per step) before every replica takes the same step, so the
replicas stay identical. No rollout crosses a process boundary, and every core both collects and
learns. With one process (``group`` None) the same code is plain single-process PPO.

Every process splits its decisions into the same number of near-equal minibatches (the defect of
a tiny last minibatch cannot arise), and advantages are normalised once per update over every
process's decisions. Minibatch order comes from a generator seeded by (seed, update, process),
so a run is reproducible and a resumed run repeats the uninterrupted one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn.utils import clip_grad_norm_

from .ppo import advantages, explained_variance, ppo_loss


class Group:
    """Averages tensors over the processes of a ``torch.distributed`` gloo group (or does nothing)."""

    def __init__(self, size: int = 1):
        self.size = size

    def mean_(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.size > 1:
            torch.distributed.all_reduce(tensor)
            tensor /= self.size
        return tensor

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.size > 1:
            torch.distributed.all_reduce(tensor)
        return tensor


@dataclass
class PPOSettings:
    """What one PPO update needs from the config (plain values, sent to the collecting processes)."""

    epochs: int
    minibatches: int
    clip_coef: float
    ent_coef: float
    vf_coef: float
    max_grad_norm: float
    target_kl: float
    gamma: float
    gae_lambda: float
    learning_rate: float
    value_only: bool
    seed: int


class Learner:
    """A network, its optimiser, and gradient steps averaged over ``group``; ``rank`` is this
    process's place in it. ``rollout`` is what the next PPO update learns from."""

    def __init__(self, model: torch.nn.Module, learning_rate: float, group: Group | None = None,
                 device: torch.device | str = "cpu", rank: int = 0):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=learning_rate, eps=1e-5)
        self.group = group or Group()
        self.rank = rank
        self.rollout = None

    def parameters(self) -> list[torch.nn.Parameter]:
        """Everything the optimiser steps."""
        return list(self.model.parameters())

    def set_learning_rate(self, value: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = value

    def step(self, loss: torch.Tensor, max_grad_norm: float, parameters: list | None = None) -> None:
        """Backward, average the gradients over the group, clip, and step (only ``parameters`` if given)."""
        trainable = self.parameters() if parameters is None else parameters
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if parameters is not None:  # the others take no step at all (Adam skips a parameter without a gradient)
            chosen = {id(p) for p in trainable}
            for p in self.parameters():
                if id(p) not in chosen:
                    p.grad = None
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in trainable]
        if self.group.size > 1:
            flat = torch.cat([g.reshape(-1) for g in grads])
            self.group.mean_(flat)
            offset = 0
            for p, g in zip(trainable, grads):
                g.copy_(flat[offset:offset + g.numel()].view_as(g))
                offset += g.numel()
        for p, g in zip(trainable, grads):
            p.grad = g
        if max_grad_norm > 0:
            clip_grad_norm_(trainable, max_grad_norm)
        self.optimizer.step()

    def tensors(self, *arrays: np.ndarray) -> list[torch.Tensor]:
        return [torch.from_numpy(np.ascontiguousarray(a)).to(self.device) for a in arrays]

    # ------------------------------------------------------------------ PPO

    def ppo_update(self, settings: PPOSettings) -> dict:
        """The epochs of one PPO update on this process's ``rollout`` (then dropped); mean statistics
        over the group."""
        model, group, rollout, rank = self.model, self.group, self.rollout, self.rank
        self.rollout = None
        self.set_learning_rate(settings.learning_rate)
        adv, returns = advantages(rollout.rewards, rollout.values, rollout.next_index, rollout.done,
                                  rollout.bootstrap, settings.gamma, settings.gae_lambda)
        moments = group.sum_(torch.tensor([len(adv), adv.sum(dtype=np.float64), (adv.astype(np.float64) ** 2).sum()],
                                          dtype=torch.float64))
        count, total, squares = moments.tolist()
        mean = total / count
        std = math.sqrt(max(squares / count - mean * mean, 0.0))
        normalised = ((adv - mean) / (std + 1e-8)).astype(np.float32)
        obs, masks, actions, old_logp, _, adv_t, returns_t = self.tensors(
            rollout.observations, rollout.masks, rollout.actions, rollout.logp, rollout.values, normalised, returns)
        n = len(rollout)
        generator = torch.Generator()
        generator.manual_seed(settings.seed * 1_000_003 + rank)
        value_parameters = model.value_parameters() if settings.value_only else None
        totals = torch.zeros(len(STAT_KEYS), dtype=torch.float64)
        steps = 0
        epochs_done = 0
        model.train()
        for epoch in range(settings.epochs):
            order = torch.randperm(n, generator=generator).to(self.device)
            epoch_kl = torch.zeros(2, dtype=torch.float64)
            for rows in torch.tensor_split(order, settings.minibatches):
                logits, values = model(obs[rows], masks[rows])
                loss, parts = ppo_loss(logits, values, masks[rows], actions[rows], old_logp[rows],
                                       adv_t[rows], returns_t[rows], settings.clip_coef,
                                       settings.ent_coef, settings.vf_coef, normalize=False)
                if settings.value_only:  # warm-up: the value head alone learns; the policy stays as cloned
                    loss = settings.vf_coef * 0.5 * ((values - returns_t[rows]) ** 2).mean()
                self.step(loss, settings.max_grad_norm, value_parameters)
                totals += torch.tensor([float(parts[k]) for k in STAT_KEYS], dtype=torch.float64)
                epoch_kl += torch.tensor([float(parts["approx_kl"]) * len(rows), len(rows)], dtype=torch.float64)
                steps += 1
            epochs_done = epoch + 1
            group.sum_(epoch_kl)
            if settings.target_kl and not settings.value_only and epoch_kl[0] / epoch_kl[1] > settings.target_kl:
                break
        model.eval()
        group.mean_(totals)
        stats = {key: float(value) / steps for key, value in zip(STAT_KEYS, totals)}
        stats["epochs"] = float(epochs_done)
        variance = group.sum_(torch.tensor([float(np.sum(returns)), float(np.sum(returns.astype(np.float64) ** 2)),
                                            float(np.sum((returns - rollout.values).astype(np.float64))),
                                            float(np.sum(((returns - rollout.values).astype(np.float64)) ** 2)),
                                            float(n)], dtype=torch.float64)).tolist()
        stats["explained_variance"] = _explained(*variance) if group.size > 1 else explained_variance(
            rollout.values, returns)
        return stats

    # ------------------------------------------------------------------ cloning

    def clone_pass(self, data, rows: np.ndarray, minibatches: int, learning_rates: list[float], vf_coef: float,
                   max_grad_norm: float, seed: int) -> None:
        """One cloning pass over ``rows`` of ``data``: cross-entropy to the teacher's moves and the
        value of each position (its return), ``learning_rates[k]`` at step k."""
        model = self.model
        obs, masks, actions, targets = self.tensors(data.observations, data.masks, data.actions, data.returns)
        generator = torch.Generator()
        generator.manual_seed(seed * 1_000_003 + self.rank)
        order = torch.from_numpy(rows)[torch.randperm(len(rows), generator=generator)].to(self.device)
        model.train()
        for k, batch in enumerate(torch.tensor_split(order, minibatches)):
            self.set_learning_rate(learning_rates[k])
            logits, values = model(obs[batch], masks[batch])
            loss = torch.nn.functional.cross_entropy(logits, actions[batch]) + vf_coef * 0.5 * (
                (values - targets[batch]) ** 2).mean()
            self.step(loss, max_grad_norm)
        model.eval()


STAT_KEYS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")


def _explained(returns_sum, returns_squares, error_sum, error_squares, count) -> float:
    """1 - Var(returns - values) / Var(returns), from sums over every process."""
    var_returns = returns_squares / count - (returns_sum / count) ** 2
    var_error = error_squares / count - (error_sum / count) ** 2
    return float("nan") if var_returns <= 0 else float(1 - var_error / var_returns)
