"""Indiai römi (R1–R8, G1–G10) for many hands at once, in numba: the römi core behind
``VectorGame("romi", backend="numba")``.

Design: a hybrid, chosen so that every answer is the Python engine's (``rummy_env.game``, the
reference) and almost every step stays compiled.

* **State as arrays.** Each hand is a row: hands, known cards, discards, stock and pile as in
  ``rummy_env.compiled.indian``; the table as per-slot arrays (kind, key, low, length and up to
  14 physical cards, the engine's ``[kind, key, low, slots]``); the turn's ``taken``, the owed
  card and owed jokers (R4, R5), who has opened (R5, R7) and has laid. Deals and the stock's
  rebuild replay CPython's shuffles (``compiled.mt19937``): the cut card (R2) is popped first,
  then the hands, then the discard top.
* **Plays** (R5) are generated from an array of the 373 meld templates (``melds.meld_templates``)
  and the table slots with the rules of ``GameState._table_plays`` (the lay-off and joker-swap
  placements of ``table.meld_placements``, the joker at either open end of a run as two moves, G7
  and R6 on what must be left); applying one is ``_apply_meld`` / ``table.place_card`` on the
  arrays, with the owed-card bookkeeping of ``GameState._remove``.
* **Look-aheads** (R4, R5) decide whether an owed card can still reach the table (taking the
  discard top after the first turn, every play while something is owed, every joker swap) and
  whether a player can go out with the cut card (R4). They are exact depth-first searches over
  those plays, pruned only by the engine's own necessary tests (``_has_home`` for an owed card,
  step 1 of ``_may_go_out`` when going out) and by its lossless rule of trying swaps only first
  (``_swaps_after``). Their answers are existence answers, so the search order does not matter.
  Each search has a node budget; a row whose search runs out of it is marked, and
  ``RomiCore.step`` writes that row's mask from the Python engine's ``legal_moves()`` on a
  ``GameState`` rebuilt from the arrays (rare: ``tests/test_vector_compiled_romi.py`` counts it).
* **Going out with the cut card** ends the hand: the plays the engine would find change only the
  table and the winner's hand, and the payments (R7) read only the other hands and whether the
  others have opened, so the kernel ends the hand without choosing the plays.
* **Observations** are ``ObservationEncoder.encode``'s, written whole for the seat to act.

``tests/test_vector_compiled_romi.py`` steps this core and the Python engine in lockstep;
``benchmarks/lockstep_vector.py --games romi`` runs the long form.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_TYPES
from ..encoding import (
    DISCARD_BASE, ROMI_MELD_BASE, ROMI_NUM_ACTIONS, ROMI_PLACE_BASE, ROMI_PLACE_JOKER_LOW_BASE, ROMI_TAKE_CUT_ACTION,
    discard_cap, layout_for,
)
from ..game import PHASE_DRAW, PHASE_OVER, PHASE_PLAY, GameState, HandResult
from ..melds import RUN, SET, meld_templates
from ..obs_spec import MAX_TABLE_MELDS
from ..ruleset import RuleSet
from . import mt19937
from .indian import IN_RUN, LONE

# Columns of the per-row scalars (``RomiCore.scalars``); the search keeps two more (SIZE, OPEN).
CURRENT, PHASE, TURN, TAKEN, REBUILDS, FIRST, CUT, STOCK_LEN, PILE_LEN, HISTORY_LEN, OUTCOME, WINNER, KEY_LEN, \
    NMELDS, OWED, OWED_JOKERS, LAID = range(17)
NUM_SCALARS = 17
SIZE, OPEN = 17, 18
SEARCH_SCALARS = 19

# ``OUTCOME``: how the row's hand ended (0 while it runs).
PLAYING, OUT, STALEMATE, CUT_OFF = range(4)
OUTCOME_NAMES = (None, "out", "stalemate", "cut_off")

# ``status`` after a step: the row goes on, needs the Python engine for its mask, or ended.
GOES_ON, ASK_ENGINE, ENDED = range(3)

# Entries of the layout array the kernels read (offsets in the observation, then rule numbers).
(L_HAND, L_TOP, L_REST, L_TAKEN, L_MUST, L_CUT, L_TABLE_CARDS, L_TABLE_MELDS, L_KNOWN, L_DISCARDED, L_PHASE,
 L_TO_ACT, L_STOCK, L_REBUILT, L_SIZES, L_OPENED, L_MATCH, L_TURN, L_PLAYERS, L_CAP, L_MAX_TURNS, L_DECK,
 L_HAND_SIZE, L_MATCH_MODE, L_HISTORY) = range(25)
_PLANES = ((L_HAND, "hand"), (L_TOP, "discard_top"), (L_REST, "discard_rest"), (L_TAKEN, "just_taken"),
           (L_MUST, "must_place"), (L_CUT, "cut_card"), (L_TABLE_CARDS, "table_cards"),
           (L_TABLE_MELDS, "table_melds"), (L_KNOWN, "known"), (L_DISCARDED, "discarded"), (L_PHASE, "phase"),
           (L_TO_ACT, "to_act"), (L_STOCK, "stock_size"), (L_REBUILT, "stock_rebuilt"), (L_SIZES, "hand_sizes"),
           (L_OPENED, "opened"), (L_MATCH, "match_scores"), (L_TURN, "turn"))

MAX_MELDS = MAX_TABLE_MELDS["romi"]  # 35
MAX_SLOTS = 14  # a run of 13 cards, and room to shift it while a card goes in
DEPTH = 40  # plays in one look-ahead: each puts a card on the table, so a turn has fewer
MAX_PLAYS = 1024  # plays listed at one position: 373 templates and under 8 per table meld
SEARCH_BUDGET = 4000
"""Positions one look-ahead may visit before its row is handed to the Python engine (the default
of ``RomiCore.search_budget``)."""

_DRAW_ACTION = 0
_TAKE_ACTION = 1
_ACE_HIGH = 13  # the run position of a high ace (R3)


def _template_arrays() -> tuple[np.ndarray, np.ndarray]:
    """The römi meld templates as rows (kind, key, low, size, card 0 … card 13) and card-type masks."""
    templates = meld_templates(True)
    rows = np.full((len(templates), 4 + MAX_SLOTS), -1, np.int64)
    masks = np.zeros(len(templates), np.int64)
    for t, template in enumerate(templates):
        rows[t, :4] = template.kind, template.key, template.low, len(template.cards)
        rows[t, 4:4 + len(template.cards)] = template.cards
        for card in template.cards:
            masks[t] |= 1 << card
    return rows, masks


TEMPLATES, TEMPLATE_MASKS = _template_arrays()
SETS_PER_RANK = 5  # four sets of three suits, one of four: the templates 5 r … 5 r + 4 hold rank r


def _run_ids() -> np.ndarray:
    """Template id of the run of each (suit, lowest position, length); -1 where there is none."""
    ids = np.full((4, MAX_SLOTS, MAX_SLOTS + 1), -1, np.int64)
    for t, (kind, key, low, size) in enumerate(TEMPLATES[:, :4].tolist()):
        if kind == RUN:
            ids[key, low, size] = t
        elif t // SETS_PER_RANK != key:
            raise ImportError("rummy_env.compiled.romi expects the sets of each rank together, ranks in order")
    return ids


RUN_IDS = _run_ids()

if (DISCARD_BASE, ROMI_TAKE_CUT_ACTION, ROMI_MELD_BASE, ROMI_PLACE_BASE, ROMI_PLACE_JOKER_LOW_BASE, ROMI_NUM_ACTIONS,
        JOKER, NUM_TYPES, len(TEMPLATES), MAX_MELDS) != (2, 55, 56, 429, 2284, 2319, 52, 53, 373, 35):
    raise ImportError("rummy_env.compiled.romi expects the römi action ids of rummy_env.encoding")
if (PHASE_DRAW, PHASE_PLAY, PHASE_OVER, SET, RUN) != (0, 1, 2, 0, 1):
    raise ImportError("rummy_env.compiled.romi expects the engine's phases 0, 1, 2 and meld kinds SET 0, RUN 1")


# ----------------------------------------------------------------------------- plays


@njit(cache=True)
def _bits(x):
    """The set bits of ``x`` (0 <= x < 2**62), counted without a loop."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    x += x >> 8
    x += x >> 16
    x += x >> 32
    return x & 0x7F


