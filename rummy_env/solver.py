"""The exact meld solver: best arrangement, lowest penalty, declarations (RULES G3–G5, I2, I3, I5, I7, B2, B5, R3, R7).

A hand is a count array over the 53 card types (``rummy_env.cards``). Every function here is exact:
``tests/test_solver.py`` checks it against a brute force built on ``melds.is_meld_cards``.

How the search is cut down, and why each cut is exact:

* **Suits are independent once the sets are chosen.** A hand is solved by enumerating the ways to
  take *sets* out of it (only ranks where a set is possible), then solving each suit's *runs*
  alone, and adding the four suits up under the joker budget and the lives rule (I7).
* **A suit's answer is a small table** (its *profile*): for each (lives class, jokers used) the
  least deadwood. It depends only on that suit's 13 counts and the joker budget, so it is
  memoised across hands (the cache is bounded; it only stores what a pure function returns).
* **Jokers are placed as few as needed.** A run of ``n`` naturals spanning ``s`` positions takes
  ``max(3, s) - n`` jokers, a set ``3 - n``; extra jokers never make a meld valid that was not,
  and only make a run impure. Declaring needs every joker inside a meld, but a leftover joker
  can always join the second-life run when the hand has at most 16 cards (the run stays at most
  13 long); larger hands try every number of extra jokers per meld.
* **A set with one natural is never needed:** the same cards form a run, which also counts as
  a life. A suit never needs more than two jokers per natural card.
* **Wild cards (I2)** are jokers unless one is tried as its natural self, which can only matter
  in a pure run (it needs two natural neighbours in its suit) or in a meld of joker-capable
  cards only (it needs three of them in the hand); only those choices are enumerated.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

from .cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_SUITS, NUM_TYPES, card_values
from .melds import MELD_RULES

GAMES = ("indian", "basic", "romi")
INF = 1 << 30
"""The penalty search's "impossible" (no arrangement with both lives)."""

_CACHE_LIMIT = 1 << 17
"""Memoised suit profiles and summaries kept per game before the cache is cleared."""


class Arrangement(NamedTuple):
    """A partition of a hand: melds (physical card types, runs low to high) and deadwood."""

    penalty: int
    melds: tuple[tuple[int, ...], ...]
    deadwood: tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# Lives classes (I5, I7): what an arrangement's runs give, as (has a pure run, runs counted up to 2).

_CLASSES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2))
C_NONE, C_RUN, C_TWO_RUNS, C_PURE, C_LIVES = range(5)
_CLASS_ADD = tuple(
    tuple(_CLASSES.index((min(1, a[0] + b[0]), min(2, a[1] + b[1]))) for b in _CLASSES) for a in _CLASSES
)
_CLASS_GE = tuple(tuple(a[0] >= b[0] and a[1] >= b[1] for b in _CLASSES) for a in _CLASSES)
_CLASS_ORDER = tuple(-(p + r) for p, r in _CLASSES)

# Suit masks with at least two suits: the sets a rank can hold (a one-natural set is a run).
_SET_MASKS = tuple(m for m in range(1 << NUM_SUITS) if bin(m).count("1") >= 2)
_MASK_SUITS = tuple(tuple(s for s in range(NUM_SUITS) if m >> s & 1) for m in range(1 << NUM_SUITS))


def _pareto(entries: list) -> tuple:
    """Entries (class, jokers, deadwood, …) that no other entry beats on all three."""
    entries.sort(key=lambda e: (e[2], e[1], _CLASS_ORDER[e[0]]))
    kept: list = []
    for e in entries:
        c, u = e[0], e[1]
        for f in kept:
            if f[1] <= u and _CLASS_GE[f[0]][c]:
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
        length = span if span > 3 else 3
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


