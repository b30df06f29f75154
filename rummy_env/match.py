"""A match: hands played until a player's total reaches the target (RULES I8, B6, R8, G6).

Indian and römi add up what each player pays, and the lowest total wins; Basic adds up what
each winner scores, and the highest total wins. Players tied on the winning total share the win.
The starting seat moves one place each hand (G6), and hand k is dealt from seed ``f"{seed}:{k}"``.
"""

from __future__ import annotations

from .game import GameState, HandResult
from .ruleset import RuleSet, make_ruleset


class Match:
    """Running totals over hands, and the next hand to play."""

    def __init__(self, rules: RuleSet, seed: int | str = 0):
        self.rules = rules
        self.seed = seed
        self.totals = [0] * rules.num_players
        self.hands_played = 0

    @classmethod
    def new(cls, game: str, num_players: int = 2, seed: int | str = 0, **options) -> Match:
        """A match of ``game`` with ``options`` (match_target among them)."""
        return cls(make_ruleset(game, num_players, **options), seed)

    def deal(self) -> GameState:
        """The next hand, dealt with its own seed and starting seat (G6)."""
        if self.is_over:
            raise ValueError("the match is over: no more hands to deal")
        first = self.hands_played % self.rules.num_players
        return GameState(self.rules, f"{self.seed}:{self.hands_played}", first)

    def record(self, result: HandResult) -> None:
        """Add a finished hand's result to the totals."""
        if result is None:
            raise ValueError("the hand has no result yet: play it to the end first")
        if self.is_over:
            raise ValueError("the match is over: no more hands to record")
        if self.rules.low_total_wins:
            for p, pay in enumerate(result.payments):
                self.totals[p] += pay
        elif result.winner is not None:
            self.totals[result.winner] += sum(result.payments)
        self.hands_played += 1

    @property
    def is_over(self) -> bool:
        """Whether some player's total has reached the match target."""
        return max(self.totals) >= self.rules.match_target

    @property
    def winners(self) -> list[int]:
        """The players with the winning total (several when tied); empty while the match goes on."""
        if not self.is_over:
            return []
        best = min(self.totals) if self.rules.low_total_wins else max(self.totals)
        return [p for p, total in enumerate(self.totals) if total == best]
