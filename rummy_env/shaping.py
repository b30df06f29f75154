"""Potential-based reward shaping (Ng, Harada & Russell 1999), for every trainer of the environment.

A seat's potential ``Φ`` is minus its hand's penalty at the start of its turn; a trainer adds
``γ Φ(s') − Φ(s)`` to each of the seat's decisions (``Φ`` = 0 once the hand is over), so the
shaping terms of a hand add up to discounted differences of potentials and the best policy of the
game is unchanged. Our PPO trainer (``agents.training.rollout``) and the RLlib environment both
read ``Potential``.
"""

from __future__ import annotations

import numpy as np

from rummy_env import solver
from rummy_env.encoding import observation_layout
from rummy_env.ruleset import make_ruleset

POTENTIALS = ("deadwood", "payment")
"""What a seat's potential counts: ``deadwood``, the hand's least penalty by the exact solver
(Indian: I7; Basic and römi: the least deadwood); ``payment``, what the seat would pay if another
player went out now (Indian: I7 as well; Basic: every card in hand, B5; römi: every card in hand,
or the flat penalty while the seat has laid no meld, R7)."""


class Potential:
    """Minus the seat's hand penalty (``POTENTIALS``), memoised by hand: the shaping potential."""

    def __init__(self, game: str, num_players: int, kind: str = "deadwood"):
        if kind not in POTENTIALS:
            raise ValueError(f"shaping potential {kind!r}: expected one of {', '.join(POTENTIALS)}")
        parts = observation_layout(game, num_players)
        self.hand = parts["hand"]
        self.phase = parts["phase"].start
        self.rules = make_ruleset(game, num_players)
        # with the lives rule (I7) what a seat would pay is its penalty, the deadwood potential itself
        self.by_payment = kind == "payment" and not self.rules.spec.lives
        self.opened = parts["opened"].start if self.by_payment and "opened" in parts else None
        self._memo: dict[bytes, float] = {}

    def penalty_of(self, observation: np.ndarray) -> float:
        counts = np.rint(observation[self.hand]).astype(np.uint8)
        if self.by_payment:
            opened = self.opened is None or observation[self.opened] >= 0.5
            return float(self.rules.payment(counts.tolist(), opened))
        value = self._memo.get(counts.tobytes())
        return value if value is not None else float(self._solve(counts[None], [counts.tobytes()])[0])

    def is_draw_phase(self, observation: np.ndarray) -> bool:
        return bool(observation[self.phase] > 0.5)

    def draw_phase_rows(self, observations: np.ndarray) -> np.ndarray:
        """Per row of ``observations``: is the seat at the start of its turn (its draw)?"""
        return observations[:, self.phase] > 0.5

    def penalties(self, observations: np.ndarray) -> np.ndarray:
        """``penalty_of`` for every row of ``observations``: the hands not yet memoised solved in
        one batched call (``solver.hand_penalties``)."""
        if self.by_payment:
            return np.array([self.penalty_of(row) for row in observations], np.float64)
        counts = np.rint(observations[:, self.hand]).astype(np.uint8)
        keys = [row.tobytes() for row in counts]
        memo = self._memo
        out = np.array([memo.get(key, np.nan) for key in keys], np.float64)
        missing = np.flatnonzero(np.isnan(out))
        if missing.size:
            out[missing] = self._solve(counts[missing], [keys[i] for i in missing.tolist()])
        return out

    def _solve(self, counts: np.ndarray, keys: list[bytes]) -> np.ndarray:
        """The penalties of hands not memoised, in one batched solver call; memoised after."""
        if len(self._memo) > 200_000:
            self._memo.clear()
        solved = solver.hand_penalties(self.rules.game, counts).astype(np.float64)
        self._memo.update(zip(keys, solved.tolist()))
        return solved
