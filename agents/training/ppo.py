"""The PPO pieces, as pure functions: advantages along each seat's decisions, and the loss.

A rollout is a flat list of learner decisions in the order they were made. Decisions of the same
seat in the same hand form a chain: ``next_index[i]`` is the seat's next decision in the rollout
(-1 if none), ``done[i]`` says the hand ended before that seat decided again (its final reward
is in ``rewards[i]``), and a chain cut by the end of the rollout is bootstrapped with
``bootstrap[i]``, the value of that seat's observation at the cut.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit


def advantages(rewards: np.ndarray, values: np.ndarray, next_index: np.ndarray, done: np.ndarray,
               bootstrap: np.ndarray, gamma: float, gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """(advantages, returns) by GAE along each chain (Schulman et al. 2016)."""
    adv = _gae(np.asarray(rewards, np.float64), np.asarray(values, np.float64), np.asarray(next_index, np.int64),
               np.asarray(done, np.bool_), np.asarray(bootstrap, np.float64), float(gamma), float(gae_lambda))
    adv = adv.astype(np.float32)
    return adv, adv + np.asarray(values, np.float32)


@njit(cache=True)
def _gae(rewards, values, next_index, done, bootstrap, gamma, gae_lambda):
    n = len(rewards)
    adv = np.zeros(n, np.float64)
    for i in range(n - 1, -1, -1):  # a chain's next decision always comes later in the rollout
        j = next_index[i]
        if done[i]:
            next_value, next_adv = 0.0, 0.0
        elif j >= 0:
            next_value, next_adv = values[j], adv[j]
        else:
            next_value, next_adv = bootstrap[i], 0.0
        adv[i] = rewards[i] + gamma * next_value - values[i] + gamma * gae_lambda * next_adv
    return adv


def masked_entropy(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Entropy of the policy over the legal actions only (masked actions add exactly 0)."""
    log_p = torch.log_softmax(logits, dim=-1)
    # softmax, not log_p.exp(): exp is about ten times slower on the masked entries' -3.4e38
    p_log_p = torch.where(masks != 0, torch.softmax(logits, dim=-1) * log_p, torch.zeros_like(log_p))
    return -p_log_p.sum(dim=-1)


def ppo_loss(logits: torch.Tensor, values: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor,
             old_logp: torch.Tensor, adv: torch.Tensor, returns: torch.Tensor,
             clip_coef: float, ent_coef: float, vf_coef: float,
             normalize: bool = True) -> tuple[torch.Tensor, dict]:
    """The clipped PPO objective (to minimise) and its parts, for one minibatch.

    ``logits`` are already masked (illegal actions at the lowest float). Advantages are normalised
    per minibatch when ``normalize``.
    """
    log_p = torch.log_softmax(logits, dim=-1)
    new_logp = log_p.gather(1, actions[:, None]).squeeze(1)
    log_ratio = new_logp - old_logp
    ratio = log_ratio.exp()
    if normalize and adv.numel() > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
    value_loss = 0.5 * ((values - returns) ** 2).mean()
    entropy = masked_entropy(logits, masks).mean()
    loss = policy_loss - ent_coef * entropy + vf_coef * value_loss
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()  # the low-variance estimator (Schulman's blog)
        clip_fraction = ((ratio - 1).abs() > clip_coef).float().mean()
    return loss, {"policy_loss": policy_loss.detach(), "value_loss": value_loss.detach(), "entropy": entropy.detach(),
                  "approx_kl": approx_kl, "clip_fraction": clip_fraction}


def explained_variance(predicted: np.ndarray, target: np.ndarray) -> float:
    """1 - Var(target - predicted) / Var(target); nan when the target does not vary."""
    variance = np.var(target)
    return float("nan") if variance == 0 else float(1 - np.var(target - predicted) / variance)
