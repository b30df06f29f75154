"""The opponent pool: who the learner plays each hand, and how it fares against each.

Entries are ``self`` (the current policy in every seat), the rule agent, random, any further fixed
agents (``pool_opponents``: agent specs such as a shipped policy; with ``pool_opponents_only`` they
replace the rule agent and random, as for a best response to one agent), and frozen snapshots of the
learner (``snapshot-U``, taken every ``pool_snapshot_every`` updates, the oldest leaving once
there are ``pool_max_snapshots``). Sampling, per hand:

* with probability ``pool_self_fraction`` the hand is self-play;
* otherwise an opponent is drawn by prioritised fictitious self-play (PFSP, as in AlphaStar):
  weight ``(1 − w) ** 2 + 0.02``, where ``w`` is the learner's recent share of decided
  hands won against it, so the opponents it beats least are drawn most; the rule agent's share
  of these hands is raised to at least ``pool_rule_min``.

Win rates are exponential moving averages over hands (weight 0.02 a hand). Each entry also has
an Elo rating, updated hand by hand against the learner's (which starts at 1000 like theirs):
the numbers the logs show as ``pool/elo/NAME``.
"""

from __future__ import annotations

import numpy as np

EMA = 0.02
ELO_K = 8.0
SNAPSHOT_PREFIX = "snapshot-"
"""Snapshots are named ``snapshot-U`` after the update ``U`` that took them."""


def snapshot_name(update: int) -> str:
    return f"{SNAPSHOT_PREFIX}{update}"


def is_fixed(name: str) -> bool:
    """Whether a pool entry stays for the whole run (not ``self``, not a snapshot)."""
    return name != "self" and not name.startswith(SNAPSHOT_PREFIX)


PFSP_POWER = 2.0
"""Prioritised fictitious self-play: an opponent's weight is (1 - the learner's win rate) ** this."""


def fixed_entries(extra: tuple[str, ...] = (), only: bool = False) -> list[str]:
    """The entries that stay for the whole run: the rule agent, random, then ``extra``; ``extra``
    alone when ``only``."""
    return [*extra] if only else ["rule", "random", *extra]


class OpponentPool:
    """Pool entries, their PFSP weights, win rates and Elo ratings."""

    def __init__(self, self_fraction: float, rule_min: float, max_snapshots: int, extra: tuple[str, ...] = (),
                 only: bool = False):
        self.self_fraction = self_fraction
        self.rule_min = rule_min
        self.max_snapshots = max_snapshots
        self.fixed = fixed_entries(extra, only)
        self.snapshots: list[str] = []
        self.win_rate: dict[str, float] = {name: 0.5 for name in self.fixed}
        self.elo: dict[str, float] = {name: 1000.0 for name in self.fixed}
        self.learner_elo = 1000.0

    @property
    def opponents(self) -> list[str]:
        return self.fixed + self.snapshots

    def add_snapshot(self, name: str) -> str | None:
        """Add snapshot ``name``; returns the name of the snapshot that left, if one did."""
        if self.max_snapshots == 0:
            return None
        self.snapshots.append(name)
        self.win_rate[name] = 0.5
        self.elo[name] = self.learner_elo
        if len(self.snapshots) > self.max_snapshots:
            gone = self.snapshots.pop(0)
            self.win_rate.pop(gone)
            self.elo.pop(gone)
            return gone
        return None

    def probabilities(self) -> tuple[list[str], np.ndarray]:
        """(entry names with ``self`` first, the chance of each per hand)."""
        names = self.opponents
        weights = np.array([(1 - self.win_rate[n]) ** PFSP_POWER + 0.02 for n in names])
        weights /= weights.sum()
        rule = names.index("rule") if "rule" in names else None
        if rule is not None and weights[rule] < self.rule_min and len(names) > 1:
            others = 1 - weights[rule]
            weights = weights * (1 - self.rule_min) / others
            weights[rule] = self.rule_min
        probs = np.concatenate([[self.self_fraction], (1 - self.self_fraction) * weights])
        return ["self"] + names, probs

    def record(self, opponent: str, score: float) -> None:
        """A decided hand against ``opponent``: ``score`` 1 won, 0 lost, 0.5 for a draw."""
        if opponent not in self.win_rate:
            return
        self.win_rate[opponent] += EMA * (score - self.win_rate[opponent])
        expected = 1 / (1 + 10 ** ((self.elo[opponent] - self.learner_elo) / 400))
        self.learner_elo += ELO_K * (score - expected)
        self.elo[opponent] -= ELO_K * (score - expected)

    def state(self) -> dict:
        """Everything that resumes the pool (plain values)."""
        return {"snapshots": list(self.snapshots), "win_rate": dict(self.win_rate), "elo": dict(self.elo),
                "learner_elo": self.learner_elo}

    def load_state(self, state: dict) -> None:
        """Resume from ``state``; a fixed entry it does not know (added to the config since) starts afresh."""
        self.snapshots = list(state["snapshots"])
        self.win_rate = {n: state["win_rate"].get(n, 0.5) for n in self.opponents}
        self.elo = {n: state["elo"].get(n, 1000.0) for n in self.opponents}
        self.learner_elo = float(state["learner_elo"])
