"""The exact meld solver: best arrangement, lowest penalty, declarations.

Rules: G3–G5, I2, I3, I5, I7, B2, B5, R3, R7 of the rule book, ``docs/rules.md``.

A hand is a count array over the 53 card types (``rummy_env.cards``); ``wild_rank`` (Indian only)
is a rank 0..12 whose cards may each be a joker or themselves (I2). Every answer is exact:
``tests/test_solver.py`` checks it against a brute force built on ``melds.is_meld_cards``.

How a hand is solved, and why each shortcut is exact:

* **Sets first, then each suit alone.** Only ranks holding two suits or more (three without
  jokers) can hold a set. For every way of giving cards at those ranks to sets (a table lists the
  splits of a rank's cards into sets and the fewest jokers they take), each suit's remaining
  cards are solved alone, and the four suits are added up under the joker budget and the lives
  rule (I7). Suits come with lower bounds, so most ways are cut before they are added up.
* **A suit's answer is a small table** (its *profile*): the least deadwood for each lives class
  (pure run or not, runs up to two) and number of jokers used. It depends only on the suit's 13
  counts, so it is memoised across hands (bounded caches of what a pure function returns; the
  search inside shares its sub-results too). Cards that no run of the suit can hold with the
  jokers at hand are taken out first, so that hands share profiles.
* **Jokers are placed as few as needed**: a run of ``n`` naturals spanning ``s`` positions takes
  ``max(3, s) - n``, a set ``3 - n``. More never makes a meld that was not one, and only makes a
  run impure. A declaration needs every joker inside a meld, but a leftover joker can always join
  the second-life run when the hand has at most 16 cards (that run stays within 13 cards); larger
  hands try every number of extra jokers in each meld. A suit never needs more than two jokers
  per card, so budgets are capped (and rounded up to share profiles).
* **A set with one natural is never needed:** the same cards make a run, which is also a life.
* **Wild cards (I2)** of a suit may become jokers (the profile records them as jokers handed
  back). A wild card left as itself must sit in a run: as deadwood it is worth no less as an
  unused joker. Sets of wild cards only are not needed: they pay nothing, are no life, and their
  cards can be jokers in the second-life run instead (hands of up to 16 cards).
* **Declaring with 14 cards** (``declare_discards``): quick counts first, on bit masks of the
  hand (a pure run; cards that cannot meld at all; cards that need two jokers each; with one
  joker, the cards in no jokerless meld must all fit the one meld that holds it, but for the
  discard), then one search of the 14 cards for an arrangement with both lives leaving at most
  one natural card out, which exists exactly when some discard declares; only then is each
  discard tried.

**Compiled or Python.** ``indian_penalty``, ``min_deadwood``, ``hand_penalties`` (many hands in
one call), ``best_arrangement`` and ``min_loose_cards`` (the römi going-out bound, R4) run
compiled (numba, ``rummy_env.compiled.solver``) by default: the same search step for step, so
the same penalties *and* the same arrangements (``tests/test_compiled_solver.py`` runs both in
lockstep), both reading the tables of ``rummy_env.solver_tables`` (the compiled module
imports nothing of this one). A penalty is one call into compiled code, the checks and quick answers (no pure run,
nothing that melds) included; a count the compiled checks refuse, or a hand too large for its
scratch arrays, goes to the Python path, whose checks name what is wrong. ``use_compiled(False)``,
or ``RUMMY_COMPILED=0`` in the environment before the first import, selects this module's
Python search, which stays the reference. ``declare_discards`` runs its quick tests in Python,
then, compiled, solves the hand each candidate discard leaves (one batched call: a discard
declares exactly when that hand pays no penalty); ``can_declare`` is Python either way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from operator import itemgetter
from typing import NamedTuple

import numpy as _np

from .cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_SUITS, NUM_TYPES, format_card
from .games import game_spec
from .melds import MAX_RUN
from .solver_tables import (
    C_NONE,
    C_PURE,
    C_RUN,
    CLASS_ADD,
    CLASS_GE,
    CLASS_ORDER,
    CLASS_SUM,
    DECLARE,
    EVEN_BITS,
    FREE,
    INF,
    LIVES,
    MASK_SUITS,
    RuleTables,
    mask_facts,
    mask_sum,
    rule_tables,
)

_CACHE_LIMIT = 1 << 17
"""Memoised suit profiles and summaries kept per game before the cache is cleared."""


class Arrangement(NamedTuple):
    """A partition of a hand: melds (physical card types, runs low to high) and deadwood."""

    penalty: int
    melds: tuple[tuple[int, ...], ...]
    deadwood: tuple[int, ...]


_first = itemgetter(0)


def _pareto(entries: list, exact: bool = False) -> tuple:
    """Entries (class, jokers, deadwood, …) that no other entry beats on all three.

    With ``exact`` (every joker must be placed) only entries using as many jokers compete.
    """
    entries.sort(key=lambda e: (e[2], e[1], CLASS_ORDER[e[0]]))
    kept: list = []
    for e in entries:
        c, u = e[0], e[1]
        for f in kept:
            if (f[1] == u if exact else f[1] <= u) and CLASS_GE[f[0]][c]:
                break
        else:
            kept.append(e)
    return tuple(kept)


def _run_candidates(st: Sequence[int], r: int, jmax: int, ace_high: bool, extras: bool) -> list:
    """Runs of one suit whose lowest natural is position ``r``: (positions, jokers) pairs.

    Positions are 0..13 (13 is the ace played high). Jokers fill gaps (also where a natural is
    present but kept for another meld) and pad the run to three; with ``extras`` every longer
    run up to 13 is offered too.
    """
    out: list = []

    def emit(pos: tuple, span: int) -> None:
        length = max(3, span)
        base = length - len(pos)
        if base > jmax:
            return
        if extras:
            out.extend((pos, g) for g in range(base, min(jmax, base + 13 - length) + 1))
        else:
            out.append((pos, base))

    emit((r,), 1)
    stack = [(r, (r,), 0)]
    while stack:
        last, pos, gaps = stack.pop()
        for q in range(last + 1, NUM_RANKS):
            ng = gaps + q - last - 1
            if ng > jmax:
                break
            if st[q]:
                npos = pos + (q,)
                emit(npos, q - r + 1)
                stack.append((q, npos, ng))
    if r == 0 and ace_high:
        stack = [(13, (13,), 0)]
        while stack:
            last, pos, gaps = stack.pop()
            for q in range(last - 1, 0, -1):
                ng = gaps + last - q - 1
                if ng > jmax:
                    break
                if st[q]:
                    npos = pos + (q,)
                    emit(npos, 14 - q)
                    stack.append((q, npos, ng))
    return out


def _room(budget: int, cards: int) -> int:
    """The joker budget a suit's profile is built for: a suit never needs more than two jokers per
    card, and budgets are rounded up (0, 1, 2, 4, 8, …) so that hands share profiles; the
    profile's extra entries are cut by the real budget when suits are added up."""
    if budget > 2:
        budget = 1 << (budget - 1).bit_length()
    return min(budget, 2 * cards)


