"""What an agent can read from its observation vector: a small decoder over ``rummy_env.encoding``.

``ObservationReader(game, num_players).read(observation)`` returns a ``View`` with the named
parts of the vector as plain ints and count lists (card types 0..52, see ``rummy_env.cards``).
Per-player rows are relative to the observer: row 0 is the observer, row 1 the next seat to play.
Nothing here looks at a game state: everything comes from the vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rummy_env.cards import JOKER, NUM_RANKS, NUM_TYPES
from rummy_env.encoding import MAX_TABLE_MELDS, observation_layout
from rummy_env.ruleset import make_ruleset


@dataclass
class View:
    """One observation, decoded."""

    hand: list[int]
    """The observer's counts per card type."""
    discard_top: int
    """The card on top of the discard pile, or -1."""
    discard_rest: list[int]
    just_taken: int
    """The card the player to act took this turn (discard top or cut card), or -1."""
    must_place: int
    """römi: the natural card owed to the table by the end of this turn (R4), or -1."""
    owed_jokers: int
    """römi: jokers owed to the table by the end of this turn (taken by swaps or from the pile, R4, R5)."""
    wild_card: int
    """Indian with a wild joker: the card turned up beside the stock (I2), else -1."""
    wild_rank: int | None
    """Indian with a wild joker: the wild rank (I2), else None."""
    cut_card: int
    """römi: the cut card while it lies there (R2), or -1."""
    table_cards: list[int]
    table_melds: np.ndarray
    """(slots, 53) int array: +1 a natural stands for the card, -1 a joker does; column 52 counts jokers."""
    known: list[list[int]]
    discarded: list[list[int]]
    phase: int
    """0 draw, 1 play, -1 over."""
    stock_size: int
    stock_rebuilt: bool
    """Whether the stock was rebuilt from the discards once already (G8)."""
    hand_sizes: list[int]
    opened: list[bool]
    turn_fraction: float
    """Turns played / max_turns (coarse: steps of 1/127)."""

    @property
    def num_table_melds(self) -> int:
        """How many table meld slots are in use."""
        rows = np.flatnonzero(np.abs(self.table_melds).sum(axis=1))
        return 0 if rows.size == 0 else int(rows[-1]) + 1

    def seen_counts(self) -> list[int]:
        """Copies of each card type the observer can account for: own hand, the pile, the table, cut or wild card."""
        seen = [a + b + c for a, b, c in zip(self.hand, self.discard_rest, self.table_cards)]
        if self.discard_top >= 0:
            seen[self.discard_top] += 1
        if self.cut_card >= 0:
            seen[self.cut_card] += 1
        if self.wild_card >= 0:
            seen[self.wild_card] += 1
        return seen


_NO_TABLE = np.zeros((0, NUM_TYPES), np.int64)


class ObservationReader:
    """Decodes the observation vectors of one game and player count (and rule options, RULES)."""

    def __init__(self, game: str, num_players: int, **options):
        self.game = game
        self.num_players = num_players
        self.rules = make_ruleset(game, num_players, **options)
        self.slices = observation_layout(game, num_players)
        self.max_table_melds = MAX_TABLE_MELDS[game]
        self.size = max(s.stop for s in self.slices.values())
        self._deck_size = 52 * self.rules.decks + self.rules.printed_jokers

    def read(self, observation: np.ndarray) -> View:
        """The named parts of ``observation`` (a vector of this game's observation size)."""
        obs = np.asarray(observation)
        if obs.shape != (self.size,):
            raise ValueError(f"observation of shape {obs.shape}: {self.game!r} with {self.num_players} players "
                             f"has ({self.size},)")
        s = self.slices
        n = self.num_players
        counts = obs.astype(np.int64)  # every plane holds small whole counts

        def part(name: str) -> list[int]:
            return counts[s[name]].tolist()

        def one_hot(name: str) -> int:
            if name not in s:
                return -1
            plane = part(name)
            return plane.index(1) if 1 in plane else -1

        def rows(name: str) -> list[list[int]]:
            flat = part(name)
            return [flat[i * NUM_TYPES:(i + 1) * NUM_TYPES] for i in range(n)]

        owed = part("must_place") if "must_place" in s else [0] * NUM_TYPES
        owed_natural = owed.index(1) if 1 in owed[:JOKER] else -1
        owed_jokers = owed[JOKER]
        wild = one_hot("wild_card")
        wild_rank = None if wild < 0 else (0 if wild == JOKER else wild % NUM_RANKS)
        if "table_melds" in s:
            table_melds = counts[s["table_melds"]].reshape(self.max_table_melds, NUM_TYPES)
            table_cards = part("table_cards")
            opened = [bool(x) for x in part("opened")]
        else:
            table_melds = _NO_TABLE
            table_cards = [0] * NUM_TYPES
            opened = [False] * n
        phase = part("phase")
        scalars = obs[s["stock_size"].start:s["turn"].stop].tolist()
        base = s["stock_size"].start
        sizes = scalars[s["hand_sizes"].start - base:s["hand_sizes"].stop - base]
        return View(
            hand=part("hand"),
            discard_top=one_hot("discard_top"),
            discard_rest=part("discard_rest"),
            just_taken=one_hot("just_taken"),
            must_place=owed_natural,
            owed_jokers=owed_jokers,
            wild_card=wild,
            wild_rank=wild_rank,
            cut_card=one_hot("cut_card"),
            table_cards=table_cards,
            table_melds=table_melds,
            known=rows("known"),
            discarded=rows("discarded"),
            phase=0 if phase[0] else (1 if phase[1] else -1),
            stock_size=int(round(scalars[0] * self._deck_size)),
            stock_rebuilt=bool(scalars[s["stock_rebuilt"].start - base]),
            hand_sizes=[int(round(x * self.rules.hand_size)) for x in sizes],
            opened=opened,
            turn_fraction=scalars[s["turn"].start - base],
        )

    def hand(self, observation: np.ndarray) -> list[int]:
        """Only the observer's hand counts (cheaper than ``read``)."""
        return observation[self.slices["hand"]].astype(np.int64).tolist()