class _Game:
    """One game's rules and values (with a wild rank for Indian), and its memo tables."""

    def __init__(self, game: str, wild_rank: int | None) -> None:
        rules = MELD_RULES[game]
        self.game = game
        self.wild = wild_rank
        self.ace_high = rules.ace_high
        self.cap = rules.max_jokers
        self.lives = game == "indian"
        values = list(card_values(game))
        if wild_rank is not None:
            for s in range(NUM_SUITS):
                values[s * NUM_RANKS + wild_rank] = 0  # I7: wild jokers pay 0
        self.values = tuple(values)
        self.rank_values = tuple(values[:NUM_RANKS])
        self.profiles: dict = {}
        self.summaries: dict = {}
        self.set_memo: dict = {}

    # -- one suit ------------------------------------------------------------------------------

    def summary(self, key: bytes) -> tuple:
        """(value, has a pure run, two disjoint pure runs, rank mask, cards) of one suit's 13 counts."""
        got = self.summaries.get(key)
        if got is not None:
            return got
        st = list(key)
        value = sum(v * n for v, n in zip(self.rank_values, st))
        mask = sum(1 << r for r in range(NUM_RANKS) if st[r])
        top = 14 if self.ace_high else 13
        starts = [a for a in range(top - 2) if all(st[p % NUM_RANKS] for p in range(a, a + 3))]
        two = False
        for i, a in enumerate(starts):
            for b in starts[i:]:
                need = [0] * NUM_RANKS
                for p in itertools.chain(range(a, a + 3), range(b, b + 3)):
                    need[p % NUM_RANKS] += 1
                if all(n <= st[p] for p, n in enumerate(need)):
                    two = True
        got = (value, bool(starts), two, mask, sum(st))
        if len(self.summaries) >= _CACHE_LIMIT:
            self.summaries.clear()
        self.summaries[key] = got
        return got

    def profile(self, key: bytes, budget: int, extras: bool) -> tuple:
        """Pareto table of (class, jokers used, deadwood, runs) for one suit's counts ``key``."""
        ck = (key, budget, extras)
        got = self.profiles.get(ck)
        if got is None:
            got = self._suit_search(tuple(key), budget, extras)
            if len(self.profiles) >= _CACHE_LIMIT:
                self.profiles.clear()
            self.profiles[ck] = got
        return got

    def _suit_search(self, start: tuple, budget: int, extras: bool) -> tuple:
        vals = self.rank_values
        lives = self.lives
        ace_high = self.ace_high
        jmax = budget if self.cap is None else min(budget, self.cap)
        memo: dict = {}

        def solve(st: tuple) -> tuple:
            got = memo.get(st)
            if got is not None:
                return got
            r = next((i for i, n in enumerate(st) if n), -1)
            if r < 0:
                got = ((C_NONE, 0, 0, ()),)
            else:
                rest = list(st)
                rest[r] -= 1
                v = vals[r]
                out = [(c, u, d + v, runs) for c, u, d, runs in solve(tuple(rest))]
                for pos, g in _run_candidates(st, r, jmax, ace_high, extras):
                    rest = list(st)
                    for p in pos:
                        rest[p % NUM_RANKS] -= 1
                    rc = (C_PURE if g == 0 else C_RUN) if lives else C_NONE
                    run = ((pos, g),)
                    for c, u, d, runs in solve(tuple(rest)):
                        if u + g <= budget:
                            out.append((_CLASS_ADD[c][rc], u + g, d, runs + run))
                got = _pareto(out)
            memo[st] = got
            return got

        return solve(start)

    # -- the whole hand ------------------------------------------------------------------------

    def rank_sets(self, cnt: tuple, jokers: int, extras: bool) -> tuple:
        """Ways to take sets out of one rank's suit counts ``cnt``: (jokers, ((mask, jokers), …)) pairs."""
        ck = (cnt, jokers, extras)
        got = self.set_memo.get(ck)
        if got is not None:
            return got
        out: list = []
        cap = self.cap

        def rec(start: int, cnt: list[int], used: int, sets: tuple) -> None:
            if sets:
                out.append((used, sets))
            for i in range(start, len(_SET_MASKS)):
                m = _SET_MASKS[i]
                suits = _MASK_SUITS[m]
                if any(cnt[s] == 0 for s in suits):
                    continue
                base = max(0, 3 - len(suits))
                top = 4 - len(suits) if extras else base
                for g in range(base, top + 1):
                    if used + g > jokers or (cap is not None and g > cap):
                        break
                    nxt = cnt[:]
                    for s in suits:
                        nxt[s] -= 1
                    rec(i, nxt, used + g, sets + ((m, g),))

        rec(0, list(cnt), 0, ())
        got = self.set_memo[ck] = tuple(out)
        return got

    def solve(self, nat: bytes, jokers: int, mode: int, extras: bool = False, trace: bool = False):
        """Best over all ways to take sets out: least deadwood (``FREE``, ``LIVES``) or whether
        everything melds (``DECLARE``). With ``trace``: (deadwood, sets, suit entries, jokers) or None.
        """
        keys = [nat[0:13], nat[13:26], nat[26:39], nat[39:52]]
        summary = self.summary
        sums = [summary(k) for k in keys]
        a, b, c, d = (x[3] for x in sums)
        if jokers and self.cap != 0:
            cand = (a & (b | c | d)) | (b & (c | d)) | (c & d)
        else:
            cand = (a & b & (c | d)) | (c & d & (a | b))
        profile = self.profile
        if extras:
            profs = [profile(k, jokers, True) for k in keys]
        else:
            profs = [profile(k, min(jokers, 2 * x[4]), False) for k, x in zip(keys, sums)]
        got = _combine(profs, jokers, mode, extras, trace)
        if not cand:
            if trace:
                return None if got is None else (got[0], (), got[1], got[2])
            return got
        if trace:
            best = INF if got is None else got[0]
            best_trace = None if got is None else (got[0], (), got[1], got[2])
        else:
            if mode == DECLARE and got:
                return True
            best = got
        # Sets: every choice of sets over the ranks that can hold one, within the joker budget.
        per_rank = []
        r = 0
        while cand:
            if cand & 1:
                cnt = (nat[r], nat[13 + r], nat[26 + r], nat[39 + r])
                per_rank.append([(r, u, sets) for u, sets in self.rank_sets(cnt, jokers, extras)])
            cand >>= 1
            r += 1
        choices: list = [((), 0)]
        for options in per_rank:
            choices += [(ch + (opt,), used + opt[1]) for ch, used in choices for opt in options if used + opt[1] <= jokers]
        for choice, used in choices[1:]:
            budget = jokers - used
            taken = [None, None, None, None]
            for r, _, sets in choice:
                for m, _g in sets:
                    for s in _MASK_SUITS[m]:
                        t = taken[s]
                        if t is None:
                            t = taken[s] = bytearray(keys[s])
                        t[r] -= 1
            profs = []
            low = 0
            for s in range(NUM_SUITS):
                k = keys[s] if taken[s] is None else bytes(taken[s])
                if extras:
                    p = profile(k, budget, True)
                else:
                    p = profile(k, min(budget, 2 * sum(k)), False)
                low += p[0][2]
                profs.append(p)
            if low >= best:
                continue
            got = _combine(profs, budget, mode, extras, trace)
            if trace:
                if got is not None and got[0] < best:
                    best = got[0]
                    sets_taken = tuple((r, m, g) for r, _, sets in choice for m, g in sets)
                    best_trace = (got[0], sets_taken, got[1], used + got[2])
            elif mode == DECLARE:
                if got:
                    return True
            elif got < best:
                best = got
        if trace:
            return best_trace
        return False if mode == DECLARE else best