@njit(cache=True)
def _held(hand):
    """Bit c for each natural card type c held (``table.held_bits``)."""
    held = 0
    for c in range(NUM_NATURAL):
        if hand[c]:
            held |= np.int64(1) << c
    return held


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
    held = _held(hand)
    count = 0
    for rank in range(NUM_RANKS):
        at_rank = held >> rank
        suits = (at_rank & 1) + ((at_rank >> 13) & 1) + ((at_rank >> 26) & 1) + ((at_rank >> 39) & 1)
        if suits == 0 or suits + jokers < 3:
            continue
        for t in range(SETS_PER_RANK * rank, SETS_PER_RANK * rank + SETS_PER_RANK):
            naturals = _bits(tpl_mask[t] & held)
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
def _take(card, hand, known, sc):
    """``GameState._remove``: one ``card`` leaves the hand, settling an owed card or joker."""
    hand[card] -= 1
    if known[card]:
        known[card] -= 1
    if card == sc[OWED]:
        sc[OWED] = -1
    elif card == JOKER and sc[OWED_JOKERS]:
        sc[OWED_JOKERS] -= 1


@njit(cache=True)
def apply_play(action, hand, known, sc, tk, tkey, tlow, tlen, ts, tpl):
    """A meld, lay-off or swap (an action id) on the arrays; the change in hand size."""
    if action < ROMI_PLACE_BASE:  # ``_apply_meld``: naturals where held, jokers in the gaps
        t = action - ROMI_MELD_BASE
        kind = tpl[t, 0]
        tsize = tpl[t, 3]
        s = sc[NMELDS]
        sc[NMELDS] = s + 1
        tk[s] = kind
        tkey[s] = tpl[t, 1]
        tlow[s] = tpl[t, 2]
        if kind == SET:
            tlen[s] = 4
            for suit in range(4):
                ts[s, suit] = -1
        else:
            tlen[s] = tsize
        for i in range(tsize):
            card = tpl[t, 4 + i]
            physical = card if hand[card] else JOKER
            _take(physical, hand, known, sc)
            if kind == SET:
                ts[s, card // NUM_RANKS] = physical
            else:
                ts[s, i] = physical
        sc[LAID] = 1
        return -tsize
    if action < ROMI_PLACE_JOKER_LOW_BASE:
        s = (action - ROMI_PLACE_BASE) // NUM_TYPES
        card = (action - ROMI_PLACE_BASE) % NUM_TYPES
        low_end = False
    else:
        s = action - ROMI_PLACE_JOKER_LOW_BASE
        card = JOKER
        low_end = True
    _take(card, hand, known, sc)
    sc[LAID] = 1
    slots = ts[s]
    key = tkey[s]
    if tk[s] == RUN:  # ``table.place_card``
        low = tlow[s]
        length = tlen[s]
        if card != JOKER:
            for i in range(length):
                if slots[i] == JOKER and key * NUM_RANKS + (low + i) % NUM_RANKS == card:
                    slots[i] = card
                    hand[JOKER] += 1
                    known[JOKER] += 1
                    sc[OWED_JOKERS] += 1  # R5: the joker goes back on the table this turn
                    return 0
            low_end = low > 0 and card == key * NUM_RANKS + low - 1
        if low_end:
            for i in range(length, 0, -1):
                slots[i] = slots[i - 1]
            slots[0] = card
            tlow[s] = low - 1
        else:
            slots[length] = card
        tlen[s] = length + 1
        return -1
    if card == JOKER:
        for suit in range(4):
            if slots[suit] == -1:
                slots[suit] = JOKER
                break
        return -1
    suit = card // NUM_RANKS
    back = slots[suit] == JOKER
    slots[suit] = card
    if back:
        hand[JOKER] += 1
        known[JOKER] += 1
        sc[OWED_JOKERS] += 1
        return 0
    return -1


# ----------------------------------------------------------------------------- quick tests


@njit(cache=True)
def _hand_home(card, suits, held, jokers, in_run, lone):
    """``game._hand_home``: ``card`` could meld with other held cards and ``jokers`` jokers."""
    if jokers >= 2:
        return True
    rank = card % NUM_RANKS
    if _bits(suits & ~(1 << (card // NUM_RANKS))) + jokers >= 2:
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
                    missing = _bits(((np.int64(1) << stop) - (np.int64(1) << first)) & ~held)
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
    held_cards = _held(hand)
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


# ----------------------------------------------------------------------------- look-aheads


@njit(cache=True)
def _copy_down(d, w):
    """Position ``d`` of the search copied to ``d + 1``."""
    sh, sk, ssc, stk, stkey, stlow, stlen, sts = w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
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
    return _bits(tpl_mask[t] & _held(hand)) < tpl[t, 3]


@njit(cache=True)
def _list_plays(d, taken, w, g):
    sh, ssc, stk, stkey, stlow, stlen, sts, plays, swaps = w[0], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9]
    sc = ssc[d]
    return gen_plays(sh[d], sc[SIZE], taken, sc[OPEN], sc[NMELDS], stk[d], stkey[d], stlow[d], stlen[d], sts[d],
                     g[0], g[1], g[4], plays[d], swaps[d])


# Columns of the search's per-position bookkeeping (the workspace's ``w[11]``).
NEXT, COUNT, ROUND, SWAPS_OK = range(4)
FINISH, GO_OUT = 0, 1


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
        if owed != -1 and not has_home(owed, hand, _held(hand), hand[JOKER], nm, w[3][d], w[4][d], w[5][d],
                                       w[6][d], w[7][d], g[2], g[3]):
            return 0
    elif not few_homeless(hand, taken, nm, w[3][d], w[4][d], w[5][d], w[6][d], w[7][d], g[2], g[3]):
        return 0
    book = w[11][d]
    book[COUNT] = _list_plays(d, taken, w, g)
    book[NEXT] = 0
    book[ROUND] = 0 if mode == FINISH else 1
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
def _load_position(row, seat, hands, sizes, scalars, opened, tk, tkey, tlow, tlen, ts, w):
    """Row ``row``'s turn as position 0 of the search."""
    sh, ssc, stk, stkey, stlow, stlen, sts = w[0], w[2], w[3], w[4], w[5], w[6], w[7]
    sh[0] = hands[row, seat]
    sc = scalars[row]
    for c in range(NUM_SCALARS):
        ssc[0, c] = sc[c]
    ssc[0, SIZE] = sizes[row, seat]
    ssc[0, OPEN] = opened[row, seat]
    nm = sc[NMELDS]
    for s in range(nm):
        stk[0, s] = tk[row, s]
        stkey[0, s] = tkey[row, s]
        stlow[0, s] = tlow[row, s]
        length = tlen[row, s]
        stlen[0, s] = length
        for i in range(length):
            sts[0, s, i] = ts[row, s, i]


# ----------------------------------------------------------------------------- rows


@njit(cache=True)
def write_observation(out, row, seat, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars,
                      totals, opened, tk, tkey, tlow, tlen, ts):
    """``ObservationEncoder.encode`` of ``seat`` in row ``row`` into ``out`` (float32, zeroed here)."""
    n = lay[L_PLAYERS]
    sc = scalars[row]
    out[:] = 0.0
    hand = hands[row, seat]
    at = lay[L_HAND]
    for c in range(NUM_TYPES):
        out[at + c] = hand[c]
    pile_len = sc[PILE_LEN]
    if pile_len:
        out[lay[L_TOP] + pile[row, pile_len - 1]] = 1.0
    at = lay[L_REST]
    for c in range(NUM_TYPES):
        out[at + c] = rest[row, c]
    if sc[TAKEN] != -1:
        out[lay[L_TAKEN] + sc[TAKEN]] = 1.0
    if lay[L_MUST] >= 0:  # a game without owed cards (Basic) has no ``must_place`` plane
        if sc[OWED] != -1:
            out[lay[L_MUST] + sc[OWED]] = 1.0
        out[lay[L_MUST] + JOKER] = sc[OWED_JOKERS]
    if sc[CUT] != -1:
        out[lay[L_CUT] + sc[CUT]] = 1.0
    cards_at = lay[L_TABLE_CARDS]
    for s in range(sc[NMELDS]):
        at = lay[L_TABLE_MELDS] + NUM_TYPES * s
        key = tkey[row, s]
        jokers = 0
        for i in range(tlen[row, s]):
            card = ts[row, s, i]
            if card == -1:
                continue
            if tk[row, s] == SET:
                stands_for = i * NUM_RANKS + key
            else:
                stands_for = key * NUM_RANKS + (tlow[row, s] + i) % NUM_RANKS
            out[cards_at + card] += 1.0
            if card == JOKER:
                jokers += 1
                out[at + stands_for] = -1.0
            else:
                out[at + stands_for] = 1.0
        out[at + JOKER] = jokers
    cap = lay[L_CAP]
    size_scale = scales[1]
    for r in range(n):
        p = seat + r
        if p >= n:
            p -= n
        at = lay[L_KNOWN] + NUM_TYPES * r
        for c in range(NUM_TYPES):
            out[at + c] = known[row, p, c]
        at = lay[L_DISCARDED] + NUM_TYPES * r
        for c in range(NUM_TYPES):
            d = discarded[row, p, c]
            out[at + c] = d if d < cap else cap
        out[lay[L_SIZES] + r] = np.float32(sizes[row, p]) * size_scale
        out[lay[L_OPENED] + r] = opened[row, p]
        if lay[L_MATCH_MODE]:
            score = totals[row, p] * inv_target
            out[lay[L_MATCH] + r] = np.float32(score if score < 2.0 else 2.0)
    phase = sc[PHASE]
    if phase < 2:
        out[lay[L_PHASE] + phase] = 1.0
    relative = sc[CURRENT] - seat
    if relative < 0:
        relative += n
    out[lay[L_TO_ACT] + relative] = 1.0
    out[lay[L_STOCK]] = np.float32(sc[STOCK_LEN]) * scales[0]
    if sc[REBUILDS]:
        out[lay[L_REBUILT]] = 1.0
    turns = sc[TURN] * 127 // lay[L_MAX_TURNS]
    out[lay[L_TURN]] = np.float32(turns if turns < 127 else 127) * scales[2]


@njit(cache=True)
def _write_mask(row, mask, hands, sizes, pile, scalars, turns_taken, opened, tk, tkey, tlow, tlen, ts, w, g):
    """The row's legal actions (``GameState._compute_legal``) into ``mask``; True when a look-ahead
    ran out of budget and the engine must write the mask."""
    sc = scalars[row]
    seat = sc[CURRENT]
    budget = w[10]
    mask[:] = 0
    unknown = False
    hand = hands[row, seat]
    nm = sc[NMELDS]
    if sc[PHASE] == PHASE_DRAW:
        mask[_DRAW_ACTION] = 1
        if sc[PILE_LEN]:
            if turns_taken[row, seat] == 0:
                mask[_TAKE_ACTION] = 1  # R4: free on one's first turn
            else:  # R4: only if this turn's plays can put it on the table
                top = np.int64(pile[row, sc[PILE_LEN] - 1])
                if top == JOKER or has_home(top, hand, _held(hand) | (np.int64(1) << top), hand[JOKER], nm, tk[row],
                                            tkey[row], tlow[row], tlen[row], ts[row], g[2], g[3]):
                    _load_position(row, seat, hands, sizes, scalars, opened, tk, tkey, tlow, tlen, ts, w)
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
                        mask[_TAKE_ACTION] = 1
                    elif found < 0:
                        unknown = True
        cut = sc[CUT]
        if cut != -1:  # R4: the cut card only to go out
            _load_position(row, seat, hands, sizes, scalars, opened, tk, tkey, tlow, tlen, ts, w)
            w[0][0, cut] += 1
            w[2][0, SIZE] += 1
            budget[0] = w[13][0]
            found = search(GO_OUT, 0, True, cut, w, g)
            if found == 1:
                mask[ROMI_TAKE_CUT_ACTION] = 1
            elif found < 0:
                unknown = True
        return unknown
    _load_position(row, seat, hands, sizes, scalars, opened, tk, tkey, tlow, tlen, ts, w)
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
        for c in range(NUM_TYPES):
            if hand[c]:
                mask[DISCARD_BASE + c] = 1
        if taken != -1:
            mask[DISCARD_BASE + taken] = 0  # G7
    return unknown


@njit(cache=True)
def _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals,
               turns_taken, opened, tk, tkey, tlow, tlen, ts, observations, masks, to_act, w, g):
    """The row's observation and mask for its seat to act; True when the engine must write the mask."""
    seat = scalars[row, CURRENT]
    write_observation(observations[row], row, seat, lay, scales, inv_target, hands, known, discarded, sizes, pile,
                      rest, scalars, totals, opened, tk, tkey, tlow, tlen, ts)
    to_act[row] = seat
    return _write_mask(row, masks[row], hands, sizes, pile, scalars, turns_taken, opened, tk, tkey, tlow, tlen, ts,
                       w, g)


@njit(cache=True)
def check_actions(rows, actions, masks, num_actions):
    """The first ``k`` whose action is out of range (code 1) or forbidden by its row's mask (code 2),
    as ``k * 4 + code``; -1 when every action is allowed."""
    for k in range(actions.shape[0]):
        a = actions[k]
        if a < 0 or a >= num_actions:
            return k * 4 + 1
        if not masks[rows[k], a]:
            return k * 4 + 2
    return -1


@njit(cache=True)
def _end_turn(row, seat, lay, stock, pile, rest, scalars, turns_taken, has_laid, keys, rng):
    """``GameState._end_turn``: the next seat draws; the stock's rebuild or a stalemate (G8), the cap (G9).
    True when the hand ended."""
    n = lay[L_PLAYERS]
    sc = scalars[row]
    turns_taken[row, seat] += 1
    if sc[LAID]:
        has_laid[row, seat] = 1
    sc[LAID] = 0
    sc[TAKEN] = -1
    sc[OWED] = -1
    sc[OWED_JOKERS] = 0
    sc[TURN] += 1
    sc[CURRENT] = seat + 1 if seat + 1 < n else 0
    sc[PHASE] = PHASE_DRAW
    if sc[STOCK_LEN] == 0:  # G8
        length = sc[PILE_LEN]
        if sc[REBUILDS] == 0 and length > 1:
            sc[REBUILDS] = 1
            for k in range(length - 1):
                stock[row, k] = pile[row, k]
            pile[row, 0] = pile[row, length - 1]
            sc[PILE_LEN] = 1
            sc[STOCK_LEN] = length - 1
            rest[row, :] = 0
            mt19937.seed_state(rng, keys[row], sc[KEY_LEN])
            mt19937.shuffle(rng, stock[row], length - 1)
        else:
            sc[OUTCOME] = STALEMATE
            sc[PHASE] = PHASE_OVER
            return True
    if sc[TURN] >= lay[L_MAX_TURNS]:  # G9
        sc[OUTCOME] = CUT_OFF
        sc[PHASE] = PHASE_OVER
        return True
    return False


@njit(cache=True)
def step_rows(rows, actions, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars,
              totals, turns_taken, opened, has_laid, tk, tkey, tlow, tlen, ts, keys, history, rng, observations, masks,
              to_act, status, w, g):
    """Play ``actions[k]`` (allowed by its row's mask) in row ``rows[k]``; write the row's ``status``."""
    for k in range(rows.shape[0]):
        row = rows[k]
        a = actions[k]
        sc = scalars[row]
        seat = sc[CURRENT]
        if sc[HISTORY_LEN] < lay[L_HISTORY]:
            history[row, sc[HISTORY_LEN]] = a
        sc[HISTORY_LEN] += 1
        ended = False
        if a == _DRAW_ACTION:
            length = sc[STOCK_LEN] - 1
            card = stock[row, length]
            sc[STOCK_LEN] = length
            hands[row, seat, card] += 1
            sizes[row, seat] += 1
            sc[PHASE] = PHASE_PLAY
        elif a == _TAKE_ACTION:
            length = sc[PILE_LEN] - 1
            card = pile[row, length]
            sc[PILE_LEN] = length
            if length:
                rest[row, pile[row, length - 1]] -= 1  # the card under it is the top now
            hands[row, seat, card] += 1
            known[row, seat, card] += 1
            sizes[row, seat] += 1
            sc[TAKEN] = card
            if turns_taken[row, seat] > 0:  # R4: it must reach the table this turn
                if card == JOKER:
                    sc[OWED_JOKERS] += 1
                else:
                    sc[OWED] = card
            sc[PHASE] = PHASE_PLAY
        elif a == ROMI_TAKE_CUT_ACTION:  # R4: takes the cut card and goes out (R7 reads only the others)
            sc[OUTCOME] = OUT
            sc[WINNER] = seat
            sc[PHASE] = PHASE_OVER
            ended = True
        elif a < ROMI_TAKE_CUT_ACTION:  # a discard ends the turn (R6)
            card = a - DISCARD_BASE
            _take(card, hands[row, seat], known[row, seat], sc)
            sizes[row, seat] -= 1
            length = sc[PILE_LEN]
            if length:
                rest[row, pile[row, length - 1]] += 1  # the old top joins the cards under it
            pile[row, length] = card
            sc[PILE_LEN] = length + 1
            discarded[row, seat, card] += 1
            if sizes[row, seat] == 0:  # R6: out by the last discard
                sc[OUTCOME] = OUT
                sc[WINNER] = seat
                sc[PHASE] = PHASE_OVER
                ended = True
            else:
                ended = _end_turn(row, seat, lay, stock, pile, rest, scalars, turns_taken, has_laid, keys, rng)
        else:
            sizes[row, seat] += apply_play(a, hands[row, seat], known[row, seat], sc, tk[row], tkey[row], tlow[row],
                                           tlen[row], ts[row], g[0])
            if a < ROMI_PLACE_BASE:
                opened[row, seat] = 1
        if ended:
            status[row] = ENDED
        elif _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals,
                        turns_taken, opened, tk, tkey, tlow, tlen, ts, observations, masks, to_act, w, g):
            status[row] = ASK_ENGINE
        else:
            status[row] = GOES_ON


@njit(cache=True)
def refresh_rows(rows, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals,
                 turns_taken, opened, tk, tkey, tlow, tlen, ts, observations, masks, to_act, status, w, g):
    """Write the observation and mask of ``rows`` afresh (after a hand was copied in); their ``status``."""
    for k in range(rows.shape[0]):
        row = rows[k]
        if _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals,
                      turns_taken, opened, tk, tkey, tlow, tlen, ts, observations, masks, to_act, w, g):
            status[row] = ASK_ENGINE
        else:
            status[row] = GOES_ON


