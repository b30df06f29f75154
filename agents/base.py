"""The one agent protocol: an observation and its action mask in, an action id out.

An agent sees only what its seat's observation shows (the flat float32 vector of
``rummy_env.encoding`` and the int8 action mask); it never sees a ``GameState``. It may keep
state within a hand and is told about a new hand by ``reset``. Every agent has a ``name``
(used in tables and charts) and can act on a batch.

    agent = make_agent("rule", make_ruleset("indian", 2), seed=0)   # agents.registry, rummy_env.ruleset
    agent.reset(seed=123)                                  # a new hand
    action = agent.act(observation, action_mask)
    actions = agent.act_batch(observations, masks)        # one row per seat to act, of many hands

Everything that plays many hands (``agents.arena``, the search agent's rollouts, the trainer, the
single-agent wrapper's opponents) plays them through ``rummy_env.vector`` and asks each agent for
its rows with ``act_batch``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from rummy_env.ruleset import RuleSet


class AgentError(ValueError):
    """An agent spec, checkpoint or observation that cannot be used; the message names it."""


class Agent(ABC):
    """Maps (observation, action mask) to an action id of its game."""

    name: str = "agent"
    """A short label for tables and charts."""

    def __init__(self, rules: RuleSet):
        """``rules``: the table's rules (game, player count, options), which the agent plays by."""
        self.rules = rules
        self.game = rules.game
        self.num_players = rules.num_players

    def reset(self, seed: int | None = None) -> None:
        """A new hand begins. ``seed`` (optional) restarts any random generator the agent uses."""

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action id to play; it must be one the mask allows."""

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row (rows are independent seats or games); loops over ``act`` by default.

        A class that defines its own ``act_batch`` declares that a row's choice depends on nothing
        kept from other rows (no state within a hand), so one instance may play many hands at once
        (see ``plays_many_hands``).
        """
        return np.fromiter((self.act(o, m) for o, m in zip(observations, masks)), dtype=np.int64, count=len(masks))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, game={self.game!r}, num_players={self.num_players})"


def plays_many_hands(agent: Agent) -> bool:
    """Whether one instance of ``agent`` may play several hands at once, its rows mixed in one batch.

    True when its class defines its own ``act_batch`` (a policy network, the rule agent's batch
    code); the default, which loops over ``act``, leaves the agent free to keep state within a
    hand, so the arena gives such an agent one instance per hand and resets it before each.
    """
    return type(agent).act_batch is not Agent.act_batch


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """The action ids the mask allows; an all-zero mask is an error (nobody may act on it)."""
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise AgentError("asked to act with an all-zero action mask: this seat has no legal action now")
    return legal
