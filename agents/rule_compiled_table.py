"""The rule agent's decision in the games with melds on the table (Basic Rummy, römi), compiled.

``table_decisions`` is ``agents.rule_agent.RuleAgent.act`` for Basic Rummy and römi on a batch of
rows, step for step (see that module's docstring): the draw (römi's cut card, R4; the discard top
by ``wants_top``, or when it fits a table meld, B3, R5), the play steps 0 to 6 in the same order
with the same ties (the lowest action id wins a tie, as the Python agent's ``min`` and first match
do), and the discard of ``agents.rule_compiled.discard_action`` with the table's fits as danger.
Arrangements come from the same compiled search as ``rummy_env.solver.best_arrangement``, so
both see the same melds. ``tests/test_rule_agent_batch.py`` replays recorded decisions of the
Python agent against it and plays live hands in lockstep with ``act``.

A row the kernel cannot decide (a hand too large for the solver's scratch arrays) gets -1, and
the caller decides it with ``act``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rummy_env.compiled.solver import JOKER

from .rule_compiled import (A_DRAW, A_MELD, A_PLACE, A_PLACE_JOKER_LOW, A_TAKE, A_TAKE_CUT, O_HAND_SIZES, O_MUST_PLACE,
                            O_OPENED, O_TABLE_MELDS, W_HOLD_LOOSE, W_HOLD_UNTIL, deadwood, discard_action,
                            lay_out, read_row, wants_top)

# table_rules: the game's facts the play reads
T_SLOTS, T_HAND_SIZE, T_OUT_WITHOUT_DISCARD, T_LAYOFF_NEEDS_OWN_MELD, T_CUT_CARD = range(5)


@njit(cache=True)
def table_fits(o, at, slots, ace_high, fits):
    """``RuleAgent.table_fits``: ``fits[c]`` = 1 for each natural card some table meld would take,
    read from the table meld plane at ``at`` (``slots`` rows of 53: +1 a natural, -1 a joker
    standing for the card)."""
    for c in range(53):
        fits[c] = 0
    used = 0
    for s in range(slots):
        for c in range(53):
            if np.int64(o[at + s * 53 + c]) != 0:
                used = s + 1
                break
    top = 13 if ace_high else 12
    for s in range(used):
        row = at + s * 53
        n = 0
        first = -1
        ranks = 0
        for c in range(52):
            if np.int64(o[row + c]) != 0:
                if first < 0:
                    first = c
                n += 1
                ranks |= 1 << (c % 13)
        if n < 2:
            continue
        distinct = 0
        for r in range(13):
            distinct += (ranks >> r) & 1
        if distinct == 1:  # a set: the suits it lacks
            if n < 4:
                rank = first % 13
                for suit in range(4):
                    if np.int64(o[row + suit * 13 + rank]) == 0:
                        fits[suit * 13 + rank] = 1
            continue
        suit = first // 13
        ace_on_top = ace_high and (ranks & 1) != 0 and ((ranks >> 12) & 1) != 0
        low = 99
        high = -1
        for r in range(13):
            if (ranks >> r) & 1:
                p = 13 if (r == 0 and ace_on_top) else r
                low = min(low, p)
                high = max(high, p)
        if high - low + 1 >= 13:
            continue
        if low > 0:
            fits[suit * 13 + low - 1] = 1
        if high < top:
            fits[suit * 13 + (high + 1) % 13] = 1


@njit(cache=True)
def _play_parts(action, hand, o, ids, t_cards, t_len, meld_at, used):
    """``RuleAgent._cards_used`` of a meld or placement: the cards it takes from the hand into
    ``used`` (53 counts); returns (how many fewer cards the hand holds, is a joker swap)."""
    for c in range(53):
        used[c] = 0
    if action < ids[A_PLACE]:
        t = action - ids[A_MELD]
        for j in range(t_len[t]):
            c = t_cards[t, j]
            used[c if hand[c] else JOKER] += 1
        return t_len[t], False
    if ids[A_PLACE_JOKER_LOW] >= 0 and action >= ids[A_PLACE_JOKER_LOW]:
        used[JOKER] += 1
        return 1, False
    offset = action - ids[A_PLACE]
    card = offset % 53
    slot = offset // 53
    used[card] += 1
    swap = card != JOKER and np.int64(o[meld_at + slot * 53 + card]) == -1
    return (0 if swap else 1), swap


@njit(cache=True)
def _after_play(action, hand, o, ids, t_cards, t_len, meld_at, used, rest, sparams, rank_values, tables, state,
                scratch, memo, pmemo, out, nat):
    """``RuleAgent._after_play``: (deadwood left, cards left) after the play; deadwood -1 on overflow."""
    fewer, _ = _play_parts(action, hand, o, ids, t_cards, t_len, meld_at, used)
    size = 0
    for c in range(53):
        rest[c] = hand[c] - used[c]
    if fewer == 0:
        rest[JOKER] += 1
    for c in range(53):
        size += rest[c]
    dw = deadwood(rest, -1, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat)
    return dw, size


@njit(cache=True)
def _best_after_play(m, first_play, n_actions, swaps_only, hand, o, ids, t_cards, t_len, meld_at, used, rest, sparams,
                     rank_values, tables, state, scratch, memo, pmemo, out, nat):
    """The play (from ``first_play`` on; joker swaps only with ``swaps_only``) with the least
    (deadwood, cards) left, lowest id on ties: (action or -1 for none, its deadwood; -2 on overflow)."""
    best = -1
    best_dw = 0
    best_size = 0
    for a in range(first_play, n_actions):
        if not m[a]:
            continue
        if swaps_only:
            if a < ids[A_PLACE]:
                continue
            _, swap = _play_parts(a, hand, o, ids, t_cards, t_len, meld_at, used)
            if not swap:
                continue
        dw, size = _after_play(a, hand, o, ids, t_cards, t_len, meld_at, used, rest, sparams, rank_values, tables,
                               state, scratch, memo, pmemo, out, nat)
        if dw < 0:
            return -2, 0
        if best < 0 or dw < best_dw or (dw == best_dw and size < best_size):
            best = a
            best_dw = dw
            best_size = size
    return best, best_dw


@njit(cache=True)
def table_decisions(obs, masks, offsets, ids, weights, values, copies, num_players, has_jokers, ace_high, table_rules,
                    t_cards, t_len, sparams, rank_values, tables, state, scratch, memo, pmemo, out, actions):
    """``RuleAgent.act`` (Basic, römi) for every row; -1 where the row must be decided in Python.

    ``t_cards``, ``t_len``: the meld templates' cards (padded) and sizes, by meld action offset."""
    nat = np.zeros(53, np.int64)
    hand = np.zeros(53, np.int64)
    loose = np.zeros(53, np.int64)
    unseen = np.zeros(53, np.int64)
    rest = np.zeros(53, np.int64)
    used = np.zeros(53, np.int64)
    fits = np.zeros(53, np.int64)
    wanted = np.zeros(64, np.int64)
    wanted_jokers = np.zeros(64, np.int64)
    n_actions = masks.shape[1]
    slots = table_rules[T_SLOTS]
    meld_at = offsets[O_TABLE_MELDS]
    first_play = ids[A_MELD]
    for row in range(obs.shape[0]):
        o = obs[row]
        m = masks[row]
        first, n_legal, top, phase = read_row(o, m, offsets, hand)
        if n_legal == 1:
            actions[row] = first
            continue
        table_fits(o, meld_at, slots, ace_high, fits)
        if phase == 0:
            if table_rules[T_CUT_CARD] and ids[A_TAKE_CUT] >= 0 and m[ids[A_TAKE_CUT]]:
                actions[row] = ids[A_TAKE_CUT]  # R4: it goes out at once
                continue
            take = ids[A_TAKE]
            if not m[take]:
                actions[row] = ids[A_DRAW]
                continue
            opened = offsets[O_OPENED] >= 0 and np.int64(o[offsets[O_OPENED]]) != 0
            may_lay_off = not table_rules[T_LAYOFF_NEEDS_OWN_MELD] or opened
            fits_top = top >= 0 and top < 52 and fits[top] != 0
            want = wants_top(hand, top, -1, has_jokers, fits_top, may_lay_off, ace_high, values, sparams,
                             rank_values, tables, state, scratch, memo, pmemo, out, nat, loose)
            actions[row] = -1 if want < 0 else (take if want == 1 else ids[A_DRAW])
            continue
        # the best arrangement, once: its melds (in ``out``) for the play steps, its loose cards for the discard
        dead, n_melds = lay_out(hand, -1, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat, loose)
        if dead < 0:
            actions[row] = -1
            continue
        any_play = False
        for a in range(first_play, n_actions):
            if m[a]:
                any_play = True
                break
        if any_play:
            action = _play(o, m, hand, fits, dead, n_melds, first_play, n_actions, offsets, ids, weights, num_players,
                           table_rules, t_cards, t_len, meld_at, sparams, rank_values, tables, state, scratch, memo,
                           pmemo, out, nat, loose, used, rest, wanted, wanted_jokers)
            if action != -3:  # -3: discard
                actions[row] = action
                continue
        actions[row] = discard_action(o, m, first, hand, -1, -1, top, loose, 1.0, fits, offsets, ids, weights, values,
                                      copies, num_players, has_jokers, ace_high, sparams, rank_values, tables, state,
                                      scratch, memo, pmemo, out, nat, rest, unseen)
    return actions


