"""The lookahead agent (Indian Rummy): the rule agent with its draw and discard chosen one stock card ahead.

For each card it could discard, the agent asks what the hand is worth after the next stock card
and the best discard then, averaged over the cards still unseen (``RuleAgent.unseen``: not in
its hand, the discard pile, the wild card, or known in another hand, each type weighted by its
unseen copies). It keeps the discard with the lowest expected worth plus the rule agent's
``danger`` (what the card gives the next player). Drawing, it takes the discard top when the
hand with the top, after the best discard, is worth less than that expectation for a stock
card. Declaring is the rule agent's (as soon as the mask offers it, I5).

The worth of a hand (lower is better), from the exact solver in one batched call per decision:
the free deadwood (the rule agent's arrangement, wild-rank cards as jokers, I2) plus
``lives_weight`` times what the hand would pay now (``indian_penalty``: everything without a
pure run, I5, I7), so a draw that makes the lives counts for more than its points; plus
``loose_weight`` per card left outside melds.

Two simplifications keep a decision to one solver call: a stock card that cannot meld with the
hand (``could_meld``) counts as thrown back (the worth stays as it is, though a low useless card
kept for a high loose one would lower it), and the throws considered after a draw are the loose
cards of the hand's best arrangement. In Basic Rummy and römi its discards lost to the rule
agent's, so it is refused there (docs/agents.md). It keeps no state between decisions.
"""

from __future__ import annotations

import numpy as np

from rummy_env import solver
from rummy_env.cards import JOKER, NUM_RANKS, NUM_TYPES
from rummy_env.ruleset import RuleSet

from .base import AgentError
from .rule_agent import RuleAgent, default_weights
from .view import View

LOOKAHEAD_WEIGHTS = {"lives_weight": 2.0, "loose_weight": 0.0}
"""The lookahead's own weights (Indian only), chosen by 400-hand duels with the rule agent
(docs/agents.md); the rule agent's weights (``default_weights``) apply as well."""


def lookahead_settings(rules: RuleSet) -> set[str]:
    """Every weight ``LookaheadAgent`` takes at the table ``rules``."""
    return set(default_weights(rules)) | set(LOOKAHEAD_WEIGHTS)