_HELD_DIGITS = bytes.maketrans(b"\x00\x01\x02", b"011")
_TWICE_DIGITS = bytes.maketrans(b"\x00\x01\x02", b"001")


def _mask_values(rank_values: Sequence[int]) -> list[int]:
    """Per 13-bit rank mask, the value of one card of each rank in it."""
    out = [0] * (1 << NUM_RANKS)
    for m in range(1, 1 << NUM_RANKS):
        low = m & -m
        out[m] = out[m ^ low] + rank_values[low.bit_length() - 1]
    return out


class _Game:
    """One rule set's memo tables for the Python search (its rules: ``solver_tables.RuleTables``)."""

    def __init__(self, rules: RuleTables, plain: _Game | None = None) -> None:
        self.rules = rules
        self.plain = plain
        """The same game without a wild rank: suits holding no wild card share its answers."""
        self.profiles: dict = {}
        self.summaries: dict = {}
        self.mask_values: list[int] | None = None  # per rank mask, the value of one card of each rank
        self.options: dict = {}
        self.inner: dict = {}
        self.run_cands: dict = {}

    # -- one suit ------------------------------------------------------------------------------

    def summary(self, key: bytes) -> tuple:
        """Facts about one suit's 13 counts, for the quick tests.

        (value, has a pure run, has two disjoint pure runs, rank mask, cards,
        ranks with no other card of the suit within two ranks, ranks held twice,
        ranks in no jokerless run).
        """
        got = self.summaries.get(key)
        if got is not None:
            return got
        if self.plain is not None and not key[self.rules.wild]:
            got = self.summaries[key] = self.plain.summary(key)
            return got
        if len(key) != NUM_RANKS or max(key) > 2:
            raise ValueError("a natural card is held at most twice (two decks)")
        backwards = key[::-1]  # rank 12 first, so that the digits read as a binary rank mask
        mask = int(backwards.translate(_HELD_DIGITS), 2)
        doubles = int(backwards.translate(_TWICE_DIGITS), 2)
        values = self.mask_values
        if values is None:
            values = self.mask_values = _mask_values(self.rules.rank_values)
        value = values[mask] + values[doubles]
        starts, found, in_run, lone = mask_facts(self.rules.ace_high)[mask]
        two = False
        if starts:
            # positions 0..13: the ace also stands at 13 where it may play high
            m2 = doubles | (doubles & 1) << 13 if self.rules.ace_high else doubles
            for i, a in enumerate(found):
                for b in found[i:]:
                    both = (7 << a) & (7 << b)
                    ace_twice = (7 << a | 7 << b) & 1 and (7 << a | 7 << b) >> 13 & 1
                    if not both & ~m2 and not (ace_twice and not doubles & 1):
                        two = True
        got = (value, bool(starts), two, mask, sum(key), lone, doubles, mask & ~in_run)
        if len(self.summaries) >= _CACHE_LIMIT:
            self.summaries.clear()
        self.summaries[key] = got
        return got

    def profile(self, key: bytes, budget: int, extras: bool) -> tuple:
        """Pareto table of (class, jokers used, deadwood, runs) for one suit's counts ``key``.

        Jokers used may be negative: wild cards of the suit turned into jokers (I2).
        """
        ck = (key, budget, extras)
        got = self.profiles.get(ck)
        if got is None and self.plain is not None and not key[self.rules.wild]:
            got = self.profiles[ck] = self.plain.profile(key, budget, extras)
        if got is None:
            # Cards no run of this suit can hold (none with two jokers to spare; with one, those
            # with no neighbour within two ranks; with none, those in no natural run) are
            # deadwood here whatever happens: solve without them, which many hands share.
            jmax = budget if self.rules.cap is None else min(budget, self.rules.cap)
            dead = 0
            if jmax < 2:
                x = self.summary(key)
                dead = (x[5] if jmax else x[7]) & ~self.rules.wild_bit
            if dead:
                rest = bytearray(key)
                lost = 0
                for r in range(NUM_RANKS):
                    if dead >> r & 1:
                        lost += self.rules.rank_values[r] * rest[r]
                        rest[r] = 0
                left = bytes(rest)
                inner = self.profile(left, _room(budget, sum(left)) if not extras else budget, extras)
                got = tuple((c, u, d + lost, runs) for c, u, d, runs in inner)
            else:
                got = self._suit_search(tuple(key), budget, extras)
            if len(self.profiles) >= _CACHE_LIMIT:
                self.profiles.clear()
            self.profiles[ck] = got
        return got

    def _suit_search(self, start: tuple, budget: int, extras: bool) -> tuple:
        """A suit's profile: runs searched card by card from the lowest, wild cards tried as jokers."""
        memo = self.inner.get((budget, extras))
        if memo is None or len(memo) >= _CACHE_LIMIT:
            memo = self.inner[(budget, extras)] = {}
        packed = sum(n << 2 * r for r, n in enumerate(start))
        wild = self.rules.wild
        if wild is None or not start[wild]:
            return self._runs(packed, budget, extras, memo)
        out = []
        for k in range(start[wild] + 1):  # k wild cards of this suit become jokers
            mark = ((None, k),) if k else ()
            inner = self._runs(packed - (k << 2 * wild), budget, extras, memo)
            out.extend((c, u - k, d, runs + mark) for c, u, d, runs in inner)
        return _pareto(out, extras)

    def _runs(self, st: int, budget: int, extras: bool, memo: dict) -> tuple:
        """Profile of the cards ``st`` (two bits a rank) where wild cards must sit in runs.

        The lowest card is deadwood or the lowest natural of a run; ``memo`` is shared by every
        suit searched with this budget, since the cards left after the lowest ones recur.
        """
        got = memo.get(st)
        if got is not None:
            return got
        if not st:
            got = memo[st] = ((C_NONE, 0, 0, ()),)
            return got
        r = ((st & -st).bit_length() - 1) >> 1
        out = []
        if r != self.rules.wild:  # a wild card is never deadwood: as a joker it is worth as much, and more
            v = self.rules.rank_values[r]
            out = [(c, u, d + v, runs) for c, u, d, runs in self._runs(st - (1 << 2 * r), budget, extras, memo)]
        jmax = budget if self.rules.cap is None else min(budget, self.rules.cap)
        present = (st | st >> 1) & EVEN_BITS
        ck = (present, r, jmax, extras)
        cands = self.run_cands.get(ck)
        if cands is None:
            held = [present >> 2 * q & 1 for q in range(NUM_RANKS)]
            cands = self.run_cands[ck] = tuple(
                (
                    sum(1 << 2 * (p % NUM_RANKS) for p in pos),  # the cards it takes, two bits a rank
                    g,
                    ((pos, g),),
                    (C_PURE if g == 0 else C_RUN) if self.rules.lives else C_NONE,
                )
                for pos, g in _run_candidates(held, r, jmax, self.rules.ace_high, extras)
            )
        add = CLASS_ADD
        for remove, g, run, rc in cands:
            top = budget - g
            for c, u, d, runs in self._runs(st - remove, budget, extras, memo):
                if u <= top:
                    out.append((add[c][rc], u + g, d, runs + run))
        got = memo[st] = _pareto(out, extras) if out else ()
        return got

    # -- the whole hand ------------------------------------------------------------------------

    def suit_options(self, key: bytes, budget: int, extras: bool) -> dict:
        """One suit's choices of cards to give to sets, filled in as they are asked for (``choice``).

        Keyed by the cards given (two bits a rank); each is (least deadwood, profile, least jokers
        to meld the whole suit, INF if it cannot).
        """
        ck = (key, budget, extras)
        got = self.options.get(ck)
        if got is None:
            if len(self.options) >= _CACHE_LIMIT:
                self.options.clear()
            got = self.options[ck] = {}
        return got

    def choice(self, key: bytes, given: int, budget: int, extras: bool, options: dict) -> tuple:
        """Fill in ``options[given]`` (see ``suit_options``) and return it."""
        rest = bytearray(key)
        r = 0
        q = given
        while q:
            rest[r] -= q & 3
            q >>= 2
            r += 1
        left = bytes(rest)
        prof = self.profile(left, budget if extras else _room(budget, sum(left)), extras)
        need = min([e[1] for e in prof if not e[2]], default=INF)
        got = options[given] = (prof[0][2], prof, need)
        return got

    def solve(self, nat: bytes, printed: int, mode: int, extras: bool = False, limit: int = INF, sums=None):
        """Least deadwood (``FREE``; ``LIVES``: with both lives) over every way to take sets out,
        or ``limit`` when nothing is lower; ``DECLARE``: whether everything melds (I5).

        ``nat`` holds the 52 natural counts (wild cards included), ``printed`` the printed jokers;
        ``sums``, if known, the four suits' ``summary``.
        """
        got = self.search(nat, printed, mode, extras, limit, False, sums)
        return got if mode != DECLARE else got == 0

    def arrange(self, nat: bytes, printed: int, mode: int) -> tuple | None:
        """(deadwood, sets as (rank, suit mask, jokers), the four suits' profile entries) or None."""
        return self.search(nat, printed, mode, False, INF, True)

    def search(self, nat: bytes, printed: int, mode: int, extras: bool, limit: int, trace: bool, sums=None):
        keys = [nat[0:13], nat[13:26], nat[26:39], nat[39:52]]
        if sums is None:
            summary = self.summary
            sums = [summary(k) for k in keys]
        a, b, c, d = sums[0][3], sums[1][3], sums[2][3], sums[3][3]
        wild_bit = self.rules.wild_bit
        jokers = printed  # every joker the hand could field
        if wild_bit:
            w = self.rules.wild
            jokers += nat[w] + nat[13 + w] + nat[26 + w] + nat[39 + w]
        if jokers and self.rules.cap != 0:
            cand = (a & (b | c | d)) | (b & (c | d)) | (c & d)
        else:
            cand = (a & b & (c | d)) | (c & d & (a | b))
        if not extras:
            cand &= ~wild_bit  # a set of wild cards pays nothing and is no life: they are jokers instead
        declare = mode == DECLARE
        best = 1 if declare else limit  # declaring: only arrangements with nothing left over
        best_trace = None
        if not cand:
            profile = self.profile
            if extras:
                profs = [profile(k, jokers, True) for k in keys]
            else:
                profs = [profile(k, _room(jokers, x[4]), False) for k, x in zip(keys, sums)]
            best, pick = _combine(profs, printed, mode, extras, best)
            if trace:
                return None if pick is None else (best, (), pick)
            return best
        # Sets: every way to give cards at those ranks to sets (the rank table lists the splits),
        # within the joker budget; each suit then looks up its choice, cheapest bounds first.
        leaves = [(0, 0, 0, 0, 0, ())]
        r = 0
        while cand:
            if cand & 1:
                code = nat[r] + 3 * nat[13 + r] + 9 * nat[26 + r] + 27 * nat[39 + r]
                shift = 2 * r
                grown = []
                for used, q0, q1, q2, q3, sets in leaves:
                    for sub, j, d0, d1, d2, d3 in self.rules.set_choices[code]:
                        if sub == 0:
                            grown.append((used, q0, q1, q2, q3, sets))
                        elif extras or used + j <= jokers:
                            grown.append(
                                (
                                    used + j,
                                    q0 | d0 << shift,
                                    q1 | d1 << shift,
                                    q2 | d2 << shift,
                                    q3 | d3 << shift,
                                    sets + ((r, sub),),
                                )
                            )
                leaves = grown
            cand >>= 1
            r += 1
        room = jokers if extras else _room(jokers, 26)  # choices depend on the budget only so far
        opts0 = self.suit_options(keys[0], room, extras)
        opts1 = self.suit_options(keys[1], room, extras)
        opts2 = self.suit_options(keys[2], room, extras)
        opts3 = self.suit_options(keys[3], room, extras)
        choice = self.choice
        ranked = []
        for used, q0, q1, q2, q3, sets in leaves:
            o0 = opts0.get(q0) or choice(keys[0], q0, room, extras, opts0)
            o1 = opts1.get(q1) or choice(keys[1], q1, room, extras, opts1)
            o2 = opts2.get(q2) or choice(keys[2], q2, room, extras, opts2)
            o3 = opts3.get(q3) or choice(keys[3], q3, room, extras, opts3)
            low = o0[0] + o1[0] + o2[0] + o3[0]
            if low < best:
                ranked.append((low, used, o0, o1, o2, o3, sets))
        ranked.sort(key=_first)
        for low, used, o0, o1, o2, o3, sets in ranked:
            if low >= best:
                break
            if declare and o0[2] + o1[2] + o2[2] + o3[2] + used > printed:
                continue
            profs = (o0[1], o1[1], o2[1], o3[1])
            if extras:
                ways = 1  # joker totals the sets can take, as a bit mask
                for _, sub in sets:
                    ways = mask_sum(ways, self.rules.set_choices_ways[sub])
                for j in range(ways.bit_length()):
                    if ways >> j & 1:
                        got, pick = _combine(profs, printed - j, mode, True, best)
                        if pick is not None:
                            return got
                continue
            got, pick = _combine(profs, printed - used, mode, False, best)
            if pick is not None:
                best = got
                if declare:
                    return best
                if trace:
                    split = tuple((r, m, j) for r, sub in sets for m, j in self.rules.set_witness[sub])
                    best_trace = (best, split, pick)
        return best_trace if trace else best