@njit(cache=True)
def _play(o, m, hand, fits, dead, n_melds, first_play, n_actions, offsets, ids, weights, num_players, table_rules,
          t_cards, t_len, meld_at, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat, loose, used,
          rest, wanted, wanted_jokers):
    """Play steps 0 to 5 of ``RuleAgent._play_table`` when a meld or placement is legal, given the
    hand's best arrangement just laid out (``dead``, ``n_melds`` melds in ``out``, ``loose``): the
    action, -3 to discard instead (step 6), -1 on the solver's overflow."""
    owes = False
    if offsets[O_MUST_PLACE] >= 0:  # R4, R5: a card or jokers owed to the table this turn
        for c in range(53):
            if np.int64(o[offsets[O_MUST_PLACE] + c]) != 0:
                owes = True
                break
    if owes:
        best, _ = _best_after_play(m, first_play, n_actions, False, hand, o, ids, t_cards, t_len, meld_at, used, rest,
                                   sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat)
        return -1 if best < 0 else best
    # step 0: hold every meld while the others hold many cards and the hand is far from out
    fewest = 1 << 30
    for p in range(1, num_players):
        held = np.int64(np.rint(np.float64(o[offsets[O_HAND_SIZES] + p]) * table_rules[T_HAND_SIZE]))
        fewest = min(fewest, held)
    if fewest > weights[W_HOLD_UNTIL]:
        stuck = 0
        for c in range(52):
            if not fits[c]:
                stuck += loose[c]
        if stuck > weights[W_HOLD_LOOSE]:
            return -3
    # the melds of the best arrangement, as (naturals bitmask, jokers): read before the next search
    n_wanted = 0
    melds, meld_len = out[2], out[3]
    for i in range(min(n_melds, wanted.shape[0])):
        bits = 0
        jokers = 0
        for j in range(meld_len[i]):
            c = melds[i, j]
            if c == JOKER:
                jokers += 1
            else:
                bits |= np.int64(1) << c
        wanted[n_wanted] = bits
        wanted_jokers[n_wanted] = jokers
        n_wanted += 1
    size = 0
    for c in range(53):
        size += hand[c]
    # step 2: a play that goes out at once (B4 empties the hand; römi keeps one card to discard, R6)
    goes_out = 0 if table_rules[T_OUT_WITHOUT_DISCARD] else 1
    for a in range(first_play, n_actions):
        if m[a]:
            fewer, _ = _play_parts(a, hand, o, ids, t_cards, t_len, meld_at, used)
            if size - fewer == goes_out:
                return a
    # step 3: the largest meld of the best arrangement
    best_meld = -1
    best_len = 0
    for a in range(first_play, ids[A_PLACE]):
        if not m[a]:
            continue
        t = a - ids[A_MELD]
        bits = 0
        jokers = 0
        for j in range(t_len[t]):
            c = t_cards[t, j]
            if hand[c]:
                bits |= np.int64(1) << c
            else:
                jokers += 1
        for i in range(n_wanted):
            if wanted[i] == bits and wanted_jokers[i] == jokers:
                if best_meld < 0 or t_len[t] > best_len:
                    best_meld = a
                    best_len = t_len[t]
                break
    if best_meld >= 0:
        return best_meld
    # step 4: a joker swap that lowers the deadwood (römi)
    best, best_dw = _best_after_play(m, first_play, n_actions, True, hand, o, ids, t_cards, t_len, meld_at, used, rest,
                                     sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat)
    if best == -2:
        return -1
    if best >= 0 and best_dw < dead:
        return best
    # step 5: lay off a loose card (the arrangement's loose cards are still in ``loose``)
    for a in range(ids[A_PLACE], n_actions):
        if not m[a] or (ids[A_PLACE_JOKER_LOW] >= 0 and a >= ids[A_PLACE_JOKER_LOW]):
            continue
        card = (a - ids[A_PLACE]) % 53
        if card == JOKER or not loose[card]:
            continue
        _, swap = _play_parts(a, hand, o, ids, t_cards, t_len, meld_at, used)
        if not swap:
            return a
    return -3