FREE, LIVES, DECLARE = range(3)


def _combine(profs: list, budget: int, mode: int, extras: bool, trace: bool):
    """Add four suit profiles under the joker budget.

    ``FREE``: least deadwood. ``LIVES``: least deadwood with both lives (INF if none).
    ``DECLARE``: whether nothing is left over (with ``extras``, every joker used).
    With ``trace``: (deadwood, chosen entries, jokers used) or None.
    """
    if mode == DECLARE:
        for p in profs:
            if p[0][2]:
                return None if trace else False
        profs = [[e for e in p if not e[2]] for p in profs]
    const = 0
    states = [(C_NONE, 0, 0, ())]
    for prof in profs:
        if len(prof) == 1 and not trace:
            c2, u2, d2 = prof[0][:3]
            if c2 == C_NONE and u2 == 0:
                const += d2
                continue
        nxt = []
        for c1, u1, d1, t1 in states:
            for e in prof:
                u = u1 + e[1]
                if u <= budget:
                    nxt.append((_CLASS_ADD[c1][e[0]] if mode != FREE else C_NONE, u, d1 + e[2], t1 + (e,) if trace else ()))
        states = _pareto(nxt) if len(nxt) > 1 else nxt
    best = None
    for c, u, d, t in states:
        if mode != FREE and c != C_LIVES:
            continue
        if mode == DECLARE and extras and u != budget:
            continue
        if best is None or d < best[0]:
            best = (d, t, u)
    if trace:
        return best
    if mode == DECLARE:
        return best is not None
    return INF if best is None else best[0] + const