def _combine(profs: list, budget: int, mode: int, extras: bool, bound: int) -> tuple:
    """The best way to add four suit profiles under the joker budget, if it is below ``bound``.

    ``budget``: the printed jokers left (suits may add wild ones). ``FREE``: least deadwood;
    ``LIVES``: least deadwood with both lives; ``DECLARE``: the same, where (with ``extras``) every
    joker must be used. Returns (deadwood, the four chosen entries), or (``bound``, None).
    Each profile is sorted by deadwood, so every loop stops at the first entry that cannot win.
    """
    p0, p1, p2, p3 = profs
    best = bound
    lives = mode != FREE
    exact = mode == DECLARE and extras
    cs = CLASS_SUM
    pick = None
    for e0 in p0:
        d0 = e0[2]
        if d0 >= best:
            break
        for e1 in p1:
            d1 = d0 + e1[2]
            if d1 >= best:
                break
            for e2 in p2:
                d2 = d1 + e2[2]
                if d2 >= best:
                    break
                for e3 in p3:
                    d = d2 + e3[2]
                    if d >= best:
                        break
                    u = e0[1] + e1[1] + e2[1] + e3[1]
                    if u > budget or (exact and u != budget):
                        continue
                    if lives:
                        c = cs[e0[0]] + cs[e1[0]] + cs[e2[0]] + cs[e3[0]]
                        if c < 16 or c & 15 < 2:
                            continue
                    best = d
                    pick = (e0, e1, e2, e3)
                    break
    return best, pick