@njit(cache=True)
def deal_rows(rows, deal_keys, deal_key_lens, rebuild_keys, rebuild_key_lens, firsts, lay, scales, inv_target, hands,
              known, discarded, sizes, stock, pile, rest, scalars, totals, turns_taken, opened, has_laid, keys, rng,
              status):
    """A new hand in each of ``rows`` (``GameState.__init__``: the cut card first, R2); no row written."""
    n = lay[L_PLAYERS]
    deck_size = lay[L_DECK]
    hand_size = lay[L_HAND_SIZE]
    for k in range(rows.shape[0]):
        row = rows[k]
        sc = scalars[row]
        deck = stock[row]
        at = 0
        for c in range(NUM_NATURAL):  # two decks (R1): each natural card twice, then the printed jokers
            for _ in range(2):
                deck[at] = c
                at += 1
        while at < deck_size:
            deck[at] = JOKER
            at += 1
        mt19937.seed_state(rng, deal_keys[k], deal_key_lens[k])
        mt19937.shuffle(rng, deck, deck_size)
        hands[row] = 0
        known[row] = 0
        discarded[row] = 0
        rest[row] = 0
        turns_taken[row] = 0
        opened[row] = 0
        has_laid[row] = 0
        top = deck_size - 1
        sc[CUT] = deck[top]  # R2: turned before the deal
        first = firsts[k]
        for _ in range(hand_size):
            for i in range(n):
                p = first + i
                if p >= n:
                    p -= n
                top -= 1
                hands[row, p, deck[top]] += 1
        for p in range(n):
            sizes[row, p] = hand_size
        top -= 1
        pile[row, 0] = deck[top]
        sc[PILE_LEN] = 1
        sc[STOCK_LEN] = top
        sc[CURRENT] = first
        sc[FIRST] = first
        sc[PHASE] = PHASE_DRAW
        sc[TURN] = 0
        sc[TAKEN] = -1
        sc[REBUILDS] = 0
        sc[HISTORY_LEN] = 0
        sc[OUTCOME] = PLAYING
        sc[WINNER] = -1
        sc[NMELDS] = 0
        sc[OWED] = -1
        sc[OWED_JOKERS] = 0
        sc[LAID] = 0
        length = rebuild_key_lens[k]
        keys[row, :length] = rebuild_keys[k, :length]
        sc[KEY_LEN] = length