_GAMES: dict = {}


def _game(game: str, wild_rank: int | None) -> _Game:
    try:
        return _GAMES[(game, wild_rank)]
    except KeyError:
        pass
    if game not in MELD_RULES or game not in GAMES:
        raise ValueError(f"unknown game {game!r}: expected 'indian', 'basic' or 'romi'")
    if wild_rank is not None and (game != "indian" or not 0 <= wild_rank < NUM_RANKS):
        raise ValueError(f"wild_rank {wild_rank!r}: only Indian has a wild rank, 0..12")
    g = _GAMES[(game, wild_rank)] = _Game(game, wild_rank)
    return g


def _bytes(counts: Sequence[int]) -> bytes:
    try:
        b = bytes(counts)
    except (TypeError, ValueError):
        raise ValueError("counts must be 53 counts in 0..255") from None
    if len(b) != NUM_TYPES:
        raise ValueError(f"counts must have {NUM_TYPES} entries, not {len(b)}")
    return b


# ---------------------------------------------------------------------------------------------
# Wild cards (I2): which of them to try as natural cards.


def _wild_choices(g: _Game, b: bytes) -> list[tuple[bytes, int, tuple]]:
    """(naturals, jokers, wild types used as jokers) for each way worth trying."""
    nat = b[:NUM_NATURAL]
    printed = b[JOKER]
    w = g.wild
    if w is None:
        return [(nat, printed, ())]
    types = [s * NUM_RANKS + w for s in range(NUM_SUITS) if nat[s * NUM_RANKS + w]]
    capable = printed + sum(nat[t] for t in types)
    options = []
    for t in types:
        base = t - w
        plausible = capable >= 3
        if not plausible:
            for lo in range(w - 2, w + 1):
                window = [p for p in range(lo, lo + 3) if p != w]
                if lo >= 0 and lo + 2 <= 13 and all(nat[base + p % NUM_RANKS] and p % NUM_RANKS != w for p in window):
                    plausible = True
            if w == 0 and nat[base + 11] and nat[base + 12]:
                plausible = True
        options.append(range(nat[t] + 1) if plausible else (0,))
    out = []
    for naturals in itertools.product(*options):
        n = bytearray(nat)
        as_jokers = []
        for t, k in zip(types, naturals):
            as_jokers.extend([t] * (nat[t] - k))
            n[t] = k
        out.append((bytes(n), printed + len(as_jokers), tuple(as_jokers)))
    return out


# ---------------------------------------------------------------------------------------------
# Public API


def indian_penalty(counts: Sequence[int], wild_rank: int | None = None) -> int:
    """What an Indian hand pays (I7): its deadwood if it has both lives, else all its cards."""
    g = _GAMES.get(("indian", wild_rank)) or _game("indian", wild_rank)
    b = _bytes(counts)
    summary = g.summary
    s0 = summary(b[0:13])
    s1 = summary(b[13:26])
    s2 = summary(b[26:39])
    s3 = summary(b[39:52])
    total = s0[0] + s1[0] + s2[0] + s3[0]
    pure = s0[1] + s1[1] + s2[1] + s3[1]
    if not pure:
        return total  # I5: no pure run, no lives
    if pure < 2 and not b[JOKER] and wild_rank is None and not (s0[2] or s1[2] or s2[2] or s3[2]):
        return total  # no joker and only one pure run: no second life
    best = INF
    for nat, jokers, _ in _wild_choices(g, b):
        got = g.solve(nat, jokers, LIVES)
        if got < best:
            best = got
    return best if best < total else total