class LookaheadAgent(RuleAgent):
    """The rule agent whose discards (and, in Indian Rummy, draws) look one stock card ahead."""

    name = "lookahead"

    def __init__(self, rules: RuleSet, seed: int | None = 0, **weights):
        if not rules.declares:
            raise AgentError(f"the lookahead agent plays the declaring game (indian), not {rules.game!r}: in Basic "
                             "Rummy and römi its discards lost to the rule agent's (docs/agents.md)")
        own = {key: weights.pop(key) for key in list(weights) if key in LOOKAHEAD_WEIGHTS}
        super().__init__(rules, seed, **weights)
        for key, value in own.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise AgentError(f"lookahead agent weight {key}={value!r}: expected a number >= 0")
        own = LOOKAHEAD_WEIGHTS | own
        self.weights = self.weights | own
        self.lives_weight = float(own["lives_weight"])
        self.loose_weight = float(own["loose_weight"])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row by ``act`` (the agent keeps no state, so rows of many hands may mix)."""
        return np.array([self.act(o, m) for o, m in zip(np.asarray(observations), np.asarray(masks))], np.int64)

    # ------------------------------------------------------------------ worth of hands

    def _folded(self, rows: np.ndarray, wild: int | None) -> np.ndarray:
        """Rows as the free arrangement sees them: wild-rank cards counted as jokers (I2)."""
        if wild is None:
            return rows
        rows = rows.copy()
        for suit in range(4):
            rows[:, JOKER] += rows[:, suit * NUM_RANKS + wild]
            rows[:, suit * NUM_RANKS + wild] = 0
        return rows

    def worth(self, rows: np.ndarray, wild: int | None) -> np.ndarray:
        """The worth of each hand (a row of 53 counts; lower is better), see the module docstring."""
        folded = self._folded(rows, wild)
        value = solver.hand_penalties(self.solver_game, folded).astype(np.float64)
        if self.lives_weight:
            value += self.lives_weight * solver.hand_penalties(self.game, rows, wild)
        if self.loose_weight:
            value += self.loose_weight * np.array([solver.min_loose_cards(row) for row in folded])
        return value

    def _partners(self) -> np.ndarray:
        """(53, 53) bool: [c, d] when a hand holding d could meld c with it (``could_meld``)."""
        if getattr(self, "_partner_table", None) is None:
            table = np.zeros((NUM_TYPES, NUM_TYPES), bool)
            for card in range(NUM_TYPES - 1):
                for other in range(NUM_TYPES - 1):
                    alone = [0] * NUM_TYPES
                    alone[other] = 1
                    table[card, other] = self.could_meld(card, alone, None)
            self._partner_table = table
        return self._partner_table

    def expected_worth(self, hands: list[list[int]], view: View, unseen: list[int]) -> np.ndarray:
        """Per hand: its expected worth after one stock card (drawn from ``unseen``) and the best discard."""
        wild = view.wild_rank
        counts = np.array(hands, np.int64)
        now = self.worth(counts, wild)
        live = np.asarray(unseen, np.int64)
        jokerlike = np.zeros(NUM_TYPES, bool)
        jokerlike[JOKER] = True
        if wild is not None:
            jokerlike[wild::NUM_RANKS] = True
        partners = self._partners()
        eye = np.eye(NUM_TYPES, dtype=np.int64)
        blocks, spans = [], []  # per hand: rows (draw x throw), and (draws' copies, throws)
        for index, hand in enumerate(hands):
            held_joker = bool((counts[index] * jokerlike).any())
            meldable = held_joker | jokerlike | (partners @ (counts[index] > 0))
            draws = np.flatnonzero((live > 0) & meldable)
            _, _, loose = self.arrangement(hand, wild)
            throws = np.array(sorted({c for c in loose if not jokerlike[c]}), np.int64)
            spans.append((live[draws], len(throws)))
            if draws.size and throws.size:
                rows = counts[index][None, None, :] + eye[draws][:, None, :] - eye[throws][None, :, :]
                blocks.append(rows.reshape(-1, NUM_TYPES))
        gain = np.zeros(len(hands))
        if blocks:
            after = self.worth(np.concatenate(blocks), wild)
            start = 0
            for index, (copies, throws) in enumerate(spans):
                if copies.size and throws:
                    best = after[start:start + copies.size * throws].reshape(copies.size, throws).min(axis=1)
                    start += copies.size * throws
                    gain[index] = float((copies * np.maximum(0.0, now[index] - best)).sum())
        return now - gain / max(1, int(live.sum()))

    # ------------------------------------------------------------------ decisions

    def rank_discards(self, view: View, discardable: list[int]) -> list[int]:
        """The cards of ``discardable`` from the best discard to the worst: lowest expected worth
        after the next draw, plus ``danger``; jokers and wild cards last."""
        wild = view.wild_rank
        allowed = sorted(set(discardable))
        plain = [c for c in allowed if not self.is_jokerlike(c, wild)]
        jokerlike = [c for c in allowed if self.is_jokerlike(c, wild)]
        if len(plain) <= 1:
            return plain + jokerlike
        hands = []
        for card in plain:
            hand = list(view.hand)
            hand[card] -= 1
            hands.append(hand)
        expected = self.expected_worth(hands, view, self.unseen(view))
        score = {c: expected[i] + self.danger(c, view, set()) for i, c in enumerate(plain)}  # no table (I5)
        return sorted(plain, key=lambda c: (score[c], -self.values[c], c)) + jokerlike

    def wants_top(self, view: View) -> bool:
        """Take the top when the hand with it (after the best discard) is worth less than the
        expectation for a stock card."""
        top, wild, hand = view.discard_top, view.wild_rank, view.hand
        if top < 0:
            return False
        if self.is_jokerlike(top, wild):
            return True
        if not self.could_meld(top, hand, wild):
            return False
        with_top = list(hand)
        with_top[top] += 1
        rows = []
        for card in range(NUM_TYPES):
            if with_top[card] and card != top and not self.is_jokerlike(card, wild):
                row = with_top[:]
                row[card] -= 1
                rows.append(row)
        if not rows:
            return False
        taken = self.worth(np.array(rows, np.int64), wild).min()
        return bool(taken < self.expected_worth([list(hand)], view, self.unseen(view))[0])