# ----------------------------------------------------------------------------- the batch


HISTORY_LIMIT = 1 << 13
"""Moves of a hand kept for ``RomiCore.state_dict`` (hands longer than this have no state)."""


def new_workspace(budget: int = SEARCH_BUDGET) -> tuple:
    """The search's scratch arrays: per position the hand, known cards (unused), scalars and table,
    the plays listed there and which are swaps; the node budget; per position the bookkeeping of
    the plays tried (``NEXT`` …); the search's mode; the budget of each look-ahead."""
    return (np.zeros((DEPTH, NUM_TYPES), np.int8), np.zeros((DEPTH, NUM_TYPES), np.int8),
            np.zeros((DEPTH, SEARCH_SCALARS), np.int64), np.zeros((DEPTH, MAX_MELDS), np.int8),
            np.zeros((DEPTH, MAX_MELDS), np.int8), np.zeros((DEPTH, MAX_MELDS), np.int8),
            np.zeros((DEPTH, MAX_MELDS), np.int8), np.zeros((DEPTH, MAX_MELDS, MAX_SLOTS), np.int8),
            np.zeros((DEPTH, MAX_PLAYS), np.int64), np.zeros((DEPTH, MAX_PLAYS), np.int8), np.zeros(1, np.int64),
            np.zeros((DEPTH, 4), np.int64), np.zeros(1, np.int64), np.array([budget], np.int64))


