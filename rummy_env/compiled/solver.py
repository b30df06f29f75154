"""The exact meld solver's hot paths, compiled with numba: the same search as ``rummy_env.solver``.

``rummy_env.solver`` is the reference; this module runs its search step for step (the same
candidates in the same order, the same stable Pareto sort, the same first-found tie-breaks), so
that it returns the same *arrangement* as the reference, not only the same penalty:
``tests/test_compiled_solver.py`` checks both in lockstep on random, structured and Hypothesis
hands of every game and wild rank. Covered: the free search (least deadwood: ``min_deadwood``,
``best_arrangement``, and ``min_loose_cards``, the römi going-out bound of R4, under the
``"count"`` rules), the lives search (Indian penalty, I5, I7), and whole hands with their quick
answers, one (``value``) or a batch (``values``, behind ``solver.hand_penalties``). ``solver.declare_discards``
runs its quick tests in Python and then solves, in one ``values`` call, the hand each candidate
discard leaves (it declares exactly when that hand pays nothing); ``can_declare`` stays in Python.

How the search is laid out without Python objects:

* a suit's profile entries (lives class, jokers used, deadwood, runs) live in one entry arena,
  a profile being a (start, length) range of it, stored as ``start << 16 | length``;
* the runs an entry holds are a linked list in a trace arena (parent, positions as a 14-bit mask,
  jokers); a node with positions -1 marks wild cards played as jokers (I2);
* memo tables (open addressing in int64 arrays) map (cards, joker budget, rule set) to a
  profile, as the reference's caches do; suits holding no wild-rank card share the plain rules'
  entries, as the reference's do; the tables and the arenas persist across calls and are cleared
  when the arenas are three quarters full or a table half full;
* the reference's recursion over a suit's cards is an explicit stack.

Why it is fast: a hand costs one call from Python, with three arrays (the hand, its rule set's
tables as one bank, the workspace as one buffer) cut into views inside; the views carry no
reference counts (``_carve``); nothing is allocated per hand; and the hot loop over the ways to
take sets out reads the profile memo itself rather than calling with a dozen arrays.

A call that would overflow a scratch array reports it (-2); the caller clears the memo and
retries, and falls back to the reference if it still does not fit (very large hands only).
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

from ..cards import JOKER
from ..solver_tables import CLASS_ADD, CLASS_GE, CLASS_SUM, EVEN_BITS, FREE, INF, LIVES, RuleTables, rule_tables

OVERFLOW = -2

# params: the game's rules as small ints
P_CAP, P_ACE, P_LIVES, P_WILD, P_WILD_BIT, P_KEY, P_PLAIN_KEY = range(7)
"""``params`` indices: joker cap per meld (-1: any), ace high, lives classes, wild rank (-1: none),
its bit, and the memo key base (the rules' id above bit 40: one memo serves every rule set), and
that of the same rules without a wild rank (``_memo_key``)."""
NO_NODE = -2  # a scratch entry that adds no run to its parent's trace
MARK = -1  # trace positions of a "wild cards played as jokers" node


@njit(cache=True)
def _bit_length(x):
    n = 0
    while x:
        x >>= 1
        n += 1
    return n


@njit(cache=True)
def _popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True)
def _room(budget, cards):
    """``solver._room``: the budget a suit's profile is built for."""
    if budget > 2:
        budget = 1 << _bit_length(budget - 1)
    return min(budget, 2 * cards)


@njit(cache=True)
def _cards(packed):
    n = 0
    for r in range(13):
        n += (packed >> 2 * r) & 3
    return n


@njit(cache=True)
def _dead_ranks(packed, ace_high, jokers_spare):
    """``summary`` x[5] (with a joker to spare) or x[7] (none): ranks no run can hold."""
    mask = 0
    for r in range(13):
        if (packed >> 2 * r) & 3:
            mask |= 1 << r
    m = mask | ((mask & 1) << 13) if ace_high else mask
    if jokers_spare:
        alone = m & ~((m << 1) | (m << 2) | (m >> 1) | (m >> 2))
        if ace_high:
            return (alone & 0x1FFE) | (alone & (alone >> 13) & 1)
        return (alone & 0x1FFE) | (alone & 1)
    starts = m & (m >> 1) & (m >> 2)
    cover = starts | (starts << 1) | (starts << 2)
    in_run = (cover | (cover >> 13)) & 0x1FFF
    return mask & ~in_run


@njit(cache=True)
def _run_cands(present, r, jmax, ace_high, cpos, cg, stk):
    """``solver._run_candidates`` (without extras), positions as a 14-bit mask, in the same order.

    ``present``: two bits a rank, the low one set where the suit holds the rank. Returns the
    count written to ``cpos``/``cg``, or OVERFLOW.
    """
    n = 0
    cap = cpos.shape[0]
    scap = stk.shape[0]
    if 2 <= jmax:  # emit((r,), 1): three long, two jokers
        cpos[n] = 1 << r
        cg[n] = 2
        n += 1
    stk[0, 0] = r
    stk[0, 1] = 1 << r
    stk[0, 2] = 0
    stk[0, 3] = 1
    sp = 1
    while sp > 0:
        sp -= 1
        last = stk[sp, 0]
        pos = stk[sp, 1]
        gaps = stk[sp, 2]
        k = stk[sp, 3]
        for q in range(last + 1, 13):
            ng = gaps + q - last - 1
            if ng > jmax:
                break
            if (present >> 2 * q) & 1:
                npos = pos | (1 << q)
                span = q - r + 1
                base = (span if span > 3 else 3) - (k + 1)
                if base <= jmax:
                    if n >= cap:
                        return OVERFLOW
                    cpos[n] = npos
                    cg[n] = base
                    n += 1
                if sp >= scap:
                    return OVERFLOW
                stk[sp, 0] = q
                stk[sp, 1] = npos
                stk[sp, 2] = ng
                stk[sp, 3] = k + 1
                sp += 1
    if r == 0 and ace_high:
        stk[0, 0] = 13
        stk[0, 1] = 1 << 13
        stk[0, 2] = 0
        stk[0, 3] = 1
        sp = 1
        while sp > 0:
            sp -= 1
            last = stk[sp, 0]
            pos = stk[sp, 1]
            gaps = stk[sp, 2]
            k = stk[sp, 3]
            for q in range(last - 1, 0, -1):
                ng = gaps + last - q - 1
                if ng > jmax:
                    break
                if (present >> 2 * q) & 1:
                    npos = pos | (1 << q)
                    span = 14 - q
                    base = (span if span > 3 else 3) - (k + 1)
                    if base <= jmax:
                        if n >= cap:
                            return OVERFLOW
                        cpos[n] = npos
                        cg[n] = base
                        n += 1
                    if sp >= scap:
                        return OVERFLOW
                    stk[sp, 0] = q
                    stk[sp, 1] = npos
                    stk[sp, 2] = ng
                    stk[sp, 3] = k + 1
                    sp += 1
    return n


# Memo tables: open addressing in one int64 array, (key, value) pairs then the count of keys
# held; an empty slot's key is 0 (a fresh buffer's zeros). Keys are positive (rule-set ids start
# at 1, above bit 40), values never negative.


@njit(cache=True, inline="always")
def _slot(key, size):
    """Where ``key``'s probe starts in a table of ``size`` slots (a power of two)."""
    h = key ^ (key >> 29)
    h *= -4658895280553007687  # 0xBF58476D1CE4E5B9, a 64-bit mixing constant
    h ^= h >> 32
    return h & (size - 1)


@njit(cache=True, inline="always")
def _find(table, key):
    """The value stored under ``key``, or -1."""
    size = (table.shape[0] - 1) >> 1
    i = _slot(key, size)
    while True:
        k = table[2 * i]
        if k == key:
            return table[2 * i + 1]
        if k == 0:
            return -1
        i = (i + 1) & (size - 1)


@njit(cache=True)
def _store(table, key, value):
    """Store ``value`` under ``key``; False when the table is half full (the caller clears it)."""
    size = (table.shape[0] - 1) >> 1
    i = _slot(key, size)
    while True:
        k = table[2 * i]
        if k == key:
            table[2 * i + 1] = value
            return True
        if k == 0:
            if table[2 * size] >= size >> 1:
                return False
            table[2 * i] = key
            table[2 * i + 1] = value
            table[2 * size] += 1
            return True
        i = (i + 1) & (size - 1)


@njit(cache=True, inline="always")
def _memo_key(cards, budget, params):
    """The memo key of one suit's ``cards`` (two bits a rank) with ``budget``: cards holding no
    card of the wild rank have the same answers as without a wild rank (the reference's
    ``_Game.plain``), so they share the plain rules' key."""
    wild = params[P_WILD]
    base = params[P_KEY] if wild >= 0 and (cards >> 2 * wild) & 3 else params[P_PLAIN_KEY]
    return (cards << 7) | base | budget


@njit(cache=True)
def _removed(pos):
    """The cards a run at positions ``pos`` takes, two bits a rank (position 13 is the ace)."""
    out = 0
    for p in range(14):
        if (pos >> p) & 1:
            out += 1 << 2 * (p % 13)
    return out


@njit(cache=True)
def _store_pareto(tmp, m, keys, E, T, top, cls_ge):
    """``solver._pareto`` of the ``m`` scratch entries, written to the arena; the profile handle.

    A scratch row is (class, jokers, deadwood, parent trace, positions, jokers of the run); a new
    trace node is made for each kept row whose positions are not NO_NODE.
    """
    start = top[0]
    if m == 0:
        return start << 16
    for i in range(m):
        # key: deadwood, then jokers, then class order (the lives classes first)
        c = tmp[i, 0]
        order = 3 if c == 4 else (2 if c == 3 or c == 2 else (1 if c == 1 else 0))
        keys[i] = (tmp[i, 2] << 20) | ((tmp[i, 1] + 512) << 4) | (3 - order)
    idx = np.argsort(keys[:m], kind="mergesort")
    n = start
    for j in range(m):
        i = idx[j]
        c = tmp[i, 0]
        u = tmp[i, 1]
        beaten = False
        for k in range(start, n):
            if E[k, 1] <= u and cls_ge[E[k, 0], c] != 0:
                beaten = True
                break
        if beaten:
            continue
        if n >= E.shape[0]:
            return OVERFLOW
        t = tmp[i, 3]
        if tmp[i, 4] != NO_NODE:
            tn = top[1]
            if tn >= T.shape[0]:
                return OVERFLOW
            T[tn, 0] = t
            T[tn, 1] = tmp[i, 4]
            T[tn, 2] = tmp[i, 5]
            top[1] = tn + 1
            t = tn
        E[n, 0] = c
        E[n, 1] = u
        E[n, 2] = tmp[i, 2]
        E[n, 3] = t
        n += 1
    top[0] = n
    if n - start >= 1 << 16:
        return OVERFLOW
    return (start << 16) | (n - start)


@njit(cache=True)
def _runs(st0, budget, params, rank_values, cls_add, cls_ge, E, T, top, memo, cpos, cg, stk, dfs, tmp, keys):
    """``_Game._runs``: the profile of the cards ``st0`` (two bits a rank), wild cards in runs."""
    cap = params[P_CAP]
    jmax = budget if cap < 0 else min(budget, cap)
    ace_high = params[P_ACE] == 1
    lives = params[P_LIVES] == 1
    wild = params[P_WILD]
    dfs[0] = st0
    sp = 1
    while sp > 0:
        st = dfs[sp - 1]
        key = _memo_key(st, budget, params)
        if _find(memo, key) >= 0:
            sp -= 1
            continue
        if st == 0:
            i = top[0]
            if i >= E.shape[0]:
                return OVERFLOW
            E[i, 0] = 0
            E[i, 1] = 0
            E[i, 2] = 0
            E[i, 3] = -1
            top[0] = i + 1
            if not _store(memo, key, (i << 16) | 1):
                return OVERFLOW
            sp -= 1
            continue
        r = (_bit_length(st & -st) - 1) >> 1
        present = (st | (st >> 1)) & EVEN_BITS
        n = _run_cands(present, r, jmax, ace_high, cpos, cg, stk)
        if n < 0:
            return OVERFLOW
        missing = False
        if r != wild:
            child = st - (1 << 2 * r)
            if _find(memo, _memo_key(child, budget, params)) < 0:
                if sp >= dfs.shape[0]:
                    return OVERFLOW
                dfs[sp] = child
                sp += 1
                missing = True
        for i in range(n):
            child = st - _removed(cpos[i])
            if _find(memo, _memo_key(child, budget, params)) < 0:
                if sp >= dfs.shape[0]:
                    return OVERFLOW
                dfs[sp] = child
                sp += 1
                missing = True
        if missing:
            continue
        m = 0
        mcap = tmp.shape[0]
        if r != wild:
            h = _find(memo, _memo_key(st - (1 << 2 * r), budget, params))
            v = rank_values[r]
            for j in range(h >> 16, (h >> 16) + (h & 0xFFFF)):
                if m >= mcap:
                    return OVERFLOW
                tmp[m, 0] = E[j, 0]
                tmp[m, 1] = E[j, 1]
                tmp[m, 2] = E[j, 2] + v
                tmp[m, 3] = E[j, 3]
                tmp[m, 4] = NO_NODE
                tmp[m, 5] = 0
                m += 1
        for i in range(n):
            g = cg[i]
            rc = (3 if g == 0 else 1) if lives else 0
            room = budget - g
            h = _find(memo, _memo_key(st - _removed(cpos[i]), budget, params))
            for j in range(h >> 16, (h >> 16) + (h & 0xFFFF)):
                if E[j, 1] <= room:
                    if m >= mcap:
                        return OVERFLOW
                    tmp[m, 0] = cls_add[E[j, 0], rc]
                    tmp[m, 1] = E[j, 1] + g
                    tmp[m, 2] = E[j, 2]
                    tmp[m, 3] = E[j, 3]
                    tmp[m, 4] = cpos[i]
                    tmp[m, 5] = g
                    m += 1
        h = _store_pareto(tmp, m, keys, E, T, top, cls_ge)
        if h < 0 or not _store(memo, key, h):
            return OVERFLOW
        sp -= 1
    return _find(memo, _memo_key(st0, budget, params))


@njit(cache=True)
def _profile(packed, budget, params, rank_values, cls_add, cls_ge, E, T, top, memo, pmemo, cpos, cg, stk, dfs, tmp,
             keys):
    """``_Game.profile`` (without extras): dead cards out first, then the suit search."""
    pkey = _memo_key(packed, budget, params)
    known = _find(pmemo, pkey)
    if known >= 0:
        return known
    cap = params[P_CAP]
    ace_high = params[P_ACE] == 1
    wild = params[P_WILD]
    wild_bit = params[P_WILD_BIT]
    lost = 0
    cur = packed
    b = budget
    while True:
        jmax = b if cap < 0 else min(b, cap)
        dead = 0
        if jmax < 2:
            dead = _dead_ranks(cur, ace_high, jmax > 0) & ~wild_bit
        if not dead:
            break
        for r in range(13):
            if (dead >> r) & 1:
                lost += rank_values[r] * ((cur >> 2 * r) & 3)
                cur &= ~(3 << 2 * r)
        b = _room(b, _cards(cur))
    if wild < 0 or not (cur >> 2 * wild) & 3:
        h = _runs(cur, b, params, rank_values, cls_add, cls_ge, E, T, top, memo, cpos, cg, stk, dfs, tmp, keys)
        if h < 0:
            return OVERFLOW
    else:
        count = (cur >> 2 * wild) & 3
        handles = np.empty(count + 1, np.int64)
        for k in range(count + 1):  # k wild cards of this suit become jokers
            handles[k] = _runs(cur - (k << 2 * wild), b, params, rank_values, cls_add, cls_ge, E, T, top, memo,
                               cpos, cg, stk, dfs, tmp, keys)
            if handles[k] < 0:
                return OVERFLOW
        m = 0
        for k in range(count + 1):
            h = handles[k]
            for j in range(h >> 16, (h >> 16) + (h & 0xFFFF)):
                if m >= tmp.shape[0]:
                    return OVERFLOW
                tmp[m, 0] = E[j, 0]
                tmp[m, 1] = E[j, 1] - k
                tmp[m, 2] = E[j, 2]
                tmp[m, 3] = E[j, 3]
                tmp[m, 4] = MARK if k else NO_NODE
                tmp[m, 5] = k
                m += 1
        h = _store_pareto(tmp, m, keys, E, T, top, cls_ge)
        if h < 0:
            return OVERFLOW
    if lost:
        start = top[0]
        length = h & 0xFFFF
        if start + length > E.shape[0]:
            return OVERFLOW
        for j in range(length):
            src = (h >> 16) + j
            E[start + j, 0] = E[src, 0]
            E[start + j, 1] = E[src, 1]
            E[start + j, 2] = E[src, 2] + lost
            E[start + j, 3] = E[src, 3]
        top[0] = start + length
        h = (start << 16) | length
    if not _store(pmemo, pkey, h):
        return OVERFLOW
    return h


@njit(cache=True)
def _combine(h0, h1, h2, h3, budget, lives, bound, E, cls_sum, pick):
    """``solver._combine`` (no extras): the least deadwood below ``bound``; ``pick`` gets the entries."""
    best = bound
    found = False
    for i0 in range(h0 >> 16, (h0 >> 16) + (h0 & 0xFFFF)):
        d0 = E[i0, 2]
        if d0 >= best:
            break
        for i1 in range(h1 >> 16, (h1 >> 16) + (h1 & 0xFFFF)):
            d1 = d0 + E[i1, 2]
            if d1 >= best:
                break
            for i2 in range(h2 >> 16, (h2 >> 16) + (h2 & 0xFFFF)):
                d2 = d1 + E[i2, 2]
                if d2 >= best:
                    break
                for i3 in range(h3 >> 16, (h3 >> 16) + (h3 & 0xFFFF)):
                    d = d2 + E[i3, 2]
                    if d >= best:
                        break
                    u = E[i0, 1] + E[i1, 1] + E[i2, 1] + E[i3, 1]
                    if u > budget:
                        continue
                    if lives:
                        c = cls_sum[E[i0, 0]] + cls_sum[E[i1, 0]] + cls_sum[E[i2, 0]] + cls_sum[E[i3, 0]]
                        if c < 16 or (c & 15) < 2:
                            continue
                    best = d
                    pick[0] = i0
                    pick[1] = i1
                    pick[2] = i2
                    pick[3] = i3
                    found = True
                    break
    return best, found


@njit(cache=True)
def _sort(keys, n):
    """Sort ``keys[:n]`` in place (a heap sort: no allocation, and n may be large)."""
    if n < 2:
        return
    for start in range(n // 2 - 1, -1, -1):
        _sift(keys, start, n)
    for end in range(n - 1, 0, -1):
        keys[0], keys[end] = keys[end], keys[0]
        _sift(keys, 0, end)


@njit(cache=True, inline="always")
def _sift(keys, root, n):
    """Move ``keys[root]`` down the max-heap ``keys[:n]`` to its place."""
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and keys[child + 1] > keys[child]:
            child += 1
        if keys[root] >= keys[child]:
            return
        keys[root], keys[child] = keys[child], keys[root]
        root = child


@njit(cache=True)
def _search(nat, printed, mode, limit, params, rank_values, tables, state, scratch, memo, pmemo, pick, sets_out):
    """``_Game.search`` (no extras, traced): the least deadwood (``FREE``) or the least with both
    lives (``LIVES``), or ``limit`` when nothing is lower. ``pick`` gets the four suits' entries
    (-1 when nothing was found) and ``sets_out`` the sets as (rank, rank code) rows; returns
    (deadwood, number of sets), or (OVERFLOW, 0)."""
    cls_add, cls_ge, cls_sum, sc_start, sc_data = tables
    E, T, top = state
    cpos, cg, stk, dfs, tmp, keys, leaves, leaves2, lsets, ranked_low, ranked_h, per_suit = scratch
    wild = params[P_WILD]
    wild_bit = params[P_WILD_BIT]
    cap = params[P_CAP]
    pk, masks, cards, hs, trial = per_suit[0], per_suit[1], per_suit[2], per_suit[3], per_suit[4]
    for s in range(4):
        pk[s] = 0
        masks[s] = 0
        cards[s] = 0
        for r in range(13):
            n = np.int64(nat[13 * s + r])
            pk[s] |= n << 2 * r
            cards[s] += n
            if n:
                masks[s] |= 1 << r
    a, b, c, d = masks[0], masks[1], masks[2], masks[3]
    jokers = np.int64(printed)
    if wild >= 0:
        jokers += nat[wild] + nat[13 + wild] + nat[26 + wild] + nat[39 + wild]
    if jokers and cap != 0:
        cand = (a & (b | c | d)) | (b & (c | d)) | (c & d)
    else:
        cand = (a & b & (c | d)) | (c & d & (a | b))
    cand &= ~wild_bit
    lives = mode == LIVES
    best = limit
    for s in range(4):
        pick[s] = -1
    if not cand:
        for s in range(4):
            budget = _room(jokers, cards[s])
            hs[s] = _find(pmemo, _memo_key(pk[s], budget, params))  # ``_profile``'s memo, looked up here:
            if hs[s] < 0:  # a call passing arrays costs more than the lookup
                hs[s] = _profile(pk[s], budget, params, rank_values, cls_add, cls_ge, E, T, top, memo, pmemo, cpos,
                                 cg, stk, dfs, tmp, keys)
            if hs[s] < 0:
                return OVERFLOW, 0
        best, found = _combine(hs[0], hs[1], hs[2], hs[3], printed, lives, best, E, cls_sum, pick)
        return best, 0
    # leaves: (jokers used, given per suit x4, last set node); set nodes: (parent, rank, code)
    nl = 1
    leaves[0, 0] = 0
    for s in range(4):
        leaves[0, 1 + s] = 0
    leaves[0, 5] = -1
    ns = 0
    lcap = leaves.shape[0]
    scap = lsets.shape[0]
    r = 0
    while cand:
        if cand & 1:
            code = nat[r] + 3 * nat[13 + r] + 9 * nat[26 + r] + 27 * nat[39 + r]
            shift = 2 * r
            n2 = 0
            for li in range(nl):
                used = leaves[li, 0]
                for k in range(sc_start[code], sc_start[code + 1]):
                    sub = sc_data[k, 0]
                    j = sc_data[k, 1]
                    if sub == 0:
                        if n2 >= lcap:
                            return OVERFLOW, 0
                        for x in range(6):
                            leaves2[n2, x] = leaves[li, x]
                        n2 += 1
                    elif used + j <= jokers:
                        if n2 >= lcap or ns >= scap:
                            return OVERFLOW, 0
                        leaves2[n2, 0] = used + j
                        for s in range(4):
                            leaves2[n2, 1 + s] = leaves[li, 1 + s] | (sc_data[k, 2 + s] << shift)
                        lsets[ns, 0] = leaves[li, 5]
                        lsets[ns, 1] = r
                        lsets[ns, 2] = sub
                        leaves2[n2, 5] = ns
                        ns += 1
                        n2 += 1
            for li in range(n2):
                for x in range(6):
                    leaves[li, x] = leaves2[li, x]
            nl = n2
        cand >>= 1
        r += 1
    room = _room(jokers, 26)
    nr = 0
    for li in range(nl):
        low = 0
        for s in range(4):
            left = pk[s] - leaves[li, 1 + s]
            budget = _room(room, _cards(left))
            h = _find(pmemo, _memo_key(left, budget, params))
            if h < 0:
                h = _profile(left, budget, params, rank_values, cls_add, cls_ge, E, T, top, memo, pmemo, cpos, cg,
                             stk, dfs, tmp, keys)
            if h < 0:
                return OVERFLOW, 0
            ranked_h[li, s] = h
            low += E[h >> 16, 2]
        if low < best:
            ranked_low[nr] = (low << 20) | li  # unique keys, sorted in the reference's stable order
            nr += 1
    _sort(ranked_low, nr)
    best_leaf = -1
    for oi in range(nr):
        if ranked_low[oi] >> 20 >= best:
            break
        li = ranked_low[oi] & 0xFFFFF
        got, found = _combine(ranked_h[li, 0], ranked_h[li, 1], ranked_h[li, 2], ranked_h[li, 3],
                              printed - leaves[li, 0], lives, best, E, cls_sum, trial)
        if found:
            best = got
            best_leaf = li
            for s in range(4):
                pick[s] = trial[s]
    if best_leaf < 0:
        return best, 0
    # the best leaf's sets, in the order they were taken (low rank first)
    count = 0
    node = leaves[best_leaf, 5]
    while node >= 0:
        count += 1
        node = lsets[node, 0]
    node = leaves[best_leaf, 5]
    for i in range(count - 1, -1, -1):
        sets_out[i, 0] = lsets[node, 1]
        sets_out[i, 1] = lsets[node, 2]
        node = lsets[node, 0]
    return best, count


@njit(cache=True)
def _lay_out(nat, printed, wild, pick, sets_out, nsets, witness_start, witness, E, T, melds, meld_len, left):
    """``best_arrangement``'s bookkeeping: the melds' physical cards (rows of ``melds``, lengths in
    ``meld_len``) and the deadwood counts (``left``). Returns the number of melds."""
    pool = np.empty(64, np.int64)
    npool = 0
    for _ in range(printed):
        pool[npool] = JOKER
        npool += 1
    for c in range(53):
        left[c] = nat[c]
    runs = np.empty((4, 32, 2), np.int64)
    nruns = np.zeros(4, np.int64)
    for s in range(4):
        # the entry's trace, oldest first
        first = -1 if pick[s] < 0 else E[pick[s], 3]
        t = first
        count = 0
        while t >= 0:
            count += 1
            t = T[t, 0]
        t = first
        chain = np.empty(count, np.int64)
        for i in range(count - 1, -1, -1):
            chain[i] = t
            t = T[t, 0]
        for i in range(count):
            node = chain[i]
            if T[node, 1] == MARK:
                k = T[node, 2]
                card = s * 13 + wild
                left[card] -= k
                for _ in range(k):
                    pool[npool] = card
                    npool += 1
            else:
                runs[s, nruns[s], 0] = T[node, 1]
                runs[s, nruns[s], 1] = T[node, 2]
                nruns[s] += 1
    left[JOKER] = 0
    nm = 0
    for i in range(nsets):
        r = sets_out[i, 0]
        sub = sets_out[i, 1]
        for w in range(witness_start[sub], witness_start[sub + 1]):
            m = witness[w, 0]
            jk = witness[w, 1]
            n = 0
            for s in range(4):
                if (m >> s) & 1:
                    card = s * 13 + r
                    left[card] -= 1
                    melds[nm, n] = card
                    n += 1
            for _ in range(jk):
                npool -= 1
                melds[nm, n] = pool[npool]
                n += 1
            meld_len[nm] = n
            nm += 1
    for s in range(4):
        for i in range(nruns[s]):
            pos = runs[s, i, 0]
            jokers = runs[s, i, 1]
            lo = 0
            while not (pos >> lo) & 1:
                lo += 1
            hi = _bit_length(pos) - 1
            mid = np.empty(14, np.int64)
            nmid = 0
            for p in range(lo, hi + 1):
                if (pos >> p) & 1:
                    card = s * 13 + p % 13
                    left[card] -= 1
                    mid[nmid] = card
                else:
                    npool -= 1
                    mid[nmid] = pool[npool]
                nmid += 1
            pad = jokers - (hi - lo + 1 - _popcount(pos))
            n_above = min(pad, 13 - hi)
            above = np.empty(14, np.int64)
            for j in range(n_above):
                npool -= 1
                above[j] = pool[npool]
            n = 0
            for j in range(pad - n_above):
                npool -= 1
                melds[nm, n] = pool[npool]
                n += 1
            for j in range(nmid):
                melds[nm, n] = mid[j]
                n += 1
            for j in range(n_above):
                melds[nm, n] = above[j]
                n += 1
            meld_len[nm] = n
            nm += 1
    for i in range(npool):
        left[pool[i]] += 1
    return nm


@njit(cache=True)
def _clear(memo, pmemo, top):
    memo[:] = 0
    pmemo[:] = 0
    top[0] = 0
    top[1] = 0


@njit(cache=True)
def _solve(nat, mode, limit, lay, params, rank_values, tables, state, scratch, memo, pmemo, out):
    """One hand: (deadwood, melds laid out) where melds is -1 when no arrangement is below
    ``limit`` (or ``lay`` is false), OVERFLOW when the hand does not fit the scratch arrays."""
    cls_add, cls_ge, cls_sum, sc_start, sc_data, w_start, w_data = tables
    E, T, top = state
    pick, sets_out, melds, meld_len, left = out
    if top[0] > E.shape[0] * 3 // 4 or top[1] > T.shape[0] * 3 // 4:
        _clear(memo, pmemo, top)  # the arenas are filling: forget every memoised profile
    printed = np.int64(nat[JOKER])
    best, nsets = _search(nat, printed, mode, limit, params, rank_values, (cls_add, cls_ge, cls_sum, sc_start, sc_data),
                          state, scratch, memo, pmemo, pick, sets_out)
    if best == OVERFLOW:
        _clear(memo, pmemo, top)
        best, nsets = _search(nat, printed, mode, limit, params, rank_values,
                              (cls_add, cls_ge, cls_sum, sc_start, sc_data), state, scratch, memo, pmemo, pick,
                              sets_out)
        if best == OVERFLOW:
            return OVERFLOW, 0
    if pick[0] < 0 or not lay:
        return best, -1
    return best, _lay_out(nat, printed, params[P_WILD], pick, sets_out, nsets, w_start, w_data, E, T, melds, meld_len,
                          left)


# ---------------------------------------------------------------------------------------------
# Whole hands from Python in one call: a hand's value with the quick answers, one hand or a batch.
# Every call into compiled code pays for each argument it unboxes, so these take the workspace and
# a rule set's tables as one flat array each and cut them into views here (``_carve``,
# ``_carve_rules``); a call then costs about as much as one with three small arrays.

_ENTRIES = 1 << 20
_SCRATCH = 1 << 14
_WIDE = 1 << 16
MEMO_SLOTS = 1 << 20
"""Slots of the suit-search memo (cards and budget -> profile); it is cleared when half full."""
PROFILE_SLOTS = 1 << 19
"""Slots of the profile memo (a suit's cards and budget -> profile)."""

_WORK_LAYOUT = (  # (width, rows) of each workspace array, in the order ``_carve`` returns them
    (4, _ENTRIES), (3, _ENTRIES), (1, 2),  # state: the entry arena, the trace arena, their tops
    (1, _SCRATCH), (1, _SCRATCH), (4, _SCRATCH),  # run candidates: positions, jokers, their search stack
    (1, _WIDE),  # the suit search's stack
    (6, _WIDE), (1, _WIDE),  # profile entries before the Pareto cut, their sort keys
    (6, _SCRATCH), (6, _SCRATCH), (3, _WIDE),  # leaves (ways to take sets out), twice, and their sets
    (1, _SCRATCH), (4, _SCRATCH),  # the leaves' lower bounds and suit profiles
    (4, 8),  # per suit: cards (two bits a rank), rank mask, count, profile, chosen entry
    (1, 4), (2, 64), (16, 64), (1, 64), (1, 53),  # out: picked entries, sets, melds, meld lengths, deadwood
    (1, 2 * MEMO_SLOTS + 1), (1, 2 * PROFILE_SLOTS + 1),  # the two memo tables
    (1, 53),  # the hand being solved, as int64 counts
)
_WIDTHS = (1, 2, 3, 4, 6, 16)
"""The buffer holds one block per width, each block its arrays' rows one after the other: a block
is reshaped once, and each array is a slice of its rows (a reshape costs a call, a slice does not)."""


def _layout() -> tuple[tuple, tuple]:
    rows = {w: 0 for w in _WIDTHS}
    spans = []
    for width, n in _WORK_LAYOUT:
        spans.append((rows[width], rows[width] + n))
        rows[width] += n
    blocks = tuple(itertools.accumulate((w * rows[w] for w in _WIDTHS), initial=0))
    return blocks, tuple(spans)


_BLOCKS, _SPANS = _layout()
"""Where each width's block starts in the buffer (and where the buffer ends); each array's rows."""


@intrinsic
def _pointer(typingctx, address):
    """The int64 pointer at ``address`` (an int), for ``carray``."""
    sig = types.CPointer(types.int64)(types.intp)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.int64)))

    return sig, codegen


