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
    clip_value: bool
    ent_coef: float
    vf_coef: float
    max_grad_norm: float
    target_kl: float
    gamma: float
    gae_lambda: float
    learning_rate: float
    value_only: bool
    seed: int
    expert_coef: float = 0.0
    expert_target: str = "gain"


class Learner:
    """A network (and, with the oracle critic, the critic), their optimiser, and gradient steps
    averaged over ``group``."""

    def __init__(self, model: torch.nn.Module, learning_rate: float, group: Group | None = None,
                 device: torch.device | str = "cpu", critic: torch.nn.Module | None = None):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.critic = critic.to(self.device) if critic is not None else None
        self.optimizer = torch.optim.Adam(self.parameters(), lr=learning_rate, eps=1e-5)
        self.group = group or Group()

    def parameters(self) -> list[torch.nn.Parameter]:
        """Everything the optimiser steps: the network's parameters, then the critic's."""
        return list(self.model.parameters()) + (list(self.critic.parameters()) if self.critic is not None else [])

    def value_parameters(self) -> list[torch.nn.Parameter]:
        """What a value warm-up trains: the network's value head, and the critic."""
        return self.model.value_parameters() + (list(self.critic.parameters()) if self.critic is not None else [])

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

    def ppo_update(self, rollout, settings: PPOSettings, rank: int = 0, targets=None) -> dict:
        """The epochs of one PPO update on this process's ``rollout``; mean statistics over the group.

        With searched ``targets`` (expert iteration) and ``expert_coef`` > 0, every minibatch also
        takes a share of them and adds the cross-entropy of the policy to the searched moves."""
        model, group = self.model, self.group
        self.set_learning_rate(settings.learning_rate)
        adv, returns = advantages(rollout.rewards, rollout.values, rollout.next_index, rollout.done,
                                  rollout.bootstrap, settings.gamma, settings.gae_lambda)
        moments = group.sum_(torch.tensor([len(adv), adv.sum(dtype=np.float64), (adv.astype(np.float64) ** 2).sum()],
                                          dtype=torch.float64))
        count, total, squares = moments.tolist()
        mean = total / count
        std = math.sqrt(max(squares / count - mean * mean, 0.0))
        normalised = ((adv - mean) / (std + 1e-8)).astype(np.float32)
        obs, masks, actions, old_logp, old_values, adv_t, returns_t = self.tensors(
            rollout.observations, rollout.masks, rollout.actions, rollout.logp, rollout.values, normalised, returns)
        hidden = self.tensors(rollout.hidden)[0] if self.critic is not None else None
        n = len(rollout)
        generator = torch.Generator()
        generator.manual_seed(settings.seed * 1_000_003 + rank)
        value_parameters = self.value_parameters() if settings.value_only else None
        expert = settings.expert_coef > 0 and targets is not None and len(targets) > 0 and not settings.value_only
        if expert:
            expert_obs, expert_masks, expert_actions, expert_candidates, expert_values = self.tensors(*targets.arrays())
            gains_scale = _gain_scale(targets) if settings.expert_target == "gain" else 1.0
        totals = torch.zeros(len(STAT_KEYS), dtype=torch.float64)
        steps = 0
        epochs_done = 0
        model.train()
        for epoch in range(settings.epochs):
            order = torch.randperm(n, generator=generator).to(self.device)
            expert_parts = torch.tensor_split(torch.randperm(len(targets), generator=generator).to(self.device),
                                              settings.minibatches) if expert else None
            epoch_kl = torch.zeros(2, dtype=torch.float64)
            for k, rows in enumerate(torch.tensor_split(order, settings.minibatches)):
                logits, own_values = model(obs[rows], masks[rows])
                values = own_values if self.critic is None else self.critic(obs[rows], hidden[rows])
                loss, parts = ppo_loss(logits, values, masks[rows], actions[rows], old_logp[rows], old_values[rows],
                                       adv_t[rows], returns_t[rows], settings.clip_coef, settings.clip_value,
                                       settings.ent_coef, settings.vf_coef, normalize=False)
                own_loss = 0.5 * ((own_values - returns_t[rows]) ** 2).mean()
                if self.critic is not None:  # the policy's own value head learns the same returns
                    loss = loss + settings.vf_coef * own_loss
                if settings.value_only:  # warm-up: the value heads alone learn; the policy stays as cloned
                    loss = settings.vf_coef * (own_loss + (0.5 * ((values - returns_t[rows]) ** 2).mean()
                                                           if self.critic is not None else 0.0))
                parts["own_value_loss"] = own_loss.detach()
                parts["expert_loss"] = torch.zeros(())
                if expert and len(expert_parts[k]):
                    chosen = expert_parts[k]
                    expert_logits, _ = model(expert_obs[chosen], expert_masks[chosen])
                    if settings.expert_target == "gain":
                        expert_loss = gain_loss(expert_logits, expert_candidates[chosen], expert_values[chosen],
                                                gains_scale)
                    else:
                        expert_loss = torch.nn.functional.cross_entropy(expert_logits, expert_actions[chosen])
                    loss = loss + settings.expert_coef * expert_loss
                    parts["expert_loss"] = expert_loss.detach()
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

    def clone_epoch(self, data, rows: np.ndarray, minibatches: int, learning_rates: list[float], vf_coef: float,
                    max_grad_norm: float, seed: int, rank: int = 0) -> None:
        """One cloning pass over ``rows`` of ``data``: cross-entropy to the teacher's moves and the
        value of each position (its return), ``learning_rates[k]`` at step k."""
        model = self.model
        obs, masks, actions, targets = self.tensors(data.observations, data.masks, data.actions, data.returns)
        hidden = self.tensors(data.hidden)[0] if self.critic is not None else None
        generator = torch.Generator()
        generator.manual_seed(seed * 1_000_003 + rank)
        order = torch.from_numpy(rows)[torch.randperm(len(rows), generator=generator)].to(self.device)
        model.train()
        for k, batch in enumerate(torch.tensor_split(order, minibatches)):
            self.set_learning_rate(learning_rates[k])
            logits, values = model(obs[batch], masks[batch])
            loss = torch.nn.functional.cross_entropy(logits, actions[batch]) + vf_coef * 0.5 * (
                (values - targets[batch]) ** 2).mean()
            if self.critic is not None:
                loss = loss + vf_coef * 0.5 * ((self.critic(obs[batch], hidden[batch]) - targets[batch]) ** 2).mean()
            self.step(loss, max_grad_norm)
        model.eval()


