"""Indiai römi (R1–R8, G1–G10) for many hands at once, in numba: the römi core behind
``VectorGame("romi", backend="numba")``.

The turn, the deal and the observation are the skeleton's (``rummy_env.compiled.skeleton``: the
cut card is dealt first, R2, and a discard top taken after one's first turn is owed to the table,
R4), the melds, lay-offs, joker swaps and payments the table games' (``rummy_env.compiled.table``).
What is römi's own is written here, a hybrid chosen so that every answer is the Python engine's
(``rummy_env.game``, the reference) and almost every step stays compiled:

* **Plays** (R5) are generated from an array of the 373 meld templates (``melds.meld_templates``)
  and the table slots with the rules of ``GameState._table_plays`` (the lay-off and joker-swap
  placements of ``table.meld_placements``, the joker at either open end of a run as two moves, G7
  and R6 on what must be left).
* **Look-aheads** (R4, R5) decide whether an owed card can still reach the table (taking the
  discard top after the first turn, every play while something is owed, every joker swap) and
  whether a player can go out with the cut card (R4). They are exact depth-first searches over
  those plays, pruned only as the engine prunes: by its necessary tests (``_has_home`` for an
  owed card; both steps of ``_may_go_out`` when going out, the second by the compiled solver),
  its lossless rule of trying swaps only first (``_swaps_after``) and, when going out, its sleep
  sets (plays that commute are tried in one order only). Their answers are existence answers,
  so the search order does not matter. Each search has a node budget; a row whose search runs
  out of it is marked, and ``RomiCore`` writes that row's mask from the Python engine's
  ``legal_moves()`` on a ``GameState`` rebuilt from the arrays (rare: ``tests/test_vector_compiled.py``
  counts it).
* **Going out with the cut card** ends the hand: the plays the engine would find change only the
  table and the winner's hand, and the payments (R7) read only the other hands and whether the
  others have opened, so the kernel ends the hand without choosing the plays.

``tests/test_vector_compiled.py`` steps this core and the Python engine in lockstep;
``benchmarks/lockstep_vector.py --games romi`` runs the long form.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import JOKER, NUM_RANKS, NUM_TYPES
from ..encoding import DISCARD_BASE, DRAW_ACTION, ROMI_MELD_BASE, ROMI_NUM_ACTIONS, ROMI_PLACE_BASE, \
    ROMI_PLACE_JOKER_LOW_BASE, ROMI_TAKE_CUT_ACTION, TAKE_DISCARD_ACTION, move_ids
from ..game import PHASE_DRAW, GameState
from ..games.romi import SPEC
from ..melds import RUN, SET
from ..ruleset import RuleSet
from . import skeleton, solver, table
from .skeleton import ASK_PYTHON, CURRENT, ENDED, GAME_MOVE, GOES_ON, IN_RUN, LONE, MAX_SLOTS, NMELDS, \
    NUM_SCALARS, OWED, OWED_JOKERS, PHASE, PILE_LEN, SHOWN, TAKEN, bit_count, held_bits
from .table import SETS_PER_RANK

# The search keeps two columns more than a row's scalars: the hand's size and whether it has opened.
SIZE, OPEN = NUM_SCALARS, NUM_SCALARS + 1
SEARCH_SCALARS = NUM_SCALARS + 2

MAX_MELDS = SPEC.max_table_melds  # 35
DEPTH = 40  # plays in one look-ahead: each puts a card on the table, so a turn has fewer
MAX_PLAYS = 1024  # plays listed at one position: 373 templates and under 8 per table meld
SEARCH_BUDGET = 50_000
"""Positions one look-ahead may visit before its row is handed to the Python engine (the default
of ``RomiCore.search_budget``)."""

_ACE_HIGH = 13  # the run position of a high ace (R3)

TEMPLATES, TEMPLATE_MASKS, RUN_IDS = table.template_arrays(True)

if (DISCARD_BASE, ROMI_TAKE_CUT_ACTION, ROMI_MELD_BASE, ROMI_PLACE_BASE, ROMI_PLACE_JOKER_LOW_BASE, ROMI_NUM_ACTIONS,
        len(TEMPLATES), MAX_MELDS) != (2, 55, 56, 429, 2284, 2319, 373, 35):
    raise ImportError("rummy_env.compiled.romi expects the römi action ids of rummy_env.encoding")


# ----------------------------------------------------------------------------- plays


@njit(cache=True)
def _lays_off(card, left, taken, hand):
    """Whether a natural card or joker laid off (not a swap) leaves a card to discard: R6, G7."""
    if left == 0:
        return False
    sub = 1 if card == taken else 0
    return not (taken != -1 and left == hand[taken] - sub)


@njit(cache=True)
def _meld_listed(t, naturals, hand, size, taken, tpl, tpl_mask):
    """Whether template ``t`` (the hand holds ``naturals`` of its cards, the jokers suffice) leaves a
    card to discard: R6, G7."""
    tsize = tpl[t, 3]
    left = size - tsize
    if left == 0:
        return False  # R6: going out needs a last discard
    if taken != -1:
        sub = tsize - naturals if taken == JOKER else (tpl_mask[t] >> taken) & 1
        if left == hand[taken] - sub:
            return False  # G7: only the card just taken would be left
    return True


@njit(cache=True)
def gen_plays(hand, size, taken, opened, nm, tk, tkey, tlow, tlen, ts, tpl, tpl_mask, run_ids, out, swap):
    """The action ids of ``GameState._table_plays`` into ``out`` (``swap[k]``: a joker swap); their
    count. Melds are found as ``table.TemplateIndex.layable`` finds them: sets of the ranks held in
    enough suits, and the runs of each suit whose gaps the jokers fill (G5, R3)."""
    jokers = hand[JOKER]
    if jokers > 2:
        jokers = 2  # R3: at most 2 jokers a meld
    held = held_bits(hand)
    count = 0
    for rank in range(NUM_RANKS):
        at_rank = held >> rank
        suits = (at_rank & 1) + ((at_rank >> 13) & 1) + ((at_rank >> 26) & 1) + ((at_rank >> 39) & 1)
        if suits == 0 or suits + jokers < 3:
            continue
        for t in range(SETS_PER_RANK * rank, SETS_PER_RANK * rank + SETS_PER_RANK):
            naturals = bit_count(tpl_mask[t] & held)
            if naturals and tpl[t, 3] - naturals <= jokers and _meld_listed(t, naturals, hand, size, taken, tpl,
                                                                             tpl_mask):
                out[count] = ROMI_MELD_BASE + t
                swap[count] = 0
                count += 1
    for suit in range(4):
        positions = (held >> (suit * NUM_RANKS)) & 0x1FFF
        positions |= (positions & 1) << 13  # the ace also after the king (R3)
        if positions == 0:
            continue
        for low in range(_ACE_HIGH - 1):
            naturals = 0
            missing = 0
            for length in range(1, _ACE_HIGH - low + 2):
                if (positions >> (low + length - 1)) & 1:
                    naturals += 1
                else:
                    missing += 1
                    if missing > jokers:
                        break
                if length >= 3 and naturals and length <= 13:
                    t = run_ids[suit, low, length]
                    if _meld_listed(t, naturals, hand, size, taken, tpl, tpl_mask):
                        out[count] = ROMI_MELD_BASE + t
                        swap[count] = 0
                        count += 1
    if not opened:
        return count  # R5: lay-offs and swaps need a meld of one's own on the table
    left = size - 1
    for s in range(nm):
        slots = ts[s]
        key = tkey[s]
        base = ROMI_PLACE_BASE + NUM_TYPES * s
        if tk[s] == RUN:
            low = tlow[s]
            length = tlen[s]
            high = low + length - 1
            jk = 0
            for i in range(length):
                if slots[i] == JOKER:
                    jk += 1
            if length < 13:
                below = -1
                if low > 0:
                    below = key * NUM_RANKS + low - 1
                    if hand[below] and _lays_off(below, left, taken, hand):
                        out[count] = base + below
                        swap[count] = 0
                        count += 1
                if high < _ACE_HIGH:
                    above = key * NUM_RANKS + (high + 1) % NUM_RANKS
                    if above != below and hand[above] and _lays_off(above, left, taken, hand):
                        out[count] = base + above
                        swap[count] = 0
                        count += 1
                if jk < 2 and hand[JOKER] and _lays_off(JOKER, left, taken, hand):
                    if high < _ACE_HIGH:
                        out[count] = base + JOKER
                        swap[count] = 0
                        count += 1
                    if low > 0:
                        out[count] = ROMI_PLACE_JOKER_LOW_BASE + s
                        swap[count] = 0
                        count += 1
            for i in range(length):
                if slots[i] == JOKER:
                    card = key * NUM_RANKS + (low + i) % NUM_RANKS
                    if hand[card]:
                        out[count] = base + card
                        swap[count] = 1
                        count += 1
        else:
            filled = 0
            jk = 0
            for suit in range(4):
                if slots[suit] != -1:
                    filled += 1
                if slots[suit] == JOKER:
                    jk += 1
            for suit in range(4):
                card = suit * NUM_RANKS + key
                if not hand[card]:
                    continue
                if slots[suit] == -1 and filled < 4:
                    if _lays_off(card, left, taken, hand):
                        out[count] = base + card
                        swap[count] = 0
                        count += 1
                elif slots[suit] == JOKER:
                    out[count] = base + card
                    swap[count] = 1
                    count += 1
            if filled < 4 and jk < 2 and hand[JOKER] and _lays_off(JOKER, left, taken, hand):
                out[count] = base + JOKER
                swap[count] = 0
                count += 1
    return count



@njit(cache=True)
def apply_play(action, hand, known, sc, tk, tkey, tlow, tlen, ts, tpl):
    """A meld, lay-off or swap (an action id) on the arrays of one position; the change in hand size."""
    if action < ROMI_PLACE_BASE:
        return table.lay_meld(action - ROMI_MELD_BASE, hand, known, sc, tk, tkey, tlow, tlen, ts, tpl)
    if action < ROMI_PLACE_JOKER_LOW_BASE:
        meld, card = divmod(action - ROMI_PLACE_BASE, NUM_TYPES)
        return table.place_card(meld, card, False, hand, known, sc, tk, tkey, tlow, tlen, ts)
    return table.place_card(action - ROMI_PLACE_JOKER_LOW_BASE, JOKER, True, hand, known, sc, tk, tkey, tlow, tlen, ts)


# ----------------------------------------------------------------------------- quick tests


@njit(cache=True)
def _hand_home(card, suits, held, jokers, in_run, lone):
    """``game._hand_home``: ``card`` could meld with other held cards and ``jokers`` jokers."""
    if jokers >= 2:
        return True
    rank = card % NUM_RANKS
    if bit_count(suits & ~(1 << (card // NUM_RANKS))) + jokers >= 2:
        return True
    if jokers == 0:
        return (in_run[held & 0x1FFF] >> rank) & 1 == 1
    return (lone[held & 0x1FFF] >> rank) & 1 == 0


@njit(cache=True)
def _table_home(card, held, jokers, nm, tk, tkey, tlow, tlen, ts):
    """``game._table_home``: ``card`` could end up in a table meld (``held``: its suit's run positions)."""
    rank = card % NUM_RANKS
    suit = card // NUM_RANKS
    for s in range(nm):
        slots = ts[s]
        if tk[s] == SET:
            if tkey[s] == rank and (slots[suit] == JOKER or slots[suit] == -1):
                return True
        elif tkey[s] == suit:
            low = tlow[s]
            length = tlen[s]
            high = low + length - 1
            for attempt in range(2):
                if attempt == 0:
                    pos = rank
                elif rank == 0:
                    pos = _ACE_HIGH
                else:
                    break
                if low <= pos <= high:
                    if slots[pos - low] == JOKER:
                        return True
                    continue
                if pos > high:
                    first = high + 1
                    stop = pos
                else:
                    first = pos + 1
                    stop = low
                missing = 0
                gap = 0
                if stop > first:
                    gap = stop - first
                    missing = bit_count(((np.int64(1) << stop) - (np.int64(1) << first)) & ~held)
                if missing <= jokers and length + gap + 1 <= 13:
                    return True
    return False


@njit(cache=True)
def _suit_positions(held_cards, suit):
    """The run positions held in ``suit`` (the ace also at position 13), as ``table.suit_masks``."""
    mask = (held_cards >> (suit * NUM_RANKS)) & 0x1FFF
    return mask | ((mask & 1) << 13)


@njit(cache=True)
def _swappable(hand, nm, tk, tkey, tlow, tlen, ts, card):
    """Table jokers whose natural card the hand holds (or is ``card``), as ``_has_home`` counts them."""
    count = 0
    for s in range(nm):
        slots = ts[s]
        for i in range(tlen[s]):
            if slots[i] == JOKER:
                if tk[s] == SET:
                    stands_for = i * NUM_RANKS + tkey[s]
                else:
                    stands_for = tkey[s] * NUM_RANKS + (tlow[s] + i) % NUM_RANKS
                if stands_for == card or hand[stands_for]:
                    count += 1
    return count


@njit(cache=True)
def has_home(card, hand, held_cards, jokers, nm, tk, tkey, tlow, tlen, ts, in_run, lone):
    """``game._has_home``: natural ``card`` could still reach the table this turn (a necessary test)."""
    rank = card % NUM_RANKS
    held = _suit_positions(held_cards, card // NUM_RANKS)
    at_rank = held_cards >> rank
    suits = (at_rank & 1) | ((at_rank >> 12) & 2) | ((at_rank >> 24) & 4) | ((at_rank >> 36) & 8)
    if jokers > 2:
        jokers = 2
    if jokers < 2:
        jokers += _swappable(hand, nm, tk, tkey, tlow, tlen, ts, card)
        if jokers > 2:
            jokers = 2
    if _hand_home(card, suits, held, jokers, in_run, lone):
        return True
    return nm > 0 and _table_home(card, held, jokers, nm, tk, tkey, tlow, tlen, ts)


@njit(cache=True)
def few_homeless(hand, cut, nm, tk, tkey, tlow, tlen, ts, in_run, lone):
    """Step 1 of ``game._may_go_out``: at most one natural card (not the cut card) has no home."""
    jokers = hand[JOKER]
    if jokers < 2:
        jokers += _swappable(hand, nm, tk, tkey, tlow, tlen, ts, -1)
        if jokers > 2:
            jokers = 2
    if jokers >= 2:
        return True
    held_cards = held_bits(hand)
    m0 = held_cards & 0x1FFF
    m1 = (held_cards >> 13) & 0x1FFF
    m2 = (held_cards >> 26) & 0x1FFF
    m3 = (held_cards >> 39) & 0x1FFF
    homeless = 0
    for suit in range(4):
        m = (m0, m1, m2, m3)[suit]
        if jokers == 0:
            keep = ~((m0 & m1 & (m2 | m3)) | (m2 & m3 & (m0 | m1)))
            mask = m & ~in_run[m] & keep
        else:
            others = 0
            for t in range(4):
                if t != suit:
                    others |= (m0, m1, m2, m3)[t]
            mask = lone[m] & ~others
        held = m | ((m & 1) << 13)
        for rank in range(NUM_RANKS):
            if not (mask >> rank) & 1:
                continue
            card = suit * NUM_RANKS + rank
            if not (nm > 0 and _table_home(card, held, jokers, nm, tk, tkey, tlow, tlen, ts)):
                if card == cut:
                    return False
                homeless += hand[card]
                if homeless > 1:
                    return False
    return True


@njit(cache=True)
def melds_but_one(hand, nm, tk, tkey, tlow, tlen, ts, relaxed, bank, work):
    """Step 2 of ``game._may_go_out``: with every natural card that could reach a table meld
    counted as a joker, the hand melds under Indian meld rules (``bank``: the solver's ``"count"``
    rules) leaving at most one card. True also when the hand overflows the solver (no bound)."""
    jokers = hand[JOKER]
    if jokers < 2:
        jokers += _swappable(hand, nm, tk, tkey, tlow, tlen, ts, -1)
        if jokers > 2:
            jokers = 2
    for c in range(NUM_TYPES):
        relaxed[c] = hand[c]
    if nm > 0:
        held_cards = held_bits(hand)
        for card in range(JOKER):
            if hand[card] and _table_home(card, _suit_positions(held_cards, card // NUM_RANKS), jokers, nm, tk, tkey,
                                          tlow, tlen, ts):
                relaxed[JOKER] += relaxed[card]
                relaxed[card] = 0
    loose = solver.fewest_loose(relaxed, bank, 2, work)
    return loose == solver.OVERFLOW or loose <= 1


# ----------------------------------------------------------------------------- look-aheads


@njit(cache=True)
def _copy_down(d, w):
    """Position ``d`` of the search copied to ``d + 1``."""
    sh, ssc, stk, stkey, stlow, stlen, sts = w[0], w[2], w[3], w[4], w[5], w[6], w[7]
    sh[d + 1] = sh[d]
    ssc[d + 1] = ssc[d]
    nm = ssc[d, NMELDS]
    for s in range(nm):
        stk[d + 1, s] = stk[d, s]
        stkey[d + 1, s] = stkey[d, s]
        stlow[d + 1, s] = stlow[d, s]
        length = stlen[d, s]
        stlen[d + 1, s] = length
        for i in range(length):
            sts[d + 1, s, i] = sts[d, s, i]


@njit(cache=True)
def _play_down(d, k, w, tpl):
    """Play ``w``'s listed play ``k`` of position ``d`` into position ``d + 1``."""
    sh, sk, ssc, stk, stkey, stlow, stlen, sts, plays = w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8]
    _copy_down(d, w)
    action = plays[d, k]
    child = ssc[d + 1]
    child[SIZE] += apply_play(action, sh[d + 1], sk[d + 1], child, stk[d + 1], stkey[d + 1], stlow[d + 1],
                              stlen[d + 1], sts[d + 1], tpl)
    if action < ROMI_PLACE_BASE:
        child[OPEN] = 1


@njit(cache=True)
def _places(action, card, hand, tpl, tpl_mask):
    """``game._places``: the play puts ``card`` (a natural card type, or the joker) on the table."""
    if action >= ROMI_PLACE_JOKER_LOW_BASE:
        return card == JOKER
    if action >= ROMI_PLACE_BASE:
        return (action - ROMI_PLACE_BASE) % NUM_TYPES == card
    t = action - ROMI_MELD_BASE
    if card != JOKER:
        return (tpl_mask[t] >> card) & 1 == 1 and hand[card] > 0
    return bit_count(tpl_mask[t] & held_bits(hand)) < tpl[t, 3]


@njit(cache=True)
def _list_plays(d, taken, w, g):
    sh, ssc, stk, stkey, stlow, stlen, sts, plays, swaps = w[0], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9]
    sc = ssc[d]
    return gen_plays(sh[d], sc[SIZE], taken, sc[OPEN], sc[NMELDS], stk[d], stkey[d], stlow[d], stlen[d], sts[d],
                     g[0], g[1], g[4], plays[d], swaps[d])


# Columns of the search's per-position bookkeeping (the workspace's ``w[11]``): the next listed
# play to look at, how many are listed, the round, whether swaps are tried, how many plays are
# asleep (``w[15]``) and how many were tried (``w[16]``).
NEXT, COUNT, ROUND, SWAPS_OK, ASLEEP, TRIED = range(6)
FINISH, GO_OUT = 0, 1


@njit(cache=True)
def _uses(action, hand, tpl, tpl_mask):
    """``game._cards_used`` of a play that is not a swap: (the natural cards it takes from the
    hand as a bit mask, the jokers it takes, how many cards in all)."""
    if action >= ROMI_PLACE_JOKER_LOW_BASE:
        return np.int64(0), 1, 1
    if action >= ROMI_PLACE_BASE:
        card = (action - ROMI_PLACE_BASE) % NUM_TYPES
        if card == JOKER:
            return np.int64(0), 1, 1
        return np.int64(1) << card, 0, 1
    t = action - ROMI_MELD_BASE
    naturals = tpl_mask[t] & held_bits(hand)
    size = tpl[t, 3]
    return naturals, size - bit_count(naturals), size


@njit(cache=True)
def _meld_of(action):
    """The table meld a lay-off or joker placement goes onto (-1 for a new meld)."""
    if action >= ROMI_PLACE_JOKER_LOW_BASE:
        return action - ROMI_PLACE_JOKER_LOW_BASE
    if action >= ROMI_PLACE_BASE:
        return (action - ROMI_PLACE_BASE) // NUM_TYPES
    return -1


@njit(cache=True)
def _independent(p, q, hand, size, taken, tpl, tpl_mask):
    """``game._independent`` of two plays that are not swaps: both can be made, in either order,
    leaving a card to discard (``size``: the hand's size, ``taken``: the card taken this turn)."""
    if p == q:
        return False
    meld_p = _meld_of(p)
    if meld_p != -1 and meld_p == _meld_of(q):
        return False  # two cards onto one meld may change where each goes
    naturals_p, jokers_p, cards_p = _uses(p, hand, tpl, tpl_mask)
    naturals_q, jokers_q, cards_q = _uses(q, hand, tpl, tpl_mask)
    both = naturals_p & naturals_q
    while both:
        low = both & -both
        both ^= low
        if hand[bit_count(low - 1)] < 2:
            return False
    if jokers_p and jokers_q and jokers_p + jokers_q > hand[JOKER]:
        return False
    left = size - cards_p - cards_q
    if taken == -1:
        return left > 0
    if taken == JOKER:
        return left > hand[JOKER] - jokers_p - jokers_q
    return left > hand[taken] - ((naturals_p >> taken) & 1) - ((naturals_q >> taken) & 1)


@njit(cache=True)
def _asleep(d, action, w):
    """Whether play ``action`` is asleep at search position ``d``."""
    sleep = w[15][d]
    for i in range(w[11][d, ASLEEP]):
        if sleep[i] == action:
            return True
    return False


@njit(cache=True)
def _put_to_sleep(d, k, taken, w, g):
    """``_search_going_out``'s sleep sets: before play ``k`` of position ``d`` is tried, the plays
    asleep at ``d + 1`` are those asleep or already tried at ``d`` that commute with it (two
    melds do not: the table order of the new melds would differ); then ``k`` counts as tried."""
    book = w[11][d]
    child = w[11][d + 1]
    child[ASLEEP] = 0
    if w[9][d, k] == 1:
        return  # a swap commutes with nothing, and is never asleep
    play = w[8][d, k]
    hand = w[0][d]
    size = w[2][d, SIZE]
    meld = play < ROMI_PLACE_BASE
    out = w[15][d + 1]
    for source in range(2):
        ids = w[15][d] if source == 0 else w[16][d]
        count = book[ASLEEP] if source == 0 else book[TRIED]
        for i in range(count):
            q = ids[i]
            if meld and q < ROMI_PLACE_BASE:
                continue
            if _independent(play, q, hand, size, taken, g[0], g[1]):
                out[child[ASLEEP]] = q
                child[ASLEEP] += 1
    w[16][d, book[TRIED]] = play
    book[TRIED] += 1


@njit(cache=True)
def _enter(mode, d, taken, w, g):
    """Look at search position ``d``: 1 the goal is reached, 0 a dead end, -1 out of budget, 2 its
    plays are listed to try. ``mode`` FINISH: every owed card on the table (``game._can_finish``);
    GO_OUT: one card left to discard that is not the cut card ``taken`` and nothing owed
    (``game._search_going_out``)."""
    sc = w[2][d]
    hand = w[0][d]
    owes = sc[OWED] != -1 or sc[OWED_JOKERS] != 0
    if mode == FINISH:
        if not owes:
            return 1  # every play listed leaves a card that may be discarded
    elif not owes and sc[SIZE] == 1 and hand[taken] == 0:
        return 1
    budget = w[10]
    budget[0] -= 1
    if budget[0] < 0 or d + 1 >= DEPTH:
        return -1
    nm = sc[NMELDS]
    if mode == FINISH:
        owed = sc[OWED]
        if owed != -1 and not has_home(owed, hand, held_bits(hand), hand[JOKER], nm, w[3][d], w[4][d], w[5][d],
                                       w[6][d], w[7][d], g[2], g[3]):
            return 0
    elif not (few_homeless(hand, taken, nm, w[3][d], w[4][d], w[5][d], w[6][d], w[7][d], g[2], g[3])
              and melds_but_one(hand, nm, w[3][d], w[4][d], w[5][d], w[6][d], w[7][d], w[14], g[5], g[6])):
        return 0
    book = w[11][d]
    book[COUNT] = _list_plays(d, taken, w, g)
    book[NEXT] = 0
    book[ROUND] = 0 if mode == FINISH else 1
    book[TRIED] = 0
    return 2


@njit(cache=True)
def _next_play(d, w, g):
    """The next listed play of position ``d`` to try, or -1: swaps only where ``_swaps_after``
    allows them; when finishing, the plays that place an owed card first (``_can_finish``'s order)
    in round 0, the others in round 1 (going out has round 1 only, every play)."""
    book = w[11][d]
    sc = w[2][d]
    hand = w[0][d]
    finishing = w[12][0] == FINISH
    target = sc[OWED] if sc[OWED] != -1 else JOKER
    while book[ROUND] < 2:
        while book[NEXT] < book[COUNT]:
            k = book[NEXT]
            book[NEXT] = k + 1
            if w[9][d, k] == 1 and not book[SWAPS_OK]:
                continue
            if finishing and _places(w[8][d, k], target, hand, g[0], g[1]) != (book[ROUND] == 0):
                continue
            if book[ASLEEP] and _asleep(d, w[8][d, k], w):
                continue
            return k
        book[ROUND] += 1
        book[NEXT] = 0
    return -1


@njit(cache=True)
def search(mode, d0, swaps_ok, taken, w, g):
    """The look-ahead ``mode`` from position ``d0``: 1 the goal can be reached, 0 it cannot, -1 the
    budget ran out first (an explicit stack: numba cannot cache recursive functions)."""
    w[12][0] = mode
    w[11][d0, SWAPS_OK] = 1 if swaps_ok else 0
    w[11][d0, ASLEEP] = 0
    found = _enter(mode, d0, taken, w, g)
    if found != 2:
        return found
    d = d0
    while True:
        k = _next_play(d, w, g)
        if k < 0:
            if d == d0:
                return 0
            d -= 1
            continue
        if mode == GO_OUT:
            _put_to_sleep(d, k, taken, w, g)
        else:
            w[11][d + 1, ASLEEP] = 0
        _play_down(d, k, w, g[0])
        action = w[8][d, k]
        after = w[11][d, SWAPS_OK] == 1 and (w[9][d, k] == 1 or (action < ROMI_PLACE_BASE and w[2][d, OPEN] == 0))
        w[11][d + 1, SWAPS_OK] = 1 if after else 0  # ``_swaps_after``
        found = _enter(mode, d + 1, taken, w, g)
        if found == 1:
            return 1
        if found == 2:
            d += 1
        elif found < 0:
            return -1  # the budget is spent and nothing found yet: the engine decides



@njit(cache=True)
def _load_position(row, seat, s, w):
    """Row ``row``'s turn as position 0 of the search."""
    sh, ssc, stk, stkey, stlow, stlen, sts = w[0], w[2], w[3], w[4], w[5], w[6], w[7]
    sh[0] = s.hands[row, seat]
    sc = s.scalars[row]
    for c in range(NUM_SCALARS):
        ssc[0, c] = sc[c]
    ssc[0, SIZE] = s.sizes[row, seat]
    ssc[0, OPEN] = s.opened[row, seat]
    tk, tkey, tlow, tlen, ts = s.table_kind[row], s.table_key[row], s.table_low[row], s.table_len[row], \
        s.table_slots[row]
    for m in range(sc[NMELDS]):
        stk[0, m] = tk[m]
        stkey[0, m] = tkey[m]
        stlow[0, m] = tlow[m]
        length = tlen[m]
        stlen[0, m] = length
        for i in range(length):
            sts[0, m, i] = ts[m, i]


# ----------------------------------------------------------------------------- rows


@njit(cache=True)
def _write_mask(row, seat, s, w, g):
    """The row's legal actions (``GameState._compute_legal``) into its mask; True when a look-ahead
    ran out of budget and the engine must write the mask."""
    sc = s.scalars[row]
    mask = s.action_masks[row]
    budget = w[10]
    mask[:] = 0
    unknown = False
    hand = s.hands[row, seat]
    nm = sc[NMELDS]
    if sc[PHASE] == PHASE_DRAW:
        mask[DRAW_ACTION] = 1
        if sc[PILE_LEN]:
            if s.turns_taken[row, seat] == 0:
                mask[TAKE_DISCARD_ACTION] = 1  # R4: free on one's first turn
            else:  # R4: only if this turn's plays can put it on the table
                top = np.int64(s.pile[row, sc[PILE_LEN] - 1])
                if top == JOKER or has_home(top, hand, held_bits(hand) | (np.int64(1) << top), hand[JOKER], nm,
                                            s.table_kind[row], s.table_key[row], s.table_low[row], s.table_len[row],
                                            s.table_slots[row], g[2], g[3]):
                    _load_position(row, seat, s, w)
                    start = w[2][0]
                    w[0][0, top] += 1
                    start[SIZE] += 1
                    if top == JOKER:
                        start[OWED_JOKERS] += 1
                    else:
                        start[OWED] = top
                    budget[0] = w[13][0]
                    found = search(FINISH, 0, True, top, w, g)
                    if found == 1:
                        mask[TAKE_DISCARD_ACTION] = 1
                    elif found < 0:
                        unknown = True
        cut = sc[SHOWN]
        if cut != -1:  # R4: the cut card only to go out
            _load_position(row, seat, s, w)
            w[0][0, cut] += 1
            w[2][0, SIZE] += 1
            budget[0] = w[13][0]
            found = search(GO_OUT, 0, True, cut, w, g)
            if found == 1:
                mask[ROMI_TAKE_CUT_ACTION] = 1
            elif found < 0:
                unknown = True
        return unknown
    _load_position(row, seat, s, w)
    taken = sc[TAKEN]
    count = _list_plays(0, taken, w, g)
    owes = sc[OWED] != -1 or sc[OWED_JOKERS] != 0
    for k in range(count):
        action = w[8][0, k]
        if not owes and w[9][0, k] == 0:
            mask[action] = 1
            continue
        _play_down(0, k, w, g[0])  # ``GameState._plays``: the look-ahead after it
        budget[0] = w[13][0]
        found = search(FINISH, 1, True, taken, w, g)
        if found == 1:
            mask[action] = 1
        elif found < 0:
            unknown = True
    if not owes:  # R4, R5: the turn cannot end while a card owed to the table is in hand
        skeleton.discard_mask(mask, hand, taken)
    return unknown


@njit(cache=True)
def _write_row(row, s, w, g):
    """The row's observation and mask for its seat to act; ``ASK_PYTHON`` when the engine must
    write the mask."""
    seat = table.observe_row(row, s)
    return ASK_PYTHON if _write_mask(row, seat, s, w, g) else GOES_ON


@njit(cache=True)
def write_rows(rows, s, w, g):
    """Write the observation, mask and status of ``rows`` afresh (after a deal or a load)."""
    for k in range(rows.shape[0]):
        s.status[rows[k]] = _write_row(rows[k], s, w, g)


@njit(cache=True)
def step_rows(rows, actions, s, w, g):
    """Play ``actions[k]`` (allowed by its row's mask) in row ``rows[k]``; write the row's ``status``."""
    for k in range(rows.shape[0]):
        row = rows[k]
        a = actions[k]
        done = skeleton.turn_step(row, a, s)
        if done == GAME_MOVE and a == ROMI_TAKE_CUT_ACTION:  # R4: takes the cut card and goes out
            skeleton.win(row, s.scalars[row, CURRENT], s)  # (the payments, R7, read only the others)
            done = ENDED
        elif done == GAME_MOVE:  # a meld, lay-off or joker swap (R5)
            if a < ROMI_PLACE_BASE:
                table.meld_row(row, a - ROMI_MELD_BASE, s, g[0])
            elif a < ROMI_PLACE_JOKER_LOW_BASE:
                meld, card = divmod(a - ROMI_PLACE_BASE, NUM_TYPES)
                table.place_row(row, meld, card, False, s)
            else:
                table.place_row(row, a - ROMI_PLACE_JOKER_LOW_BASE, JOKER, True, s)
            done = GOES_ON
        s.status[row] = ENDED if done == ENDED else _write_row(row, s, w, g)


# ----------------------------------------------------------------------------- the batch


def new_workspace(budget: int = SEARCH_BUDGET) -> tuple:
    """The search's scratch arrays: per position the hand, known cards (unused), scalars and table,
    the plays listed there and which are swaps; the node budget; per position the bookkeeping of
    the plays tried (``NEXT`` …); the search's mode; the budget of each look-ahead; a hand for the
    solver (``melds_but_one``); per position the plays asleep and the plays tried (sleep sets)."""
    return (np.zeros((DEPTH, NUM_TYPES), np.int8), np.zeros((DEPTH, NUM_TYPES), np.int8),
            np.zeros((DEPTH, SEARCH_SCALARS), np.int64), np.zeros((DEPTH, MAX_MELDS), np.int8),
            np.zeros((DEPTH, MAX_MELDS), np.int8), np.zeros((DEPTH, MAX_MELDS), np.int8),
            np.zeros((DEPTH, MAX_MELDS), np.int8), np.zeros((DEPTH, MAX_MELDS, MAX_SLOTS), np.int8),
            np.zeros((DEPTH, MAX_PLAYS), np.int64), np.zeros((DEPTH, MAX_PLAYS), np.int8), np.zeros(1, np.int64),
            np.zeros((DEPTH, 6), np.int64), np.zeros(1, np.int64), np.array([budget], np.int64),
            np.zeros(NUM_TYPES, np.uint8), np.zeros((DEPTH, MAX_PLAYS), np.int64),
            np.zeros((DEPTH, MAX_PLAYS), np.int64))


GAME_TABLES = (TEMPLATES, TEMPLATE_MASKS, IN_RUN, LONE, RUN_IDS)
"""What the kernels read of the game: the templates, their card masks, the solver's mask facts,
the run templates by suit, low position and length (``RomiCore`` adds the solver's ``"count"``
rules and its workspace)."""


class RomiCore(table.TableCore):
    """The arrays of ``num_envs`` römi hands and the kernels that step them."""

    _step_rows = staticmethod(step_rows)
    _write_rows = staticmethod(write_rows)

    def __init__(self, *args, **kwargs):
        self.workspace = new_workspace()
        self.tables = (self.workspace, GAME_TABLES + (solver.rules("count", None).bank, solver.workspace().buffer))
        self.engine_masks = 0
        """Masks written by the Python engine because a look-ahead ran out of budget (a count)."""
        super().__init__(*args, **kwargs)

    @staticmethod
    def _check_rules(rules: RuleSet) -> None:
        if rules.spec is not SPEC:
            raise ValueError(f"RomiCore plays {SPEC.title}, not {rules.game!r}: use backend='python'")
        if rules.ace_high is not True or rules.max_jokers != 2 or rules.printed_jokers != 2 or rules.decks != 2:
            raise ValueError("RomiCore expects römi's meld rules (R1, R3): two decks, two jokers, ace high, "
                             "at most 2 jokers a meld")

    @property
    def search_budget(self) -> int:
        """Positions one look-ahead may visit before the row's mask is left to the engine."""
        return int(self.workspace[13][0])

    @search_budget.setter
    def search_budget(self, positions: int) -> None:
        if positions < 1:
            raise ValueError(f"search_budget={positions!r}: expected an int >= 1")
        self.workspace[13][0] = positions

    def _ask_python(self, rows: np.ndarray) -> None:
        """The masks of ``rows`` from the Python engine's ``legal_moves()`` (a look-ahead ran out of budget)."""
        ids = move_ids("romi")
        for row in rows.tolist():
            self.engine_masks += 1
            state = GameState.from_dict(self.state_dict(row, 0, None))
            mask = self.action_masks[row]
            mask[:] = 0
            for move in state.legal_moves():
                mask[ids[move]] = 1
