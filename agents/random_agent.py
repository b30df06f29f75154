"""The random agent: a uniformly random legal action, from its own seeded generator."""

from __future__ import annotations

import numpy as np

from rummy_env.ruleset import RuleSet

from .base import Agent, legal_actions


class RandomAgent(Agent):
    """Uniform over the actions the mask allows; the same seed gives the same choices."""

    name = "random"

    def __init__(self, rules: RuleSet, seed: int | None = 0):
        super().__init__(rules)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        return int(legal[self.rng.integers(legal.size)])
