"""The meld solver's tables, built once: what both searches read (G3–G5, I2, I3, I5, I7, B2, R3).

``rummy_env.solver`` (the Python search, the reference) and ``rummy_env.compiled.solver`` (the
same search compiled) both import this module and nothing of each other's tables: the search modes,
the lives classes and how they add, the ways a rank's cards split into sets, per-rank-mask facts
about runs, and each rule set's values and limits (``RuleTables``, one per game and wild rank).
"""

from __future__ import annotations

import itertools

from .cards import NUM_NATURAL, NUM_RANKS, NUM_SUITS
from .games import game_spec

INF = 1 << 30
"""The search's "impossible" (no arrangement with both lives)."""

FREE, LIVES, DECLARE = range(3)
"""Search modes: least deadwood; least deadwood with both lives (I5, I7); whether everything
melds (a declaration, I5: the Python search only)."""

EVEN_BITS = sum(1 << 2 * r for r in range(NUM_RANKS))
"""The low bit of each rank in a suit's cards packed two bits a rank."""

# ---------------------------------------------------------------------------------------------
# Lives classes (I5, I7): what an arrangement's runs give, as (has a pure run, runs counted up to 2).

CLASSES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2))
C_NONE, C_RUN, C_TWO_RUNS, C_PURE, C_LIVES = range(5)
CLASS_ADD = tuple(
    tuple(CLASSES.index((min(1, a[0] + b[0]), min(2, a[1] + b[1]))) for b in CLASSES) for a in CLASSES
)
"""The class of two arrangements' runs together."""
CLASS_GE = tuple(tuple(a[0] >= b[0] and a[1] >= b[1] for b in CLASSES) for a in CLASSES)
"""Whether one class gives at least what another gives."""
CLASS_ORDER = tuple(-(p + r) for p, r in CLASSES)
"""A sort key: the classes giving more first."""
CLASS_SUM = tuple(r + 16 * p for p, r in CLASSES)
"""Classes as numbers that add: both lives when the sum is at least 16 with at least 2 below it."""

# ---------------------------------------------------------------------------------------------
# Sets (G4): suit masks with at least two suits are the sets a rank can hold (a one-natural set is a run).

SET_MASKS = tuple(m for m in range(1 << NUM_SUITS) if m.bit_count() >= 2)
MASK_SUITS = tuple(tuple(s for s in range(NUM_SUITS) if m >> s & 1) for m in range(1 << NUM_SUITS))
"""The suits of each 4-bit suit mask."""


def mask_sum(a: int, b: int) -> int:
    """The sums of one number from each bit mask, as a bit mask."""
    out = 0
    while b:
        low = b & -b
        out |= a * low
        b ^= low
    return out