GAME_TABLES = (TEMPLATES, TEMPLATE_MASKS, IN_RUN, LONE, RUN_IDS)
"""What the kernels read of the game: the templates, their card masks, the solver's mask facts,
the run templates by suit, low position and length."""


class RomiCore:
    """The arrays of ``num_envs`` römi hands and the kernels that step them."""

    def __init__(self, rules: RuleSet, num_envs: int, observations: np.ndarray, action_masks: np.ndarray,
                 to_act: np.ndarray, match_mode: bool):
        self._check_rules(rules)
        self.rules = rules
        n, size = rules.num_players, num_envs
        deck = NUM_NATURAL * rules.decks + rules.printed_jokers
        layout = layout_for(rules).slices
        history = min(16 * rules.max_turns + 64, HISTORY_LIMIT)
        lay = np.zeros(25, np.int64)
        for index, name in _PLANES:
            lay[index] = layout[name].start if name in layout else -1  # -1: a plane the game lacks
        lay[L_PLAYERS] = n
        lay[L_CAP] = discard_cap(rules.decks, rules.printed_jokers)
        lay[L_MAX_TURNS] = rules.max_turns
        lay[L_DECK] = deck
        lay[L_HAND_SIZE] = rules.hand_size
        lay[L_MATCH_MODE] = 1 if match_mode else 0
        lay[L_HISTORY] = history
        self.lay = lay
        self.scales = np.array([1.0 / deck, 1.0 / rules.hand_size, 1.0 / 127], np.float32)
        self.inv_target = 1.0 / rules.match_target
        self.history_limit = history
        self.hands = np.zeros((size, n, NUM_TYPES), np.int8)
        self.known = np.zeros((size, n, NUM_TYPES), np.int8)
        self.discarded = np.zeros((size, n, NUM_TYPES), np.int32)
        self.sizes = np.zeros((size, n), np.int64)
        self.stock = np.zeros((size, deck), np.int8)
        self.pile = np.zeros((size, deck), np.int8)
        self.rest = np.zeros((size, NUM_TYPES), np.int8)
        self.scalars = np.zeros((size, NUM_SCALARS), np.int64)
        self.totals = np.zeros((size, n), np.int64)
        self.turns_taken = np.zeros((size, n), np.int64)
        self.opened = np.zeros((size, n), np.int8)
        self.has_laid = np.zeros((size, n), np.int8)
        self.table_kind = np.zeros((size, MAX_MELDS), np.int8)
        self.table_key = np.zeros((size, MAX_MELDS), np.int8)
        self.table_low = np.zeros((size, MAX_MELDS), np.int8)
        self.table_len = np.zeros((size, MAX_MELDS), np.int8)
        self.table_slots = np.zeros((size, MAX_MELDS, MAX_SLOTS), np.int8)
        self.keys = np.zeros((size, mt19937.KEY_WORDS), np.int64)
        self.history = np.zeros((size, history), np.int16)
        self.rng = np.zeros(mt19937.STATE_WORDS + 1, np.int64)
        self.status = np.zeros(size, np.int8)
        self.workspace = new_workspace()
        self.observations = observations
        self.action_masks = action_masks
        self.to_act = to_act
        self.engine_masks = 0
        """Masks written by the Python engine because a look-ahead ran out of budget (a count)."""

    @staticmethod
    def _check_rules(rules: RuleSet) -> None:
        if rules.game != "romi":
            raise ValueError(f"RomiCore plays römi, not {rules.game!r}")
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

    def _table(self):
        return self.table_kind, self.table_key, self.table_low, self.table_len, self.table_slots

    def deal(self, rows: list[int], seeds: list, firsts: list[int]) -> None:
        """Deal hand ``GameState(rules, seeds[k], firsts[k])`` in row ``rows[k]``, with its observation and mask."""
        count = len(rows)
        deal_keys = np.zeros((count, mt19937.KEY_WORDS), np.int64)
        rebuild_keys = np.zeros((count, mt19937.KEY_WORDS), np.int64)
        deal_lens = np.zeros(count, np.int64)
        rebuild_lens = np.zeros(count, np.int64)
        for k, seed in enumerate(seeds):
            key = mt19937.seed_key(f"{seed}:0")  # shuffle_rng(seed, 0): the deal
            deal_keys[k, :len(key)] = key
            deal_lens[k] = len(key)
            key = mt19937.seed_key(f"{seed}:1")  # shuffle_rng(seed, 1): the rebuilt stock (G8)
            rebuild_keys[k, :len(key)] = key
            rebuild_lens[k] = len(key)
        array = np.asarray(rows, np.int64)
        deal_rows(array, deal_keys, deal_lens, rebuild_keys, rebuild_lens, np.asarray(firsts, np.int64), self.lay,
                  self.scales, self.inv_target, self.hands, self.known, self.discarded, self.sizes, self.stock,
                  self.pile, self.rest, self.scalars, self.totals, self.turns_taken, self.opened, self.has_laid,
                  self.keys, self.rng, self.status)
        self._refresh(array)

    def _refresh(self, rows: np.ndarray) -> None:
        refresh_rows(rows, self.lay, self.scales, self.inv_target, self.hands, self.known, self.discarded, self.sizes,
                     self.pile, self.rest, self.scalars, self.totals, self.turns_taken, self.opened, *self._table(),
                     self.observations, self.action_masks, self.to_act, self.status, self.workspace, GAME_TABLES)
        asks = rows[self.status[rows] == ASK_ENGINE]
        if asks.size:
            self.engine_mask(asks)
        self.status[rows] = GOES_ON

    def first_refusal(self, rows: np.ndarray, actions: np.ndarray) -> tuple[int, int]:
        """(k, 1 out of range / 2 forbidden) of the first action ``actions[k]`` that row ``rows[k]``'s
        mask refuses, or (-1, 0)."""
        found = check_actions(rows, actions, self.action_masks, ROMI_NUM_ACTIONS)
        return (-1, 0) if found < 0 else (found >> 2, found & 3)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> list[int]:
        """Play ``actions[k]`` in row ``rows[k]`` (all allowed); the rows whose hand ended, in order."""
        status = self.status
        status.fill(GOES_ON)
        step_rows(rows, actions, self.lay, self.scales, self.inv_target, self.hands, self.known, self.discarded,
                  self.sizes, self.stock, self.pile, self.rest, self.scalars, self.totals, self.turns_taken,
                  self.opened, self.has_laid, *self._table(), self.keys, self.history, self.rng, self.observations,
                  self.action_masks, self.to_act, status, self.workspace, GAME_TABLES)
        if status.any():
            asks = np.flatnonzero(status == ASK_ENGINE)
            if asks.size:
                self.engine_mask(asks)
            return rows[status[rows] == ENDED].tolist()
        return []

    def engine_mask(self, rows: np.ndarray) -> None:
        """The masks of ``rows`` from the Python engine's ``legal_moves()`` (a look-ahead ran out of budget)."""
        from ..encoding import move_ids

        ids = move_ids("romi")
        for row in rows.tolist():
            self.engine_masks += 1
            state = GameState.from_dict(self.state_dict(row, 0, None))
            mask = self.action_masks[row]
            mask[:] = 0
            for move in state.legal_moves():
                mask[ids[move]] = 1

    def load(self, row: int, state, action_ids: dict) -> None:
        """Copy ``state`` (a römi ``GameState`` before its end) into ``row`` and write its row
        (``action_ids``: engine move to action id, for the history)."""
        key = mt19937.seed_key(f"{state.seed}:1")  # shuffle_rng(seed, 1), for a rebuild (G8); it may refuse
        if len(state.table) > MAX_MELDS:
            raise ValueError(f"{len(state.table)} table melds, more than the {MAX_MELDS} the encoding holds")
        stock, discard = state.stock, state.discard
        self.hands[row] = state.hands
        self.known[row] = state.known
        self.discarded[row] = state.discarded
        self.sizes[row] = [sum(hand) for hand in state.hands]
        self.stock[row, :len(stock)] = stock
        self.pile[row, :len(discard)] = discard
        self.rest[row] = np.bincount(np.asarray(discard[:-1], np.int64), minlength=NUM_TYPES)
        self.turns_taken[row] = state.turns_taken
        self.opened[row] = state.opened
        self.has_laid[row] = state.has_laid
        for s, (kind, meld_key, low, slots) in enumerate(state.table):
            self.table_kind[row, s], self.table_key[row, s], self.table_low[row, s] = kind, meld_key, low
            self.table_len[row, s] = len(slots)
            self.table_slots[row, s, :len(slots)] = slots
        sc = self.scalars[row]
        sc[CURRENT], sc[PHASE], sc[TURN], sc[TAKEN] = state.current, state.phase, state.turn, state.taken_card
        sc[REBUILDS], sc[FIRST], sc[CUT] = state.rebuilds, state.first_player, state.cut_card
        sc[STOCK_LEN], sc[PILE_LEN], sc[OUTCOME], sc[WINNER] = len(stock), len(discard), PLAYING, -1
        sc[NMELDS], sc[OWED], sc[OWED_JOKERS] = len(state.table), state.owed_card, state.owed_jokers
        sc[LAID] = 1 if state.laid_this_turn else 0
        moves = [action_ids[move] for move in state.history]
        sc[HISTORY_LEN] = len(moves)
        kept = min(len(moves), self.history_limit)
        self.history[row, :kept] = moves[:kept]
        self.keys[row, :len(key)] = key
        sc[KEY_LEN] = len(key)
        self._refresh(np.array([row], np.int64))

    def ended_hand(self, row: int) -> tuple[HandResult, int]:
        """(result, turns played) of the hand that ended in ``row`` (R7; G8, G9: nobody pays)."""
        sc = self.scalars[row]
        rules = self.rules
        n = rules.num_players
        outcome = int(sc[OUTCOME])
        if outcome != OUT:
            return HandResult(OUTCOME_NAMES[outcome], None, (0,) * n), int(sc[TURN])
        winner = int(sc[WINNER])
        values = rules.values
        payments = []
        for p in range(n):
            if p == winner:
                payments.append(0)
            elif not self.opened[row, p]:
                payments.append(rules.unopened_penalty)  # R7: no meld laid this hand
            else:
                hand = self.hands[row, p].tolist()
                payments.append(sum(values[c] * k for c, k in enumerate(hand) if k))
        return HandResult("out", winner, tuple(payments)), int(sc[TURN])

    def observe(self, row: int, seat: int) -> np.ndarray:
        """A new observation of ``seat`` in ``row``."""
        out = np.zeros(self.observations.shape[1], np.float32)
        write_observation(out, row, seat, self.lay, self.scales, self.inv_target, self.hands, self.known,
                          self.discarded, self.sizes, self.pile, self.rest, self.scalars, self.totals, self.opened,
                          *self._table())
        return out

    def state_dict(self, row: int, seed, actions_to_moves) -> dict:
        """``GameState.to_dict()`` of the hand in ``row`` (``seed``: the seed it was dealt with;
        ``actions_to_moves`` None: an empty history)."""
        sc = self.scalars[row].tolist()
        rules = self.rules
        moves = sc[HISTORY_LEN]
        if actions_to_moves is not None and moves > self.history_limit:
            raise RuntimeError(f"row {row}: the hand has {moves} moves, more than the {self.history_limit} the "
                               f"numba backend keeps for state(); lower max_turns (G9) to reconstruct it")
        if sc[PHASE] == PHASE_OVER:
            raise RuntimeError(f"row {row}: the hand is over and not yet replaced")
        table = []
        for s in range(sc[NMELDS]):
            kind = int(self.table_kind[row, s])
            slots = self.table_slots[row, s, :self.table_len[row, s]].astype(np.int64).tolist()
            table.append([kind, int(self.table_key[row, s]), int(self.table_low[row, s]), slots])
        history = [] if actions_to_moves is None else \
            [list(actions_to_moves[a]) for a in self.history[row, :moves].tolist()]
        return {
            "game": rules.game,
            "num_players": rules.num_players,
            "options": rules.options,
            "seed": seed,
            "first_player": sc[FIRST],
            "hands": self.hands[row].astype(np.int64).tolist(),
            "stock": self.stock[row, :sc[STOCK_LEN]].astype(np.int64).tolist(),
            "discard": self.pile[row, :sc[PILE_LEN]].astype(np.int64).tolist(),
            "table": table,
            "cut_card": sc[CUT],
            "wild_card": -1,
            "current": sc[CURRENT],
            "phase": sc[PHASE],
            "turn": sc[TURN],
            "turns_taken": self.turns_taken[row].tolist(),
            "taken_card": sc[TAKEN],
            "owed_card": sc[OWED],
            "owed_jokers": sc[OWED_JOKERS],
            "opened": [bool(x) for x in self.opened[row].tolist()],
            "has_laid": [bool(x) for x in self.has_laid[row].tolist()],
            "laid_this_turn": bool(sc[LAID]),
            "rebuilds": sc[REBUILDS],
            "known": self.known[row].astype(np.int64).tolist(),
            "discarded": self.discarded[row].astype(np.int64).tolist(),
            "result": None,
            "history": history,
        }