def _gain_scale(targets) -> float:
    """The spread of the searched values around each row's mean (points): what ``gain_loss``
    divides by, as PPO normalises its advantages."""
    values = targets.values.astype(np.float64)
    centred = values - np.nanmean(values, axis=1, keepdims=True)
    spread = float(np.sqrt(np.nanmean(centred ** 2))) if np.isfinite(centred).any() else 0.0
    return spread if spread > 1e-6 else 1.0


def gain_loss(logits: torch.Tensor, candidates: torch.Tensor, values: torch.Tensor, scale: float) -> torch.Tensor:
    """The policy gradient over each row's searched candidates: minus the sum over them of
    π(a) × (value(a) − their mean value), over ``scale`` (negative once the policy prefers the
    better candidates).

    Every candidate is valued, not only a sampled one, so no sampling noise enters; with values
    from the true worlds of training (``expert_worlds: true``) each is an unbiased sample of the
    move's value given what the learner sees, and the gradient is that of the expected value over
    the candidates. Imitating the searched move instead (``expert_target: move``) would copy
    choices made knowing the hidden cards."""
    valid = candidates >= 0
    probabilities = torch.softmax(logits, dim=-1).gather(1, candidates.clamp(min=0)) * valid
    values = torch.where(valid, values, torch.zeros_like(values))
    baseline = values.sum(dim=1, keepdim=True) / valid.sum(dim=1, keepdim=True).clamp(min=1)
    gains = torch.where(valid, values - baseline, torch.zeros_like(values)) / scale
    return -(probabilities * gains).sum(dim=1).mean()


STAT_KEYS = ("policy_loss", "value_loss", "own_value_loss", "expert_loss", "entropy", "approx_kl", "clip_fraction")


def _explained(returns_sum, returns_squares, error_sum, error_squares, count) -> float:
    """1 - Var(returns - values) / Var(returns), from sums over every process."""
    var_returns = returns_squares / count - (returns_sum / count) ** 2
    var_error = error_squares / count - (error_sum / count) ** 2
    return float("nan") if var_returns <= 0 else float(1 - var_error / var_returns)