def set_tables(cap: int | None) -> tuple[list, list, list]:
    """For each rank's cards given to sets (a base-3 digit per suit, 0..80): the fewest jokers that
    split them into sets (INF if none), one such split as ((suit mask, jokers), …), and, letting
    sets grow to four, every joker total possible as a bit mask (0 if none). ``cap``: the most
    jokers a meld takes (None: any)."""
    fewest, witness, totals = [INF] * 81, [()] * 81, [0] * 81

    def splits(cnt: tuple) -> list:
        s0 = next((s for s in range(NUM_SUITS) if cnt[s]), None)
        if s0 is None:
            return [()]
        out = []
        for m in SET_MASKS:
            suits = MASK_SUITS[m]
            if m >> s0 & 1 and all(cnt[s] for s in suits):
                rest = tuple(n - (m >> s & 1) for s, n in enumerate(cnt))
                out.extend((m,) + tail for tail in splits(rest))
        return out

    for code in range(81):
        cnt = tuple(code // 3**s % 3 for s in range(NUM_SUITS))
        for split in splits(cnt):
            low = [max(0, 3 - len(MASK_SUITS[m])) for m in split]
            if cap is not None and any(j > cap for j in low):
                continue
            if sum(low) < fewest[code]:
                fewest[code] = sum(low)
                witness[code] = tuple(zip(split, low))
            ways = 1
            for m in split:
                top = 4 - len(MASK_SUITS[m])
                ways = mask_sum(ways, sum(1 << j for j in range(max(0, 3 - len(MASK_SUITS[m])), top + 1)))
            totals[code] |= ways
    return fewest, witness, totals


# ---------------------------------------------------------------------------------------------
# Runs (G5): facts about one suit's ranks, per 13-bit rank mask.

_MASK_FACTS: dict[bool, list] = {}


def mask_facts(ace_high: bool) -> list:
    """Per 13-bit rank mask of one suit: (run starts as positions 0..11 of three held in a row,
    those positions, ranks covered by such runs, ranks with no other card within two ranks)."""
    got = _MASK_FACTS.get(ace_high)
    if got is None:
        got = _MASK_FACTS[ace_high] = []
        for mask in range(1 << NUM_RANKS):
            # positions 0..13: the ace also stands at 13 where it may play high
            m = mask | (mask & 1) << 13 if ace_high else mask
            starts = m & m >> 1 & m >> 2
            cover = starts | starts << 1 | starts << 2
            in_run = (cover | cover >> 13) & 0x1FFF
            alone = m & ~(m << 1 | m << 2 | m >> 1 | m >> 2)
            lone = alone & 0x1FFE | (alone & (alone >> 13 if ace_high else 1) & 1)
            got.append((starts, tuple(a for a in range(12) if starts >> a & 1), in_run, lone))
    return got


# ---------------------------------------------------------------------------------------------
# One rule set: a game's meld rules and card values, with a wild rank for Indian (I2).


class RuleTables:
    """A game's meld rules and values (with a wild rank for Indian), and its set tables."""

    def __init__(self, game: str, wild_rank: int | None, unit: bool = False) -> None:
        spec = game_spec(game)
        self.wild = wild_rank
        self.ace_high = spec.melds.ace_high
        self.cap = spec.melds.max_jokers
        """The most jokers a meld takes (None: any, I3; 0: no jokers)."""
        self.lives = spec.lives
        values = list(spec.values)
        if unit:  # deadwood counted in cards, not points
            values = [1] * NUM_NATURAL + [0]
        if wild_rank is not None:
            for s in range(NUM_SUITS):
                values[s * NUM_RANKS + wild_rank] = 0  # I7: wild jokers pay 0
        self.values = tuple(values)
        self.rank_values = tuple(values[:NUM_RANKS])
        self.wild_bit = 0 if wild_rank is None else 1 << wild_rank
        fewest, self.set_witness, self.set_choices_ways = set_tables(self.cap)
        # For each rank's counts (a base-3 digit per suit): every part of them that splits into
        # sets, as (part, fewest jokers, its digit for each suit); the empty part comes first.
        self.set_choices = []
        for code in range(81):
            digits = [code // 3**s % 3 for s in range(NUM_SUITS)]
            subs = []
            for part in itertools.product(*(range(n + 1) for n in digits)):
                sub = sum(k * 3**s for s, k in enumerate(part))
                if sub == 0 or fewest[sub] < INF:
                    subs.append((sub, fewest[sub]) + part)
            self.set_choices.append(tuple(subs))


_RULE_TABLES: dict = {}


def rule_tables(game: str, wild_rank: int | None) -> RuleTables:
    """The tables of ``game`` (``"count"``: Indian with deadwood counted in natural cards) with
    ``wild_rank``, built once; an unknown game, or a wild rank where the game has none, is refused."""
    got = _RULE_TABLES.get((game, wild_rank))
    if got is None:
        spec = game_spec("indian" if game == "count" else game)  # an unknown game is an error naming it
        if wild_rank is not None and (not spec.has_wild_joker or isinstance(wild_rank, bool)
                                      or wild_rank not in range(NUM_RANKS)):
            raise ValueError(f"wild_rank {wild_rank!r}: only Indian has a wild rank, an int 0..12")
        got = _RULE_TABLES[(game, wild_rank)] = RuleTables(spec.name, wild_rank, unit=game == "count")
    return got