@njit(cache=True, inline="always")
def _rows(address, start, rows, width):
    """A (rows, width) view of int64s from element ``start`` of the buffer at ``address``."""
    return carray(_pointer(address + 8 * start), (rows, width))


@njit(cache=True, inline="always")
def _span(address, start, stop):
    """The int64s ``start:stop`` of the buffer at ``address``."""
    return carray(_pointer(address + 8 * start), stop - start)


# Views cut by ``_carve`` and ``_carve_rules`` are made from the buffer's address, so they carry no
# reference count. Views cut by slicing would all share the buffer's count, and every call that
# passes them on would add to it and take from it, one atomic step for each of thirty arrays: more
# time than the search of a hand. The buffers live as long as the workspace and the rule set that
# own them, and no view outlives the call that cut it.


@njit(cache=True)
def _carve(work):
    """The workspace buffer as (state, scratch, out, memo, pmemo, counts) views (``_WORK_LAYOUT``)."""
    a = work.ctypes.data
    b = _BLOCKS
    s = _SPANS
    state = (_rows(a, b[3] + 4 * s[0][0], s[0][1] - s[0][0], 4), _rows(a, b[2] + 3 * s[1][0], s[1][1] - s[1][0], 3),
             _span(a, b[0] + s[2][0], b[0] + s[2][1]))
    scratch = (_span(a, b[0] + s[3][0], b[0] + s[3][1]), _span(a, b[0] + s[4][0], b[0] + s[4][1]),
               _rows(a, b[3] + 4 * s[5][0], s[5][1] - s[5][0], 4), _span(a, b[0] + s[6][0], b[0] + s[6][1]),
               _rows(a, b[4] + 6 * s[7][0], s[7][1] - s[7][0], 6), _span(a, b[0] + s[8][0], b[0] + s[8][1]),
               _rows(a, b[4] + 6 * s[9][0], s[9][1] - s[9][0], 6),
               _rows(a, b[4] + 6 * s[10][0], s[10][1] - s[10][0], 6),
               _rows(a, b[2] + 3 * s[11][0], s[11][1] - s[11][0], 3), _span(a, b[0] + s[12][0], b[0] + s[12][1]),
               _rows(a, b[3] + 4 * s[13][0], s[13][1] - s[13][0], 4), _rows(a, b[3] + 4 * s[14][0], 8, 4))
    out = (_span(a, b[0] + s[15][0], b[0] + s[15][1]), _rows(a, b[1] + 2 * s[16][0], s[16][1] - s[16][0], 2),
           _rows(a, b[5] + 16 * s[17][0], s[17][1] - s[17][0], 16), _span(a, b[0] + s[18][0], b[0] + s[18][1]),
           _span(a, b[0] + s[19][0], b[0] + s[19][1]))
    return (state, scratch, out, _span(a, b[0] + s[20][0], b[0] + s[20][1]), _span(a, b[0] + s[21][0], b[0] + s[21][1]),
            _span(a, b[0] + s[22][0], b[0] + s[22][1]))


