"""A game with its options: ``RuleSet``, the one object the engine, the encoding and the envs read.

``make_ruleset(game, num_players, **options)`` looks ``game`` up in the game registry
(``rummy_env.games``), checks every option and names the bad one. A ``RuleSet`` carries the
spec's rule flags the one turn loop (``GameState``) reads instead of the game's name, the options,
and the game's scoring hooks (``payment``, ``deadwood``, ``max_hand_payment``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from . import solver
from .games import GAME_SPECS, GAMES, GameSpec, game_spec

__all__ = ["GAMES", "GAME_SPECS", "GameSpec", "RuleSet", "game_options", "game_spec", "make_ruleset", "parse_option"]


@dataclass(frozen=True)
class RuleSet:
    """Everything the engine needs to know about one game with its options (from ``GAME_SPECS``).

    The rule flags (``table_melds`` … ``low_total_wins``) are the spec's, copied so the engine's hot
    paths read them as fields; ``GameSpec`` documents each. The options follow them.
    """

    game: str
    num_players: int
    hand_size: int
    decks: int
    printed_jokers: int
    ace_high: bool
    max_jokers: int | None
    table_melds: bool
    declares: bool
    wild_joker: bool
    cut_card: bool
    later_take_must_be_placed: bool
    layoff_needs_own_meld: bool
    out_without_discard: bool
    unopened_penalty: int | None
    low_total_wins: bool
    penalty_cap: int | None
    match_target: int
    max_turns: int
    rummy_bonus: bool
    values: tuple[int, ...] = field(repr=False)

    @property
    def spec(self) -> GameSpec:
        """The game's registry entry (``rummy_env.games``)."""
        return game_spec(self.game)

    @property
    def options(self) -> dict:
        """The constructor keywords that rebuild this rule set."""
        keys = self.spec.options
        return {k: v for k, v in asdict(self).items() if k in keys}

    # ----------------------------------------------------------------- scoring hooks

    def payment(self, counts: Sequence[int], opened: bool = True, wild_rank: int | None = None) -> int:
        """What a player holding ``counts`` (53 counts) pays when another ends the hand (I6, I7, B5, R7):
        with the lives rule the best arrangement's penalty (capped by ``penalty_cap``); else the
        cards' values, or the unopened penalty for a player with no meld of their own (R7)."""
        if self.spec.lives:
            pay = solver.indian_penalty(counts, wild_rank)
            return pay if self.penalty_cap is None else min(pay, self.penalty_cap)
        if self.unopened_penalty is not None and not opened:
            return self.unopened_penalty
        values = self.values
        return sum(values[c] * n for c, n in enumerate(counts) if n)

    def deadwood(self, counts: Sequence[int], wild_rank: int | None = None) -> int:
        """The least the cards ``counts`` leave outside melds by the exact solver: with the lives
        rule the I7 penalty (no cap), else the least deadwood value (B5, R7). The trainer's shaping
        potential (``docs/training.md``) is minus this."""
        if self.spec.lives:
            return solver.indian_penalty(counts, wild_rank)
        return solver.min_deadwood(counts, self.game, wild_rank)

    @property
    def max_hand_payment(self) -> int:
        """The most one player can pay at the end of one hand, before any scaling: a full hand of
        the highest card value (capped by ``penalty_cap``, at least the unopened penalty), doubled
        by the rummy bonus (B6)."""
        most = max(self.spec.rank_values) * self.hand_size
        if self.penalty_cap is not None:
            most = min(most, self.penalty_cap)
        if self.unopened_penalty is not None:
            most = max(most, self.unopened_penalty)
        return most * (2 if self.rummy_bonus else 1)


def game_options(game: str) -> dict:
    """The options ``game`` takes, with their defaults."""
    return dict(game_spec(game).options)


def _check_int(name: str, value, low: int, high: int | None = None, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"option {name}={value!r} is out of range: expected an int {span}"
                         + (" or None" if allow_none else ""))


def make_ruleset(game: str, num_players: int = 2, **options) -> RuleSet:
    """The rule set of ``game`` for ``num_players`` with ``options`` (RULES names them and their defaults)."""
    spec = game_spec(game)
    low, high = spec.players
    if isinstance(num_players, bool) or not isinstance(num_players, int) or not low <= num_players <= high:
        raise ValueError(f"num_players={num_players!r} is out of range for {game!r}: expected {low}..{high}")
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for {game!r}: expected one of {sorted(spec.options)}")
    opts = spec.options | options
    _check_int("match_target", opts["match_target"], 1)
    _check_int("max_turns", opts["max_turns"], 1)
    for flag in ("wild_joker", "rummy_bonus"):
        if flag in opts and not isinstance(opts[flag], bool):
            raise ValueError(f"option {flag}={opts[flag]!r} must be True or False")
    if "printed_jokers" in opts:
        _check_int("printed_jokers", opts["printed_jokers"], 0, spec.most_printed_jokers)
    if "penalty_cap" in opts:
        _check_int("penalty_cap", opts["penalty_cap"], 1, allow_none=True)
    return RuleSet(
        game=game,
        num_players=num_players,
        hand_size=spec.hand_sizes[num_players],
        decks=spec.decks,
        printed_jokers=opts.get("printed_jokers", spec.printed_jokers),
        ace_high=spec.melds.ace_high,
        max_jokers=spec.melds.max_jokers,
        table_melds=spec.table_melds,
        declares=spec.declares,
        wild_joker=opts.get("wild_joker", False),
        cut_card=spec.cut_card,
        later_take_must_be_placed=spec.later_take_must_be_placed,
        layoff_needs_own_meld=spec.layoff_needs_own_meld,
        out_without_discard=spec.out_without_discard,
        unopened_penalty=spec.unopened_penalty,
        low_total_wins=spec.low_total_wins,
        penalty_cap=opts.get("penalty_cap"),
        match_target=opts["match_target"],
        max_turns=opts["max_turns"],
        rummy_bonus=opts.get("rummy_bonus", False),
        values=spec.values,
    )


def parse_option(text: str) -> tuple[str, object]:
    """A rule option given as ``KEY=VALUE`` text (``wild_joker=true``, ``max_turns=200``,
    ``penalty_cap=none``): the key and the value as a bool, None or int; bad text is a
    ``ValueError`` naming it. ``make_ruleset`` then checks the key and the value."""
    key, equals, value = str(text).partition("=")
    if not equals or not key:
        raise ValueError(f"option {text!r}: expected KEY=VALUE, e.g. wild_joker=true")
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    if lowered == "none":
        return key, None
    try:
        return key, int(value)
    except ValueError:
        raise ValueError(f"option {text!r}: the value must be true, false, none or an int") from None


def option_argument(text: str) -> tuple[str, object]:
    """``parse_option`` as an argparse ``type=``: bad text is an ``ArgumentTypeError`` naming it
    (the ``--option KEY=VALUE`` of the terminal and the web table)."""
    try:
        return parse_option(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