_GAMES: dict = {}


def _game(game: str, wild_rank: int | None) -> _Game:
    got = _GAMES.get((game, wild_rank))
    if got is None:
        rules = rule_tables(game, wild_rank)  # refuses an unknown game or a wild rank it has not
        plain = None if wild_rank is None else _game(game, None)
        got = _GAMES[(game, wild_rank)] = _Game(rules, plain)
    return got


def clear_caches() -> None:
    """Forget every memoised suit profile (for benchmarks of a cold start; answers do not change)."""
    _GAMES.clear()
    _LOOSE.clear()
    if _compiled is not None:
        _compiled.clear_caches()
        _compiled._RULES.clear()
        _compiled._WILD_BANKS.clear()


# ---------------------------------------------------------------------------------------------
# The switch: the compiled search (``rummy_env.compiled.solver``) or this module's, the reference.

_compiled = None
"""The compiled module while the switch is on, else None."""


def use_compiled(on: bool = True) -> bool:
    """Select the compiled (numba) search for ``indian_penalty``, ``min_deadwood``,
    ``hand_penalties``, ``best_arrangement`` and ``min_loose_cards`` (``on``), or this module's
    Python search, the reference (not ``on``).

    Both give the same answers, arrangements included (``tests/test_compiled_solver.py``). The
    default is the compiled search; setting the environment variable ``RUMMY_COMPILED=0`` before
    the first import makes it the Python one. Returns the previous setting. ``declare_discards``
    uses the compiled penalty for its last step too; ``can_declare`` always uses the Python search.
    """
    global _compiled
    before = _compiled is not None
    if on:
        from .compiled import solver as fast

        _compiled = fast
    else:
        _compiled = None
    return before


def compiled_in_use() -> bool:
    """Whether the compiled search is selected (``use_compiled``)."""
    return _compiled is not None


_CARD_TYPES = _np.arange(NUM_TYPES)


def _natural_checked(b: bytes):
    """The 53 counts as a uint8 array, a natural card at most twice (the checks of ``summary``)."""
    if max(b[:NUM_NATURAL]) > 2:
        raise ValueError("a natural card is held at most twice (two decks)")
    return _np.frombuffer(b, _np.uint8)


def _bytes(counts: Sequence[int]) -> bytes:
    """The counts as 53 bytes (a natural card at most twice is checked per suit, in ``summary``)."""
    try:
        b = bytes(counts)
        if len(b) != NUM_TYPES and not isinstance(counts, (bytes, bytearray)):
            b = bytes(list(counts))  # e.g. a numpy array of wide integers
    except (TypeError, ValueError):
        raise ValueError(f"counts must be {NUM_TYPES} counts in 0..255") from None
    if len(b) != NUM_TYPES:
        raise ValueError(f"counts must have {NUM_TYPES} entries, not {len(b)}")
    return b


# ---------------------------------------------------------------------------------------------
# Public API


def indian_penalty(counts: Sequence[int], wild_rank: int | None = None) -> int:
    """What an Indian hand pays (I7): its deadwood if it has both lives, else all its cards."""
    if _compiled is not None:  # one call: the checks, the quick answers and the search
        got = _compiled.value(_kernel_hand(counts), _compiled.rules("indian", wild_rank), LIVES, 2, 255, INF)
        if got >= 0:
            return got
    return _python_penalty(_bytes(counts), wild_rank)


def indian_penalty_within(counts: _np.ndarray, wild_rank: int | None, copies: int, jokers: int,
                          cards: int) -> int | None:
    """``indian_penalty`` of a count array (53 integers, or floats holding whole numbers) in one
    compiled call, if every natural card is held at most ``copies`` times, the joker at most
    ``jokers`` times and the hand holds at most ``cards`` cards; else None, as it is when the
    compiled search is off: the caller then checks the counts and names what is wrong
    (``rules.hand_penalty``)."""
    if _compiled is None or counts.dtype not in _KERNEL_DTYPES or counts.shape != (NUM_TYPES,):
        return None
    got = _compiled.value(counts, _compiled.rules("indian", wild_rank), LIVES, copies, jokers, cards)
    return got if got >= 0 else None