def _python_views(work: np.ndarray) -> list[np.ndarray]:
    """The workspace buffer's arrays in ``_WORK_LAYOUT`` order, as numpy views (``_carve``'s, for Python)."""
    blocks = {w: work[_BLOCKS[k]:_BLOCKS[k + 1]].reshape(-1, w) for k, w in enumerate(_WIDTHS)}
    views = [blocks[width][start:stop] for (width, _), (start, stop) in zip(_WORK_LAYOUT, _SPANS)]
    return [v.reshape(-1) if width == 1 else v for v, (width, _) in zip(views, _WORK_LAYOUT)]


# A rule set's bank: params, rank values, where each table starts, then the tables, flattened.
_BANK_PARAMS, _BANK_VALUES, _BANK_AT, _BANK_TABLES = 0, 8, 21, 29


@njit(cache=True)
def _carve_rules(bank):
    """A rule set's bank as (params, rank values, tables) views (``_Rules``)."""
    a = bank.ctypes.data
    at = bank[_BANK_AT:_BANK_TABLES]
    tables = (_rows(a, at[0], 5, 5), _rows(a, at[1], 5, 5), _span(a, at[2], at[3]), _span(a, at[3], at[4]),
              _rows(a, at[4], (at[5] - at[4]) // 6, 6), _span(a, at[5], at[6]),
              _rows(a, at[6], (at[7] - at[6]) // 2, 2))
    return _span(a, _BANK_PARAMS, _BANK_PARAMS + 7), _span(a, _BANK_VALUES, _BANK_AT), tables


def _python_rule_views(bank: np.ndarray) -> tuple:
    """``_carve_rules`` as numpy views, for Python."""
    at = bank[_BANK_AT:_BANK_TABLES]
    tables = (bank[at[0]:at[1]].reshape(5, 5), bank[at[1]:at[2]].reshape(5, 5), bank[at[2]:at[3]], bank[at[3]:at[4]],
              bank[at[4]:at[5]].reshape(-1, 6), bank[at[5]:at[6]], bank[at[6]:at[7]].reshape(-1, 2))
    return bank[_BANK_PARAMS:_BANK_PARAMS + 7], bank[_BANK_VALUES:_BANK_AT], tables


BAD = -3
"""A hand value's "the counts are not whole numbers within the bounds" (the caller names what)."""


@njit(cache=True)
def _take_counts(hand, nat, max_copies, max_jokers, max_cards):
    """Copy the 53 counts of ``hand`` into ``nat``; False unless each is a whole number from 0 to
    ``max_copies`` (``max_jokers`` for the joker) and they add up to at most ``max_cards``."""
    cards = 0
    for c in range(53):
        x = hand[c]
        if not (x >= 0 and x <= 255):
            return False
        n = np.int64(x)
        if n != x or n > (max_jokers if c == JOKER else max_copies):
            return False
        nat[c] = n
        cards += n
    return cards <= max_cards


@njit(cache=True)
def _hand_value(nat, mode, params, rank_values, tables, state, scratch, memo, pmemo, out):
    """``solver.indian_penalty`` (``LIVES``) or ``solver.min_deadwood`` (``FREE``) of the counts
    ``nat``, quick answers included; OVERFLOW when the hand does not fit the scratch arrays."""
    ace_high = params[P_ACE] == 1
    wild = params[P_WILD]
    total = 0
    pure = 0
    two = False
    wild_held = False
    masks = scratch[-1][1]
    for s in range(4):
        mask = 0
        doubles = 0
        for r in range(13):
            n = nat[13 * s + r]
            if n:
                total += n * rank_values[r]
                mask |= 1 << r
                if n > 1:
                    doubles |= 1 << r
        masks[s] = mask
        if wild >= 0 and (mask >> wild) & 1:
            wild_held = True
        m = mask | ((mask & 1) << 13) if ace_high else mask
        starts = m & (m >> 1) & (m >> 2)
        if starts:
            pure += 1
            # two disjoint pure runs in this suit (``_Game.summary``)
            m2 = doubles | ((doubles & 1) << 13) if ace_high else doubles
            for a in range(12):
                if not (starts >> a) & 1:
                    continue
                for b in range(a, 12):
                    if not (starts >> b) & 1:
                        continue
                    both = (7 << a) & (7 << b)
                    ends = (7 << a) | (7 << b)
                    ace_twice = (ends & 1) != 0 and ((ends >> 13) & 1) != 0
                    if not both & ~m2 and not (ace_twice and not doubles & 1):
                        two = True
    printed = nat[JOKER]
    if mode == LIVES:
        if not pure:
            return total  # I5: no pure run, no lives
        if pure == 1 and not printed and not two and not wild_held:
            return total  # no joker, no wild card and one pure run: no second life
        best, _ = _solve(nat, LIVES, total, False, params, rank_values, tables, state, scratch, memo, pmemo, out)
        return best
    a, b, c, d = masks[0], masks[1], masks[2], masks[3]
    if not printed and not pure and not ((a & b & (c | d)) | (c & d & (a | b))) and not wild_held:
        return total  # no run, no set, no joker: nothing melds
    best, _ = _solve(nat, FREE, INF, False, params, rank_values, tables, state, scratch, memo, pmemo, out)
    return best


@njit(cache=True)
def _value(hand, bank, mode, max_copies, max_jokers, max_cards, work):
    """One hand's value (``_hand_value``), or BAD when its counts are out of bounds."""
    params, rank_values, tables = _carve_rules(bank)
    state, scratch, out, memo, pmemo, nat = _carve(work)
    if not _take_counts(hand, nat, max_copies, max_jokers, max_cards):
        return BAD
    return _hand_value(nat, mode, params, rank_values, tables, state, scratch, memo, pmemo, out)


@njit(cache=True)
def _values(hands, rows, banks, mode, max_copies, max_jokers, max_cards, work, values):
    """Each hand's value into ``values``, hand ``i`` under the rules ``banks[rows[i]]``; returns the
    first hand whose counts are out of bounds (the rest are not solved), or -1."""
    state, scratch, out, memo, pmemo, nat = _carve(work)
    for i in range(hands.shape[0]):
        params, rank_values, tables = _carve_rules(banks[rows[i]])
        if not _take_counts(hands[i], nat, max_copies, max_jokers, max_cards):
            return i
        values[i] = _hand_value(nat, mode, params, rank_values, tables, state, scratch, memo, pmemo, out)
    return -1


search_kernel = _solve
"""The compiled search on the caller's own arrays (``agents.rule_compiled`` calls it from its kernels)."""


@njit(cache=True)
def _solve_flat(nat, bank, mode, limit, lay, work):
    """``_solve`` with the rule set and the workspace as flat arrays."""
    params, rank_values, tables = _carve_rules(bank)
    state, scratch, out, memo, pmemo, _ = _carve(work)
    return _solve(nat, mode, limit, lay, params, rank_values, tables, state, scratch, memo, pmemo, out)


@njit(cache=True)
def _laid_out_flat(nat, bank, mode, work):
    """``_solve_flat`` laying the melds out, and copies of them, in one call: no other caller's search
    (another thread's: compiled calls hold the GIL) can write the workspace's ``out`` in between."""
    best, count = _solve_flat(nat, bank, mode, INF, True, work)
    _, _, melds, lengths, left = _carve(work)[2]
    n = max(count, 0)
    return best, count, melds[:n].copy(), lengths[:n].copy(), left.copy()


@njit(cache=True)
def fewest_loose(nat, bank, limit, work):
    """The fewest natural cards ``nat`` leaves outside melds under the rule set ``bank`` (the
    ``"count"`` rules count cards), or ``limit`` when none is lower; OVERFLOW when the hand does
    not fit the scratch arrays. For kernels: the bound of ``rummy_env.compiled.romi``'s going-out
    search."""
    return _solve_flat(nat, bank, FREE, limit, False, work)[0]


# ---------------------------------------------------------------------------------------------
# Python side: one rule set's tables, the shared workspace, and the functions ``rummy_env.solver`` calls.


class _Workspace:
    """The arenas, memo tables and scratch arrays every rule set shares (one per process): one
    buffer, and views of it for the kernels that take them one by one (``agents.rule_compiled``).

    Threads may share it: a compiled call holds the GIL from start to end, so calls never overlap;
    between calls the memo tables and arenas are caches right for any caller; and no caller reads
    the buffer after its call returns (``laid_out`` copies the melds out within the call).
    """

    def __init__(self) -> None:
        self.buffer = np.zeros(_BLOCKS[-1], np.int64)
        views = _python_views(self.buffer)
        self.state, self.scratch, self.out = tuple(views[0:3]), tuple(views[3:15]), tuple(views[15:20])
        self.memo, self.pmemo = views[20], views[21]

    def clear(self) -> None:
        _clear(self.memo, self.pmemo, self.state[2])


class _Rules:
    """One rule set's tables for the compiled search (built from ``solver_tables.RuleTables``, as
    the reference's are): one bank, and views of it (``params``, ``rank_values``, ``tables``)."""

    def __init__(self, ident: int, g: RuleTables, plain: _Rules | None = None) -> None:
        wild = -1 if g.wild is None else g.wild
        plain_key = (ident if plain is None else plain.ident) << 40
        params = [-1 if g.cap is None else g.cap, int(g.ace_high), int(g.lives), wild, g.wild_bit, ident << 40,
                  plain_key]
        self.ident = ident
        set_rows = [row for choices in g.set_choices for row in choices]
        set_starts = list(itertools.accumulate((len(c) for c in g.set_choices), initial=0))
        witness_rows = [pair for split in g.set_witness for pair in split]
        witness_starts = list(itertools.accumulate((len(w) for w in g.set_witness), initial=0))
        tables = [np.asarray(t, np.int64).ravel() for t in (
            CLASS_ADD, CLASS_GE, CLASS_SUM, set_starts, set_rows, witness_starts, witness_rows)]
        at = list(itertools.accumulate((t.size for t in tables), initial=_BANK_TABLES))
        head = np.zeros(_BANK_TABLES, np.int64)
        head[_BANK_PARAMS:_BANK_PARAMS + len(params)] = params
        head[_BANK_VALUES:_BANK_AT] = g.rank_values
        head[_BANK_AT:_BANK_TABLES] = at
        self.bank = np.concatenate([head] + tables)
        self.params, self.rank_values, self.tables = _python_rule_views(self.bank)
        self.max_jokers = 0 if g.cap == 0 else 255
        """The most jokers a hand may hold under these rules (none where no meld takes one)."""


_WORK: _Workspace | None = None
_RULES: dict = {}
_IDENTS = itertools.count(1)
"""Rule-set ids for the memo keys: never reused, so tables still held elsewhere never share keys."""


def workspace() -> _Workspace:
    global _WORK
    if _WORK is None:
        _WORK = _Workspace()
    return _WORK


def rules(game: str, wild_rank: int | None):
    """The compiled tables of ``game`` (``"count"``: Indian counted in cards) with ``wild_rank``."""
    got = _RULES.get((game, wild_rank))
    if got is None:
        g = rule_tables(game, wild_rank)  # refuses what the reference refuses
        plain = None if wild_rank is None else rules(game, None)
        got = _RULES[(game, wild_rank)] = _Rules(next(_IDENTS), g, plain)
    return got


def wild_banks(game: str) -> np.ndarray:
    """The banks of ``game`` without a wild rank and with each wild rank 0..12, one a row."""
    got = _WILD_BANKS.get(game)
    if got is None:
        got = _WILD_BANKS[game] = np.stack([rules(game, w).bank for w in (None, *range(13))])
    return got


_WILD_BANKS: dict = {}


def clear_caches() -> None:
    """Forget every memoised profile (answers do not change)."""
    if _WORK is not None:
        _WORK.clear()


def solve(nat: np.ndarray, rules_: _Rules, mode: int, limit: int = INF) -> int:
    """The deadwood of checked counts ``nat`` (``laid_out`` gives the melds too)."""
    return _solve_flat(nat, rules_.bank, mode, limit, False, workspace().buffer)[0]


def laid_out(nat: np.ndarray, rules_: _Rules, mode: int) -> tuple:
    """(deadwood, count, melds, meld lengths, deadwood counts) of checked counts ``nat``: the melds
    as copies (``count`` rows), safe to read after other threads' searches; ``count`` is -1 when
    no arrangement is laid out, OVERFLOW when the hand does not fit the scratch arrays."""
    return _laid_out_flat(nat, rules_.bank, mode, workspace().buffer)


def value(hand, rules_: _Rules, mode: int, max_copies: int, max_jokers: int, max_cards: int) -> int:
    """One hand's value (``_hand_value``): BAD when a count is out of bounds, OVERFLOW when the
    hand is too large for the scratch arrays. ``hand``: 53 counts (bytes or a numeric array)."""
    return _value(hand, rules_.bank, mode, max_copies, max_jokers, max_cards, workspace().buffer)


def values(hands: np.ndarray, rows: np.ndarray, banks: np.ndarray, mode: int, max_copies: int, max_jokers: int,
           max_cards: int, out: np.ndarray) -> int:
    """Every hand's value into ``out`` (``_values``); the first out-of-bounds hand, or -1."""
    return _values(hands, rows, banks, mode, max_copies, max_jokers, max_cards, workspace().buffer, out)
