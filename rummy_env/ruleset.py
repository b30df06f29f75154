"""The three games as rule sets: data the one game engine reads (RULES I1–I9, B1–B6, R1–R8).

``make_ruleset(game, num_players, **options)`` checks every option and names the bad one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .cards import card_values
from .melds import meld_rules

GAMES = ("indian", "basic", "romi")


@dataclass(frozen=True)
class RuleSet:
    """Everything the engine needs to know about one game with its options."""

    game: str
    num_players: int
    hand_size: int
    decks: int
    printed_jokers: int
    ace_high: bool
    max_jokers: int | None
    table_melds: bool
    """Basic and römi lay melds on the table (B3, R5); Indian declares from the hand (I5, I9)."""
    wild_joker: bool
    cut_card: bool
    penalty_cap: int | None
    match_target: int
    max_turns: int
    rummy_bonus: bool
    values: tuple[int, ...] = field(repr=False)

    @property
    def options(self) -> dict:
        """The constructor keywords that rebuild this rule set."""
        keys = _OPTIONS[self.game]
        return {k: v for k, v in asdict(self).items() if k in keys}

    @property
    def low_total_wins(self) -> bool:
        """Indian and römi add penalties, lowest wins (I8, R8); Basic adds scores, highest wins (B6)."""
        return self.game != "basic"


_OPTIONS = {
    "indian": {"printed_jokers": 2, "wild_joker": False, "penalty_cap": None, "match_target": 400, "max_turns": 500},
    "basic": {"rummy_bonus": False, "match_target": 100, "max_turns": 500},
    "romi": {"match_target": 250, "max_turns": 500},
}
_PLAYERS = {"indian": (2, 6), "basic": (2, 4), "romi": (2, 4)}


def game_options(game: str) -> dict:
    """The options ``game`` takes, with their defaults."""
    _check_game(game)
    return dict(_OPTIONS[game])


def _check_game(game: str) -> None:
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: expected one of {', '.join(map(repr, GAMES))}")


def _check_int(name: str, value, low: int, high: int | None = None, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"option {name}={value!r} is out of range: expected an int {span}" + (" or None" if allow_none else ""))


def make_ruleset(game: str, num_players: int = 2, **options) -> RuleSet:
    """The rule set of ``game`` for ``num_players`` with ``options`` (RULES names them and their defaults)."""
    _check_game(game)
    low, high = _PLAYERS[game]
    if isinstance(num_players, bool) or not isinstance(num_players, int) or not low <= num_players <= high:
        raise ValueError(f"num_players={num_players!r} is out of range for {game!r}: expected {low}..{high}")
    unknown = sorted(set(options) - set(_OPTIONS[game]))
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for {game!r}: expected one of {sorted(_OPTIONS[game])}")
    opts = _OPTIONS[game] | options
    _check_int("match_target", opts["match_target"], 1)
    _check_int("max_turns", opts["max_turns"], 1)
    for flag in ("wild_joker", "rummy_bonus"):
        if flag in opts and not isinstance(opts[flag], bool):
            raise ValueError(f"option {flag}={opts[flag]!r} must be True or False")
    melds = meld_rules(game)
    if game == "indian":
        _check_int("printed_jokers", opts["printed_jokers"], 0, 8)
        _check_int("penalty_cap", opts["penalty_cap"], 1, allow_none=True)
    return RuleSet(
        game=game,
        num_players=num_players,
        hand_size={"indian": 13, "romi": 13, "basic": 10 if num_players == 2 else 7}[game],
        decks=1 if game == "basic" else 2,
        printed_jokers={"indian": opts.get("printed_jokers", 0), "basic": 0, "romi": 2}[game],
        ace_high=melds.ace_high,
        max_jokers=melds.max_jokers,
        table_melds=game != "indian",
        wild_joker=opts.get("wild_joker", False),
        cut_card=game == "romi",
        penalty_cap=opts.get("penalty_cap"),
        match_target=opts["match_target"],
        max_turns=opts["max_turns"],
        rummy_bonus=opts.get("rummy_bonus", False),
        values=card_values(game),
    )
