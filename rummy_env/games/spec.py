"""What one game is: ``GameSpec``, the data every other module reads instead of the game's name.

A spec holds the fixed rules of one game of the rule book (``docs/rules.md``): its names, the
deck, the seats and hand sizes, the card values, the meld rules, what a turn allows, how a hand is
scored and a match won, the options with their defaults, and the rule ids that messages cite.
Everything derived from them (the 53 card values, the table's meld slots, the most jokers a
deck holds) is a property here, so each fact has one source. The per-game modules
(``rummy_env.games.indian``, ``basic``, ``romi``) each hold one spec; ``docs/design.md``
("Adding a game or a variant") shows how to add one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..cards import NUM_NATURAL, NUM_RANKS
from ..melds import MeldRules


@dataclass(frozen=True)
class RuleIds:
    """The rule ids (``docs/rules.md``) that messages and screens cite for this game."""

    players: str
    """Players and cards (I1, B1, R1)."""
    runs: str
    """Whether the ace may stand high (I3, B2, R3)."""
    payment: str
    """What a player pays at the end of a hand (I7, B5, R7)."""
    match: str
    """How a match is won (I8, B6, R8)."""


@dataclass(frozen=True, eq=False)
class GameSpec:
    """One game of the rule book: what never changes, and the options it takes.

    Compared by identity: a registered name always means this one object (``games.register``).
    """

    name: str
    """The id users pass (``game="indian"``)."""
    title: str
    """The game's full name, for screens ("Indian Rummy")."""
    label: str
    """A short name for tables ("Indian")."""
    env_name: str
    """The PettingZoo ``metadata["name"]``; its version suffix goes up with any change that affects
    learning (``docs/env.md``, "Version history")."""
    players: tuple[int, int]
    """Fewest and most players (I1, B1, R1)."""
    hand_sizes: Mapping[int, int]
    """Cards dealt to each player, by the number of players (I1, B1, R1)."""
    decks: int
    """Copies of each of the 52 natural cards (G1)."""
    printed_jokers: int
    """Printed jokers, unless the ``printed_jokers`` option says otherwise (I1)."""
    rank_values: tuple[int, ...]
    """What a card of each rank A..K pays at the end of a hand (I7, B5, R7); jokers pay 0."""
    melds: MeldRules
    """Whether the ace stands high (I3, B2, R3) and the jokers one meld may hold (I3, R3)."""
    table_melds: bool
    """Melds are laid on the table (B3, R5); Indian declares from the hand instead (I5, I9)."""
    declares: bool
    """The hand ends by a declaration: discard one card and show the rest in melds (I5)."""
    lives: bool
    """The lives rule: a hand pays all its cards unless it holds a pure run and a second run (I5, I7)."""
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
    options: Mapping[str, object]
    """The constructor keywords the game takes, with their defaults (the rule book names them)."""
    rule_ids: RuleIds
    """The rule ids its messages cite."""
    max_printed_jokers: int | None = None
    """The most printed jokers the ``printed_jokers`` option allows (I1); None: not an option."""
    free_arrangement_game: str | None = None
    """The game whose meld rules the rule agent and the play screen's hint use to arrange a hand
    freely (no lives rule); None: this game's own. Indian uses römi's (its melds with at most two
    jokers), which keeps the search quick."""
    default_players: int = 2
    """The number of players when none is given."""
    compiled_core: str | None = None
    """The numba core that plays the game on ``VectorGame(backend="numba")``, as ``module:class``
    (imported on first use); None: the Python engine only. A core refuses any spec but its own, so
    a variant made with ``replace`` plays on ``backend="python"`` until a core is written for it."""

    def __post_init__(self) -> None:
        low, high = self.players
        if sorted(self.hand_sizes) != list(range(low, high + 1)):
            raise ValueError(f"game {self.name!r}: hand_sizes must name every player count {low}..{high}")
        if len(self.rank_values) != NUM_RANKS:
            raise ValueError(f"game {self.name!r}: rank_values must hold {NUM_RANKS} values, A..K")
        if self.declares == self.table_melds:
            raise ValueError(f"game {self.name!r}: a game either declares from the hand or lays melds on the table")

    @property
    def player_counts(self) -> range:
        """Every number of players the game seats (I1, B1, R1)."""
        return range(self.players[0], self.players[1] + 1)

    @property
    def values(self) -> tuple[int, ...]:
        """What each of the 53 card types pays at the end of a hand; the joker (52) pays 0."""
        return tuple(self.rank_values[c % NUM_RANKS] for c in range(NUM_NATURAL)) + (0,)

    @property
    def most_printed_jokers(self) -> int:
        """The most printed jokers a deck of this game can hold (the option's bound, I1)."""
        return self.printed_jokers if self.max_printed_jokers is None else self.max_printed_jokers

    @property
    def max_table_melds(self) -> int:
        """Table meld slots: every meld holds at least three cards (Basic 52 // 3, römi 106 // 3)."""
        if not self.table_melds:
            return 0
        return (NUM_NATURAL * self.decks + self.most_printed_jokers) // 3

    @property
    def has_wild_joker(self) -> bool:
        """Whether the game takes the wild joker option (I2)."""
        return "wild_joker" in self.options

    @property
    def arrangement_game(self) -> str:
        """``free_arrangement_game``, or this game's own name."""
        return self.free_arrangement_game or self.name