def _kernel_hand(counts: Sequence[int]):
    """The counts as the compiled search reads them: an integer array of 53 as it is, else bytes
    (``_bytes``, which checks the length; the kernels read 53 counts unchecked)."""
    if type(counts) is _np.ndarray and counts.dtype in _INT_DTYPES and counts.shape == (NUM_TYPES,):
        return counts
    return _bytes(counts)


def _python_penalty(b: bytes, wild_rank: int | None) -> int:
    """``indian_penalty`` by this module's search (the reference, and where the compiled one
    does not fit or refuses: the checks here name what is wrong)."""
    g = _GAMES.get(("indian", wild_rank)) or _game("indian", wild_rank)
    known = g.summaries
    k0, k1, k2, k3 = b[0:13], b[13:26], b[26:39], b[39:52]
    s0 = known.get(k0) or g.summary(k0)
    s1 = known.get(k1) or g.summary(k1)
    s2 = known.get(k2) or g.summary(k2)
    s3 = known.get(k3) or g.summary(k3)
    total = s0[0] + s1[0] + s2[0] + s3[0]
    pure = s0[1] + s1[1] + s2[1] + s3[1]
    if not pure:
        return total  # I5: no pure run, no lives
    if (
        pure == 1
        and not b[JOKER]
        and not (s0[2] or s1[2] or s2[2] or s3[2])
        and not (s0[3] | s1[3] | s2[3] | s3[3]) & g.rules.wild_bit
    ):
        return total  # no joker, no wild card and one pure run: no second life
    return g.solve(b[:NUM_NATURAL], b[JOKER], LIVES, False, total, (s0, s1, s2, s3))


def min_deadwood(counts: Sequence[int], game: str, wild_rank: int | None = None) -> int:
    """Least value left outside melds (B5, R7 scoring; for Indian, without the lives rule)."""
    if _compiled is not None:  # one call: the checks, the quick answers and the search
        fast = _compiled.rules(game, wild_rank)
        got = _compiled.value(_kernel_hand(counts), fast, FREE, 2, fast.max_jokers, INF)
        if got >= 0:
            return got
    return _python_deadwood(_bytes(counts), game, wild_rank)


def _python_deadwood(b: bytes, game: str, wild_rank: int | None) -> int:
    """``min_deadwood`` by this module's search (see ``_python_penalty``)."""
    g = _GAMES.get((game, wild_rank)) or _game(game, wild_rank)
    if g.rules.cap == 0 and b[JOKER]:
        raise ValueError(f"{game!r} has no jokers")
    known = g.summaries
    k0, k1, k2, k3 = b[0:13], b[13:26], b[26:39], b[39:52]
    s0 = known.get(k0) or g.summary(k0)
    s1 = known.get(k1) or g.summary(k1)
    s2 = known.get(k2) or g.summary(k2)
    s3 = known.get(k3) or g.summary(k3)
    m0, m1, m2, m3 = s0[3], s1[3], s2[3], s3[3]
    if (
        not (b[JOKER] or s0[1] or s1[1] or s2[1] or s3[1])
        and not (m0 & m1 & (m2 | m3)) | (m2 & m3 & (m0 | m1))
        and not (m0 | m1 | m2 | m3) & g.rules.wild_bit
    ):
        return s0[0] + s1[0] + s2[0] + s3[0]  # no run, no set, no joker: nothing melds
    return g.solve(b[:NUM_NATURAL], b[JOKER], FREE, False, INF, (s0, s1, s2, s3))


def hand_penalties(game: str, counts, wild_rank=None) -> _np.ndarray:
    """Many hands at once: ``(N, 53)`` counts in, ``(N,)`` int64 out, the batch solved in one
    compiled call (rows are hands in ``rummy_env.cards`` order, e.g. observations' hand planes).

    Indian: what each hand pays (``indian_penalty``, I7); Basic and römi: its least deadwood
    (``min_deadwood``, B5, R7). Counts are integers, or floats holding whole numbers. ``wild_rank``
    (Indian only, I2): None, one rank 0..12 for every hand, or an array of N ranks, -1 where a
    hand has none. Bad input is a ``ValueError`` naming the row and the card; the answers are
    those of ``indian_penalty`` and ``min_deadwood`` (``tests/test_compiled_solver.py``).
    """
    spec = game_spec(game)  # an unknown game is an error naming it
    fast = _compiled
    hands = _np.asarray(counts)
    if hands.dtype.kind not in "iuf":
        raise ValueError(f"hand_penalties: counts are whole numbers (an integer or float dtype), "
                         f"not dtype {hands.dtype}")
    if hands.ndim != 2 or hands.shape[1] != NUM_TYPES:
        raise ValueError(f"hand_penalties takes an (N, {NUM_TYPES}) array of counts, one hand a row, "
                         f"not an array of shape {hands.shape}")
    wilds = _wild_rows(spec, wild_rank, len(hands))
    max_jokers = 0 if spec.melds.max_jokers == 0 else 255  # None: any number (I3)
    out = _np.zeros(len(hands), _np.int64)
    if fast is not None:
        if hands.dtype not in _KERNEL_DTYPES:
            hands = hands.astype(_np.float64 if hands.dtype.kind == "f" else _np.int64)
        if wilds is None:
            rows, banks = _np.zeros(len(hands), _np.int64), fast.rules(game, None).bank[None]
        else:
            rows, banks = wilds + 1, fast.wild_banks(game)
        mode = LIVES if spec.lives else FREE
        bad = fast.values(hands, rows, banks, mode, 2, max_jokers, INF, out)
        if bad >= 0:
            raise _row_error(game, bad, hands[bad], max_jokers)
        left = _np.flatnonzero(out < 0).tolist()  # too large for the scratch arrays
    else:
        bad_rows = _bad_rows(hands, max_jokers)
        if bad_rows.size:
            raise _row_error(game, int(bad_rows[0]), hands[bad_rows[0]], max_jokers)
        left = range(len(hands))
    for i in left:
        b = hands[i].astype(_np.uint8).tobytes()
        wild = None if wilds is None or wilds[i] < 0 else int(wilds[i])
        out[i] = _python_penalty(b, wild) if spec.lives else _python_deadwood(b, game, wild)
    return out