def min_deadwood(counts: Sequence[int], game: str, wild_rank: int | None = None) -> int:
    """Least value left outside melds (B5, R7 scoring; for Indian, without the lives rule)."""
    g = _GAMES.get((game, wild_rank)) or _game(game, wild_rank)
    b = _bytes(counts)
    if g.cap == 0 and b[JOKER]:
        raise ValueError(f"{game!r} has no jokers")
    best = INF
    for nat, jokers, _ in _wild_choices(g, b):
        got = g.solve(nat, jokers, FREE)
        if got < best:
            best = got
    return best


def can_declare(counts: Sequence[int], wild_rank: int | None = None) -> bool:
    """Whether the cards can all be arranged into melds with two runs, one of them pure (I5)."""
    g = _GAMES.get(("indian", wild_rank)) or _game("indian", wild_rank)
    b = _bytes(counts)
    summary = g.summary
    s0 = summary(b[0:13])
    s1 = summary(b[13:26])
    s2 = summary(b[26:39])
    s3 = summary(b[39:52])
    if not (s0[1] or s1[1] or s2[1] or s3[1]):
        return False
    extras = sum(b) > 16
    for nat, jokers, _ in _wild_choices(g, b):
        if g.solve(nat, jokers, DECLARE, extras):
            return True
    return False


def declare_discards(counts: Sequence[int], wild_rank: int | None = None) -> list[int]:
    """The cards whose discard leaves a hand that can declare (I5), sorted."""
    b = _bytes(counts)
    g = _GAMES.get(("indian", wild_rank)) or _game("indian", wild_rank)
    summary = g.summary
    if not (summary(b[0:13])[1] or summary(b[13:26])[1] or summary(b[26:39])[1] or summary(b[39:52])[1]):
        return []
    hand = list(b)
    out = []
    for d in range(NUM_TYPES):
        if hand[d]:
            hand[d] -= 1
            if can_declare(hand, wild_rank):
                out.append(d)
            hand[d] += 1
    return out


def best_arrangement(counts: Sequence[int], game: str, wild_rank: int | None = None) -> Arrangement:
    """The arrangement with the lowest penalty (I7 for Indian; deadwood value for Basic and römi)."""
    g = _GAMES.get((game, wild_rank)) or _game(game, wild_rank)
    b = _bytes(counts)
    if g.cap == 0 and b[JOKER]:
        raise ValueError(f"{game!r} has no jokers")
    values = g.values
    total = sum(values[c] * n for c, n in enumerate(b))
    mode = LIVES if g.lives else FREE
    best = None
    for nat, jokers, as_jokers in _wild_choices(g, b):
        got = g.solve(nat, jokers, mode, trace=True)
        if got is not None and (best is None or got[0] < best[0][0]):
            best = (got, nat, as_jokers)
    if best is None or best[0][0] > total:
        return Arrangement(total, (), tuple(c for c in range(NUM_TYPES) for _ in range(b[c])))
    (dw, sets, entries, _), nat, as_jokers = best
    pool = [JOKER] * b[JOKER] + list(as_jokers)
    left = list(nat) + [0]
    melds = []
    for r, m, jk in sets:
        cards = [s * NUM_RANKS + r for s in _MASK_SUITS[m]]
        for c in cards:
            left[c] -= 1
        melds.append(tuple(cards) + tuple(pool.pop() for _ in range(jk)))
    for s, entry in enumerate(entries):
        for pos, jk in entry[3]:
            melds.append(_lay_run(s, pos, jk, pool, left))
    for c in pool:
        left[c] += 1
    deadwood = tuple(c for c in range(NUM_TYPES) for _ in range(left[c]))
    penalty = sum(values[c] for c in deadwood)
    assert penalty == dw, (penalty, dw)
    return Arrangement(penalty, tuple(melds), deadwood)


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
