"""The three games as rule sets: data the one game engine reads (RULES I1–I9, B1–B6, R1–R8).

``GAME_SPECS`` is the one game registry: per game, the fixed rules (deck, hand size, meld rules,
what the turn allows, how a hand is scored) and the options with their defaults. A variant is a
new entry here. ``make_ruleset(game, num_players, **options)`` checks every option and names the
bad one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .cards import card_values
from .melds import MeldRules


@dataclass(frozen=True)
class GameSpec:
    """One game of the rule book: what never changes, and the options it takes."""

    players: tuple[int, int]
    """Fewest and most players (I1, B1, R1)."""
    hand_sizes: dict[int, int]
    """Cards dealt to each player, by the number of players (I1, B1, R1)."""
    decks: int
    printed_jokers: int
    """Printed jokers, unless the ``printed_jokers`` option says otherwise (I1)."""
    melds: MeldRules
    table_melds: bool
    """Melds are laid on the table (B3, R5); Indian declares from the hand instead (I5, I9)."""
    declares: bool
    """The hand ends by a declaration: discard one card and show the rest in melds (I5)."""
    cut_card: bool
    """A card is turned beside the stock before the deal and may be taken only to go out (R2, R4)."""
    later_take_must_be_placed: bool
    """After a player's first turn the discard top taken must reach the table that turn (R4)."""
    layoff_needs_own_meld: bool
    """Lay-offs and joker swaps need a meld of one's own on the table (R5)."""
    out_without_discard: bool
    """A play may empty the hand, going out with no last discard (B4); else it may not (R6)."""
    unopened_penalty: int | None
    """What a player who laid no meld this hand pays instead of their cards (R7); None: no such rule."""
    low_total_wins: bool
    """Penalties add up and the lowest match total wins (I8, R8); else scores add up, highest wins (B6)."""
    options: dict
    """The constructor keywords the game takes, with their defaults (RULES names them)."""


GAME_SPECS: dict[str, GameSpec] = {
    "indian": GameSpec(
        players=(2, 6), hand_sizes={n: 13 for n in range(2, 7)}, decks=2, printed_jokers=2,
        melds=MeldRules(ace_high=True, max_jokers=None), table_melds=False, declares=True, cut_card=False,
        later_take_must_be_placed=False, layoff_needs_own_meld=False, out_without_discard=False,
        unopened_penalty=None, low_total_wins=True,
        options={"printed_jokers": 2, "wild_joker": False, "penalty_cap": None, "match_target": 400, "max_turns": 500},
    ),
    "basic": GameSpec(
        players=(2, 4), hand_sizes={2: 10, 3: 7, 4: 7}, decks=1, printed_jokers=0,
        melds=MeldRules(ace_high=False, max_jokers=0), table_melds=True, declares=False, cut_card=False,
        later_take_must_be_placed=False, layoff_needs_own_meld=False, out_without_discard=True,
        unopened_penalty=None, low_total_wins=False,
        options={"rummy_bonus": False, "match_target": 100, "max_turns": 500},
    ),
    "romi": GameSpec(
        players=(2, 4), hand_sizes={2: 13, 3: 13, 4: 13}, decks=2, printed_jokers=2,
        melds=MeldRules(ace_high=True, max_jokers=2), table_melds=True, declares=False, cut_card=True,
        later_take_must_be_placed=True, layoff_needs_own_meld=True, out_without_discard=False,
        unopened_penalty=80, low_total_wins=True,
        options={"match_target": 250, "max_turns": 500},
    ),
}

GAMES = tuple(GAME_SPECS)
"""The games' names, in the rule book's order."""


def game_spec(game: str) -> GameSpec:
    """The registry entry of ``game``; an unknown game is an error naming it."""
    try:
        return GAME_SPECS[game]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {game!r}: expected one of {', '.join(map(repr, GAMES))}") from None


@dataclass(frozen=True)
class RuleSet:
    """Everything the engine needs to know about one game with its options (from ``GAME_SPECS``)."""

    game: str
    num_players: int
    hand_size: int
    decks: int
    printed_jokers: int
    ace_high: bool
    max_jokers: int | None
    table_melds: bool
    """Basic and römi lay melds on the table (B3, R5); Indian declares from the hand (I5, I9)."""
    declares: bool
    """Indian: the hand ends by a declaration (I5)."""
    wild_joker: bool
    cut_card: bool
    later_take_must_be_placed: bool
    """römi: the discard top taken after the first turn must reach the table that turn (R4)."""
    layoff_needs_own_meld: bool
    """römi: lay-offs and swaps need a meld of one's own on the table (R5)."""
    out_without_discard: bool
    """Basic: a play may empty the hand and go out (B4); römi needs a last discard (R6)."""
    unopened_penalty: int | None
    """römi: what a player with no meld laid this hand pays (R7)."""
    low_total_wins: bool
    """Indian and römi add penalties, lowest wins (I8, R8); Basic adds scores, highest wins (B6)."""
    penalty_cap: int | None
    match_target: int
    max_turns: int
    rummy_bonus: bool
    values: tuple[int, ...] = field(repr=False)

    @property
    def options(self) -> dict:
        """The constructor keywords that rebuild this rule set."""
        keys = GAME_SPECS[self.game].options
        return {k: v for k, v in asdict(self).items() if k in keys}


def game_options(game: str) -> dict:
    """The options ``game`` takes, with their defaults."""
    return dict(game_spec(game).options)


def _check_int(name: str, value, low: int, high: int | None = None, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"option {name}={value!r} is out of range: expected an int {span}" + (" or None" if allow_none else ""))


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
        _check_int("printed_jokers", opts["printed_jokers"], 0, 8)
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
        values=card_values(game),
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