def _wild_rows(spec, wild_rank, n: int) -> _np.ndarray | None:
    """``hand_penalties``' wild ranks as N ints (-1: none), or None where no hand has one."""
    if wild_rank is None:
        return None
    if not spec.has_wild_joker:
        raise ValueError(f"hand_penalties: wild_rank={wild_rank!r}, but only Indian has a wild rank (I2), "
                         f"not {spec.name!r}")
    if isinstance(wild_rank, (int, _np.integer)) and not isinstance(wild_rank, bool):
        if not 0 <= wild_rank < NUM_RANKS:
            raise ValueError(f"hand_penalties: wild_rank {wild_rank} is not a rank 0..12")
        return _np.full(n, int(wild_rank), _np.int64)
    ranks = _np.asarray(wild_rank)
    if ranks.shape != (n,) or ranks.dtype.kind not in "iu":
        raise ValueError(f"hand_penalties: wild_rank is None, a rank 0..12 or {n} integer ranks (-1: none), "
                         f"not {type(wild_rank).__name__} of shape {ranks.shape} and dtype {ranks.dtype}")
    off = _np.flatnonzero((ranks < -1) | (ranks >= NUM_RANKS))
    if off.size:
        raise ValueError(f"hand_penalties: row {off[0]}: wild_rank {ranks[off[0]]} is not a rank 0..12 (or -1: none)")
    return ranks.astype(_np.int64)


def _bad_rows(hands: _np.ndarray, max_jokers: int) -> _np.ndarray:
    """The rows whose counts the compiled batch refuses (``_row_error`` says why), in order."""
    with _np.errstate(invalid="ignore"):
        limit = _np.full(NUM_TYPES, 2)
        limit[JOKER] = max_jokers
        bad = ~(hands >= 0) | (hands > limit) | (hands != _np.floor(hands))
    return _np.flatnonzero(bad.any(axis=1))


def _row_error(game: str, row: int, counts: _np.ndarray, max_jokers: int) -> ValueError:
    """What is wrong with row ``row`` of ``hand_penalties``' counts."""
    for card, x in enumerate(counts.tolist()):
        name = f"{format_card(card)} (index {card})"
        if not x >= 0:
            why = f"{x!r} copies of {name}: a count is never negative" if x < 0 else f"the count of {name} is {x!r}"
        elif x != int(x):
            why = f"the count of {name} is {x!r}, not a whole number"
        elif card == JOKER and x > max_jokers:
            why = (f"{game!r} has no jokers, not {int(x)}" if max_jokers == 0
                   else f"{int(x)} jokers, more than {max_jokers}")
        elif card != JOKER and x > 2:
            why = f"{int(x)} copies of {name}: a natural card is held at most twice (two decks)"
        else:
            continue
        return ValueError(f"hand_penalties: row {row}: {why}")
    raise AssertionError(f"hand_penalties: row {row} was refused, but its counts are within bounds")


_INT_DTYPES = frozenset(_np.dtype(t) for t in (_np.int8, _np.int16, _np.int32, _np.int64,
                                                _np.uint8, _np.uint16, _np.uint32, _np.uint64))
"""Count arrays the compiled search reads as they are (native byte order)."""
_KERNEL_DTYPES = _INT_DTYPES | {_np.dtype(_np.float32), _np.dtype(_np.float64)}


def min_loose_cards(counts: Sequence[int]) -> int:
    """Fewest natural cards left outside melds under Indian meld rules (ace high, any number of
    jokers a meld): a relaxation that bounds the römi going-out search (R4)."""
    b = _bytes(counts)
    got = _LOOSE.get(b)
    if got is None:
        got = -1
        if _compiled is not None:
            got = _compiled.solve(_natural_checked(b), _compiled.rules("count", None), FREE)
        if got < 0:  # the Python search, or a hand too large for the compiled one's scratch arrays
            g = _GAMES.get(("count", None)) or _game("count", None)
            got = g.solve(b[:NUM_NATURAL], b[JOKER], FREE)
        if len(_LOOSE) >= _CACHE_LIMIT:
            _LOOSE.clear()
        _LOOSE[b] = got
    return got


_LOOSE: dict[bytes, int] = {}
"""``min_loose_cards`` answers by the hand's 53 counts (the whole input)."""


def _jokers(g: _Game, b: bytes) -> int:
    """Printed jokers plus wild cards: every joker the hand could field."""
    w = g.rules.wild
    if w is None:
        return b[JOKER]
    return b[JOKER] + b[w] + b[13 + w] + b[26 + w] + b[39 + w]


def _lost_cards(g: _Game, sums: list, jokers: int) -> tuple[list[int], int]:
    """Cards that keep a hand from declaring, by a quick count (I5).

    Returns (per-suit rank masks, jokers needed). With two jokers or more: the natural cards with
    no other card of their suit within two ranks and no other suit of their rank each need a meld
    holding two jokers (one per suit; two copies of a card never share one), so ``jokers needed``
    is a lower bound. With fewer jokers the masks are the cards that cannot meld at all.
    """
    m = [x[3] for x in sums]
    wild_bit = g.rules.wild_bit
    if jokers == 0:
        in_set = (m[0] & m[1] & (m[2] | m[3])) | (m[2] & m[3] & (m[0] | m[1]))
        return [x[7] & ~in_set & ~wild_bit for x in sums], 0
    lone = []
    need = 0
    for s, x in enumerate(sums):
        others = m[(s + 1) % 4] | m[(s + 2) % 4] | m[(s + 3) % 4]
        mask = x[5] & ~others & ~wild_bit
        lone.append(mask)
        if mask:
            need += 4 if mask & x[6] else 2
    return lone, need


def _run_window(ranks: int, held: int, ace_high: bool, spare: bool) -> bool:
    """Whether the ranks ``ranks`` of one suit (each held once) could lie in one run with one joker,
    its other positions held (``held``); with ``spare``, one of them may be left out (the discard:
    only leaving out the lowest or the highest narrows the run)."""
    tries = [(ranks, held)]
    if ace_high and ranks & 1:
        tries.append((ranks & ~1 | 1 << 13, held | 1 << 13))  # the ace played high
    for positions, mask in tries:
        options = [positions]
        if spare:
            low_bit = positions & -positions
            options += [positions ^ low_bit, positions ^ (1 << (positions.bit_length() - 1))]
        for p in options:
            low = (p & -p).bit_length() - 1
            high = p.bit_length() - 1
            if high - low + 1 <= MAX_RUN and (((1 << (high + 1)) - (1 << low)) & ~mask).bit_count() <= 1:
                return True
    return False


def _joker_meld_after_discard(cards: list[int], twice: list[int], held: tuple, ace_high: bool) -> bool:
    """Whether some discard leaves the natural cards ``cards`` (per suit, a rank mask; ``twice``:
    those held twice; ``held``: per suit, the ranks held) fitting one meld with one joker: two of
    one rank in two suits (a set of three), or one suit's cards at distinct positions of a run
    whose other positions are held, but for the joker's. A necessary condition only."""
    counts = [cards[s].bit_count() + twice[s].bit_count() for s in range(NUM_SUITS)]
    count = counts[0] + counts[1] + counts[2] + counts[3]
    if count <= 2:
        return True  # the discard leaves at most one
    suits = [s for s in range(NUM_SUITS) if counts[s]]
    if count == 3:
        # discard one of the three, and the other two make a set with the joker: one rank, two suits
        for i, s in enumerate(suits):
            for t in suits[i + 1:]:
                if cards[s] & cards[t]:
                    return True
    if len(suits) > 2:
        return False  # three cards or more stay, in two suits or more
    spare = True
    if len(suits) == 2:  # one suit's only card is the discard
        a, b = suits
        if counts[a] == 1:
            main = b
        elif counts[b] == 1:
            main = a
        else:
            return False
        spare = False
    else:
        main = suits[0]
    doubled = twice[main]
    if doubled:
        if not spare or doubled & (doubled - 1):
            return False  # a run holds each card once
        spare = False  # the discard is one copy of the card held twice
    return _run_window(cards[main], held[main], ace_high, spare)


def _declarable(g: _Game, b: bytes, size: int) -> bool:
    """``can_declare`` on checked bytes holding ``size`` cards."""
    summary = g.summary
    sums = [summary(b[0:13]), summary(b[13:26]), summary(b[26:39]), summary(b[39:52])]
    if not (sums[0][1] or sums[1][1] or sums[2][1] or sums[3][1]):
        return False  # I5: no pure run
    jokers = _jokers(g, b)
    lost, need = _lost_cards(g, sums, jokers)
    if (lost[0] or lost[1] or lost[2] or lost[3]) if jokers < 2 else need > jokers:
        return False
    return g.solve(b[:NUM_NATURAL], b[JOKER], DECLARE, size > 16, INF, sums)


def can_declare(counts: Sequence[int], wild_rank: int | None = None) -> bool:
    """Whether the cards can all be arranged into melds with two runs, one of them pure (I5)."""
    g = _GAMES.get(("indian", wild_rank)) or _game("indian", wild_rank)
    b = _bytes(counts)
    return _declarable(g, b, sum(b))


_HELD_OR_BAD = bytes.maketrans(bytes(range(256)), b"011" + b"x" * 253)
"""Byte translation of a count: "0" for none, "1" for one or two, "x" (not a binary digit) above."""
_RUN_STARTS = sum(1 << (s * NUM_RANKS + r) for s in range(NUM_SUITS) for r in range(NUM_RANKS - 2))
"""Bits of the natural cards (``suit * 13 + rank``) that can start a run of three within the suit."""
_QUEENS = sum(1 << (s * NUM_RANKS + 11) for s in range(NUM_SUITS))
_ACES = sum(1 << (s * NUM_RANKS) for s in range(NUM_SUITS))


def declare_discards(counts: Sequence[int], wild_rank: int | None = None) -> list[int]:
    """The cards whose discard leaves a hand that can declare (I5), sorted.

    Quick tests on the whole hand first: a discard removes one card, so it can cure at most one
    card that cannot meld, and at most one suit's claim on two jokers.
    """
    g = _GAMES.get(("indian", wild_rank)) or _game("indian", wild_rank)
    try:  # ``_bytes``, with its checks, past the common case of a list of 53 small counts
        b = bytes(counts) if type(counts) is list and len(counts) == NUM_TYPES else _bytes(counts)
    except (TypeError, ValueError):
        b = _bytes(counts)
    backwards = b[51::-1]  # the natural cards, the last first: digits of a binary mask
    try:
        held = int(backwards.translate(_HELD_OR_BAD), 2)  # bit c: card type c is held
    except ValueError:  # a count above 2 became a digit int() refuses
        raise ValueError("a natural card is held at most twice (two decks)") from None
    if not (held & held >> 1 & held >> 2 & _RUN_STARTS or held & held >> 1 & _QUEENS & (held & _ACES) << 11):
        return []  # I5: no pure run (three in a row of one suit, or Q K A)
    # The quick tests read each suit's rank mask (as the suit summaries have them).
    m0, m1, m2, m3 = held & 0x1FFF, held >> 13 & 0x1FFF, held >> 26 & 0x1FFF, held >> 39
    facts = mask_facts(g.rules.ace_high)
    f0, f1, f2, f3 = facts[m0], facts[m1], facts[m2], facts[m3]
    jokers = _jokers(g, b)
    wild_bit = g.rules.wild_bit
    candidates: Sequence[int] = range(NUM_TYPES)
    in_set = (m0 & m1 & (m2 | m3)) | (m2 & m3 & (m0 | m1))  # ranks held in three suits or four
    if jokers < 2:
        # the cards that cannot meld at all (``_lost_cards``); a discard removes at most one
        keep = ~wild_bit
        if jokers == 0:
            keep &= ~in_set
            l0, l1, l2, l3 = m0 & ~f0[2] & keep, m1 & ~f1[2] & keep, m2 & ~f2[2] & keep, m3 & ~f3[2] & keep
        else:
            l0 = f0[3] & ~(m1 | m2 | m3) & keep
            l1 = f1[3] & ~(m0 | m2 | m3) & keep
            l2 = f2[3] & ~(m0 | m1 | m3) & keep
            l3 = f3[3] & ~(m0 | m1 | m2) & keep
        lost = (l0, l1, l2, l3)
        dead_count = l0.bit_count() + l1.bit_count() + l2.bit_count() + l3.bit_count()
        if dead_count > 1:
            return []
        if dead_count:
            suit = 0 if l0 else 1 if l1 else 2 if l2 else 3
            card = suit * NUM_RANKS + lost[suit].bit_length() - 1
            if b[card] > 1:
                return []
            candidates = (card,)
    if jokers >= 2:
        # cards with no other card of their suit within two ranks and no other suit of their rank
        # each need a meld holding two jokers (``_lost_cards``)
        doubles = int(backwards.translate(_TWICE_DIGITS), 2)
        keep = ~wild_bit
        lost = (f0[3] & ~(m1 | m2 | m3) & keep, f1[3] & ~(m0 | m2 | m3) & keep,
                f2[3] & ~(m0 | m1 | m3) & keep, f3[3] & ~(m0 | m1 | m2) & keep)
        need = 0
        for suit, mask in enumerate(lost):
            if mask:
                need += 4 if mask & doubles >> (suit * NUM_RANKS) else 2
        if need > jokers:
            if need - 2 > jokers:
                return []
            candidates = [s * NUM_RANKS + r for s in range(NUM_SUITS) for r in range(NUM_RANKS) if lost[s] >> r & 1]
    if jokers == 1:
        # With one joker, every card that is in no jokerless meld (no natural run through it,
        # its rank in fewer than three suits) must sit in the one meld holding the joker, or
        # be the discard.
        doubles = int(backwards.translate(_TWICE_DIGITS), 2)
        keep = ~in_set & ~wild_bit
        alone = [m0 & ~f0[2] & keep, m1 & ~f1[2] & keep, m2 & ~f2[2] & keep, m3 & ~f3[2] & keep]
        twice = [alone[s] & doubles >> (s * NUM_RANKS) for s in range(NUM_SUITS)]
        if not _joker_meld_after_discard(alone, twice, (m0, m1, m2, m3), g.rules.ace_high):
            return []
    if _compiled is not None:
        return _compiled_declare_discards(b, wild_rank, candidates)
    # If a discard declares, the cards have an arrangement with both lives that leaves at most
    # one natural card out (the discard). With 14 cards the converse holds too: a natural card
    # left out is the discard, so is a leftover joker (the 13 kept cards can take the others
    # into the second life), and with nothing left over some meld has four cards or more and can
    # spare an end card. One search, counting cards instead of points, settles most hands.
    unit = _GAMES.get(("count", wild_rank)) or _game("count", wild_rank)
    if unit.solve(b[:NUM_NATURAL], b[JOKER], LIVES, limit=2) > 1:
        return []
    size = sum(b) - 1
    hand = bytearray(b)
    out = []
    for d in candidates:
        if hand[d]:
            hand[d] -= 1
            if _declarable(g, bytes(hand), size):
                out.append(d)
            hand[d] += 1
    return out


def _compiled_declare_discards(b: bytes, wild_rank: int | None, candidates: Sequence[int]) -> list[int]:
    """``declare_discards`` past its quick tests, compiled: a discard declares exactly when the 13
    cards it leaves pay no I7 penalty. (Penalty 0 means both lives and nothing outside melds but
    jokers, which are worth 0; a leftover joker joins the second-life run, as in the Python search.)
    Every candidate's hand is solved in one call."""
    held = [d for d in candidates if b[d]]
    if not held:
        return []
    hands = _np.tile(_np.frombuffer(b, _np.uint8).astype(_np.int64), (len(held), 1))
    hands[_np.arange(len(held)), held] -= 1
    return [d for d, paid in zip(held, hand_penalties("indian", hands, wild_rank).tolist()) if paid == 0]


def best_arrangement(counts: Sequence[int], game: str, wild_rank: int | None = None, lives: bool = True) -> Arrangement:
    """The arrangement with the lowest penalty (I7 for Indian; deadwood value for Basic and römi).

    Indian without both lives pays for every card: the arrangement is then all deadwood. With
    ``lives=False`` an Indian hand gets its least-deadwood arrangement whatever its runs (the
    ``min_deadwood`` value), e.g. to show the melds a hand holds.
    """
    g = _GAMES.get((game, wild_rank)) or _game(game, wild_rank)
    b = _bytes(counts)
    if g.rules.cap == 0 and b[JOKER]:
        raise ValueError(f"{game!r} has no jokers")
    values = g.rules.values
    mode = LIVES if g.rules.lives and lives else FREE
    if _compiled is not None:
        fast = _compiled_arrangement(b, game, wild_rank, mode, values)
        if fast is not None:
            return fast
    total = sum(values[c] * n for c, n in enumerate(b))
    got = g.arrange(b[:NUM_NATURAL], b[JOKER], mode)
    if got is None:
        return Arrangement(total, (), tuple(c for c in range(NUM_TYPES) for _ in range(b[c])))
    dw, sets, entries = got
    pool = [JOKER] * b[JOKER]
    left = list(b)
    for s, entry in enumerate(entries):
        for pos, k in entry[3]:
            if pos is None:  # wild cards of this suit played as jokers
                t = s * NUM_RANKS + g.rules.wild
                left[t] -= k
                pool.extend([t] * k)
    left[JOKER] = 0
    melds = []
    for r, m, jk in sets:
        cards = [s * NUM_RANKS + r for s in MASK_SUITS[m]]
        for c in cards:
            left[c] -= 1
        melds.append(tuple(cards) + tuple(pool.pop() for _ in range(jk)))
    for s, entry in enumerate(entries):
        for pos, jk in entry[3]:
            if pos is not None:
                melds.append(_lay_run(s, pos, jk, pool, left))
    for c in pool:
        left[c] += 1
    deadwood = tuple(c for c in range(NUM_TYPES) for _ in range(left[c]))
    penalty = sum(values[c] for c in deadwood)
    if penalty != dw:
        raise AssertionError(f"solver bookkeeping: deadwood {penalty} != {dw}")
    return Arrangement(penalty, tuple(melds), deadwood)


def _compiled_arrangement(b: bytes, game: str, wild_rank: int | None, mode: int, values: tuple) -> Arrangement | None:
    """``best_arrangement`` by the compiled search (None if the hand does not fit its scratch arrays)."""
    fast = _compiled
    nat = _natural_checked(b)
    best, count, melds, lengths, left = fast.laid_out(nat, fast.rules(game, wild_rank), mode)
    if best < 0:
        return None
    if count < 0:
        total = sum(values[c] * n for c, n in enumerate(b))
        return Arrangement(total, (), tuple(_np.repeat(_CARD_TYPES, nat).tolist()))
    laid = tuple(tuple(row[:n]) for row, n in zip(melds[:count].tolist(), lengths[:count].tolist()))
    deadwood = tuple(_np.repeat(_CARD_TYPES, left).tolist())
    penalty = sum([values[c] for c in deadwood])
    if penalty != best:
        raise AssertionError(f"compiled solver bookkeeping: deadwood {penalty} != {best}")
    return Arrangement(penalty, laid, deadwood)


def _lay_run(suit: int, pos: tuple, jokers: int, pool: list, left: list) -> tuple[int, ...]:
    """Physical cards of a run, low to high: naturals at ``pos``, jokers in the gaps, then padding."""
    lo, hi = min(pos), max(pos)
    cards = []
    for p in range(lo, hi + 1):
        if p in pos:
            c = suit * NUM_RANKS + p % NUM_RANKS
            left[c] -= 1
            cards.append(c)
        else:
            cards.append(pool.pop())
    pad = jokers - (hi - lo + 1 - len(pos))
    room_above = 13 - hi
    above = [pool.pop() for _ in range(min(pad, room_above))]
    below = [pool.pop() for _ in range(pad - len(above))]
    return tuple(below + cards + above)


if os.environ.get("RUMMY_COMPILED", "1").strip() not in ("0", "false", "False", "no", ""):
    use_compiled(True)
