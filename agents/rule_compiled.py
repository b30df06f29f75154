"""The Indian rule agent's decision, compiled (numba): ``RuleAgent.act`` for a batch of rows, and
the steps every game's decision shares.

``indian_decisions`` makes the same decision as ``agents.rule_agent.RuleAgent.act`` for Indian
Rummy, step for step (see that module's docstring): the best free arrangement from
``rummy_env.compiled.solver`` (römi's meld rules, wild-rank cards as jokers), the draw test
(``wants_top``), a declaration when the mask offers one, and the discard score
``value * late - keep - danger`` (``discard_action``) with the same floating-point operations in
the same order, so that ties break alike. The games with table melds add their play steps in
``agents.rule_compiled_table`` on the same pieces. ``tests/test_rule_agent_batch.py`` replays
recorded decisions of the Python agent against both.

A row the kernel cannot decide (a hand too large for the solver's scratch arrays) gets -1, and
the caller decides it with ``act``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rummy_env.compiled.solver import FREE, INF, JOKER, OVERFLOW
from rummy_env.compiled.solver import search_kernel as _solve

# offsets: positions of the observation planes the decision reads (-1: the game lacks it)
(O_HAND, O_TOP, O_REST, O_WILD, O_KNOWN, O_PHASE, O_TURN, O_TABLE_CARDS, O_CUT, O_TABLE_MELDS, O_HAND_SIZES, O_OPENED,
 O_MUST_PLACE) = range(13)
# ids: the action ids of each move kind (-1: the game lacks it)
A_DRAW, A_TAKE, A_DISCARD, A_DECLARE, A_TAKE_CUT, A_MELD, A_PLACE, A_PLACE_JOKER_LOW = range(8)
# weights (floats)
W_NEAR, W_DANGER, W_MAX_OUTS, W_LIVES, W_LATE, W_MAX_TURNS, W_HOLD_UNTIL, W_HOLD_LOOSE = range(8)


@njit(cache=True)
def _fold_wild(counts, wild, nat):
    """``counts`` into ``nat`` with the wild rank's cards (I2) counted as jokers."""
    for c in range(53):
        nat[c] = counts[c]
    if wild >= 0:
        for s in range(4):
            nat[JOKER] += nat[s * 13 + wild]
            nat[s * 13 + wild] = 0


@njit(cache=True)
def wild_card_of(o, wild_at):
    """The turned-up wild joker card (I2) in the observation row ``o``'s wild card plane at
    ``wild_at``; -1 without one (or without the plane)."""
    if wild_at >= 0:
        for c in range(53):
            if np.int64(o[wild_at + c]) == 1:
                return c
    return -1


@njit(cache=True)
def wild_rank(wild_card):
    """The wild rank of a turned-up card (I2): its rank, aces for a joker; -1 for no card."""
    return -1 if wild_card < 0 else (0 if wild_card == JOKER else wild_card % 13)


@njit(cache=True, inline="always")
def lay_out(counts, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat, loose):
    """The hand's best free arrangement (wild-rank cards as jokers, I2): (deadwood value, melds),
    the melds laid out in ``out[2]`` with their lengths in ``out[3]`` and the deadwood counts in
    ``loose``; value -1 when the hand overflows the solver's scratch arrays."""
    _fold_wild(counts, wild, nat)
    best, nm = _solve(nat, FREE, INF, True, sparams, rank_values, tables, state, scratch, memo, pmemo, out)
    if best == OVERFLOW:
        return -1, 0
    left = out[4] if nm >= 0 else nat  # no meld chosen: every card is deadwood
    for c in range(53):
        loose[c] = left[c]
    return best, max(nm, 0)


@njit(cache=True)
def arrange(counts, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat, loose):
    """``lay_out`` with the run factor's facts: (deadwood value, pure runs, runs); value -1 on overflow."""
    best, nm = lay_out(counts, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat, loose)
    if best < 0:
        return -1, 0, 0
    melds, meld_len = out[2], out[3]
    pure = 0
    runs = 0
    for i in range(nm):
        n = meld_len[i]
        naturals = 0
        suit = -1
        one_suit = True
        ranks = 0
        distinct = True
        for j in range(n):
            c = melds[i, j]
            if c == JOKER:
                continue
            naturals += 1
            if suit < 0:
                suit = c // 13
            elif c // 13 != suit:
                one_suit = False
            if (ranks >> (c % 13)) & 1:
                distinct = False
            ranks |= 1 << (c % 13)
        if one_suit and naturals > 1 and distinct:
            runs += 1
            if naturals == n:
                pure += 1
    return best, pure, runs


@njit(cache=True)
def deadwood(counts, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat):
    """The hand's least deadwood value (wild-rank cards as jokers, I2); negative on overflow."""
    _fold_wild(counts, wild, nat)
    best, _ = _solve(nat, FREE, INF, False, sparams, rank_values, tables, state, scratch, memo, pmemo, out)
    return best


@njit(cache=True)
def _run_outs(a, b, unseen, ace_high, all_live):
    """``RuleAgent._run_outs``: unseen cards completing the run pair, -1 for no run pair."""
    suit = a // 13
    top = 13 if ace_high else 12
    best = -1
    ra = a % 13
    rb = b % 13
    na = 2 if (ra == 0 and ace_high) else 1
    nb = 2 if (rb == 0 and ace_high) else 1
    for ia in range(na):
        pa = 13 if ia == 1 else ra
        for ib in range(nb):
            pb = 13 if ib == 1 else rb
            low = min(pa, pb)
            high = max(pa, pb)
            gap = high - low
            outs = 0
            if gap == 1:
                if 0 <= low - 1 <= top:
                    outs += 1 if all_live else unseen[suit * 13 + (low - 1) % 13]
                if 0 <= high + 1 <= top:
                    outs += 1 if all_live else unseen[suit * 13 + (high + 1) % 13]
            elif gap == 2:
                outs += 1 if all_live else unseen[suit * 13 + (low + 1) % 13]
            else:
                continue
            if outs > best:
                best = outs
    return best


@njit(cache=True)
def _could_meld(card, hand, wild, ace_high):
    jokers = hand[JOKER]
    if wild >= 0:
        for s in range(4):
            jokers += hand[s * 13 + wild]
    if jokers:
        return True
    rank = card % 13
    suit = card // 13
    for s in range(4):
        if s != suit and hand[s * 13 + rank]:
            return True
    top = 13 if ace_high else 12
    npos = 2 if (rank == 0 and ace_high) else 1
    for ip in range(npos):
        p = 13 if ip == 1 else rank
        for d in (-2, -1, 1, 2):
            other = p + d
            if 0 <= other <= top and other % 13 != rank and hand[suit * 13 + other % 13]:
                return True
    return False


@njit(cache=True, inline="always")
def read_row(o, m, offsets, hand):
    """The row's facts every decision starts from: (first legal action, legal actions, discard
    top or -1, phase: 0 draw, 1 play, -1 over), the hand's counts into ``hand``."""
    first = -1
    n_legal = 0
    for a in range(m.shape[0]):
        if m[a]:
            if first < 0:
                first = a
            n_legal += 1
    for c in range(53):
        hand[c] = np.int64(o[offsets[O_HAND] + c])
    top = -1
    for c in range(53):
        if np.int64(o[offsets[O_TOP] + c]) == 1:
            top = c
            break
    phase = 0 if np.int64(o[offsets[O_PHASE]]) else (1 if np.int64(o[offsets[O_PHASE] + 1]) else -1)
    return first, n_legal, top, phase


@njit(cache=True, inline="always")
def wants_top(hand, top, wild, has_jokers, fits_table, may_lay_off, ace_high, values, sparams, rank_values, tables,
              state, scratch, memo, pmemo, out, nat, loose):
    """``RuleAgent.wants_top``: 1 to take the discard top, 0 to draw, -1 when the solver's scratch
    arrays overflow. ``fits_table``: the top fits a table meld; ``may_lay_off``: the seat may lay
    it off this turn (Basic, or an opened römi seat: R5)."""
    if top < 0:
        return 0
    if (top == JOKER or (wild >= 0 and top % 13 == wild)) and has_jokers:
        return 1
    if not fits_table and not _could_meld(top, hand, wild, ace_high):
        return 0  # no meld can hold it: skip the solver
    dead_now, _, _ = arrange(hand, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat, loose)
    if dead_now < 0:
        return -1
    worst_now = 0
    for c in range(53):
        if loose[c] and values[c] > worst_now:
            worst_now = values[c]
    hand[top] += 1
    dead_new, _, _ = arrange(hand, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat, loose)
    hand[top] -= 1
    if dead_new < 0:
        return -1
    worst_new = 0
    for c in range(53):
        if loose[c] and c != top and values[c] > worst_new:
            worst_new = values[c]
    if dead_new - worst_new < dead_now - worst_now:
        return 1
    return 1 if fits_table and may_lay_off else 0


@njit(cache=True, inline="always")
def discard_action(o, m, first, hand, wild, wild_card, top, loose, run_factor, fits, offsets, ids, weights, values,
                   copies, num_players, has_jokers, ace_high, sparams, rank_values, tables, state, scratch, memo,
                   pmemo, out, nat, rest, unseen):
    """``RuleAgent._discard``: the discard action of the hand whose best arrangement left ``loose``;
    ``fits`` marks the cards a table meld takes (``table_fits``, all 0 without a table). The
    first legal action when no discard is legal; -1 when the solver's scratch arrays overflow."""
    base = ids[A_DISCARD]
    any_discard = False
    for c in range(53):
        if m[base + c]:
            any_discard = True
            break
    if not any_discard:
        return first
    n_candidates = 0
    for c in range(52):
        if m[base + c] and loose[c] and not (wild >= 0 and c % 13 == wild):
            n_candidates += 1
    if n_candidates == 0:
        # the melded card whose removal leaves the least deadwood; jokers and wild cards last
        best_c = -1
        best_dw = 0
        for c in range(52):
            if not m[base + c] or (wild >= 0 and c % 13 == wild):
                continue
            for k in range(53):
                rest[k] = hand[k]
            rest[c] -= 1
            dw = deadwood(rest, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat)
            if dw < 0:
                return -1
            if best_c < 0 or dw < best_dw or (dw == best_dw and values[c] > values[best_c]):
                best_c = c
                best_dw = dw
        if best_c < 0:
            for c in range(53):
                if m[base + c]:
                    best_c = c
                    break
        return base + best_c
    # unseen cards (RuleAgent.unseen)
    for c in range(53):
        seen = hand[c] + np.int64(o[offsets[O_REST] + c])
        if offsets[O_TABLE_CARDS] >= 0:
            seen += np.int64(o[offsets[O_TABLE_CARDS] + c])
        for p in range(1, num_players):
            seen += np.int64(o[offsets[O_KNOWN] + p * 53 + c])
        unseen[c] = seen
    if top >= 0:
        unseen[top] += 1
    if offsets[O_CUT] >= 0:
        for c in range(53):
            if np.int64(o[offsets[O_CUT] + c]) == 1:
                unseen[c] += 1
                break
    if wild_card >= 0:
        unseen[wild_card] += 1
    for c in range(53):
        unseen[c] = max(0, copies[c] - unseen[c])
    jokers = 0
    if has_jokers:
        jokers = unseen[JOKER]
        if wild >= 0:
            for s in range(4):
                jokers += unseen[s * 13 + wild]
    late = 1.0 + weights[W_LATE] * np.float64(o[offsets[O_TURN]]) * weights[W_MAX_TURNS] / 50.0
    max_outs = weights[W_MAX_OUTS]
    known_next = offsets[O_KNOWN] + 53
    best_card = -1
    best_score = 0.0
    for card in range(52):
        if not (m[base + card] and loose[card]) or (wild >= 0 and card % 13 == wild):
            continue
        rank = card % 13
        suit = card // 13
        keep = 0.0
        for other in range(52):
            if not loose[other] or other == card:
                continue
            if other % 13 == rank:
                if other // 13 == suit:
                    continue
                outs = 0
                for s in range(4):
                    if s != suit and s != other // 13:
                        outs += unseen[s * 13 + rank]
                score = min(np.float64(outs + jokers), max_outs)
            elif other // 13 == suit:
                outs = _run_outs(card, other, unseen, ace_high, False)
                if outs < 0:
                    continue
                score = min(np.float64(outs + jokers), max_outs) * run_factor
            else:
                continue
            if score > keep:
                keep = score
        value = values[card] * late - weights[W_NEAR] * keep
        danger = 0.0
        if num_players >= 2:
            partners = 0
            for other in range(52):
                if other == card or not np.int64(o[known_next + other]):
                    continue
                if other % 13 == rank or (other // 13 == suit and _run_outs(card, other, unseen, ace_high,
                                                                           True) >= 0):
                    partners += 1
            points = 25.0 if partners >= 2 else (6.0 if partners == 1 else 0.0)
            if fits[card]:
                points += 8.0
            danger = weights[W_DANGER] * points
        total = value - danger
        if best_card < 0 or total > best_score or (total == best_score and (
                values[card] > values[best_card] or (values[card] == values[best_card] and card < best_card))):
            best_card = card
            best_score = total
    return base + best_card


@njit(cache=True)
def indian_decisions(obs, masks, offsets, ids, weights, values, copies, num_players, has_jokers, ace_high,
                     sparams, rank_values, tables, state, scratch, memo, pmemo, out, actions):
    """``RuleAgent.act`` (Indian) for every row; -1 where the row must be decided in Python."""
    nat = np.zeros(53, np.int64)
    hand = np.zeros(53, np.int64)
    loose = np.zeros(53, np.int64)
    unseen = np.zeros(53, np.int64)
    rest = np.zeros(53, np.int64)
    no_fits = np.zeros(53, np.int64)
    n_actions = masks.shape[1]
    for row in range(obs.shape[0]):
        o = obs[row]
        m = masks[row]
        first, n_legal, top, phase = read_row(o, m, offsets, hand)
        if n_legal == 1:
            actions[row] = first
            continue
        wild_card = wild_card_of(o, offsets[O_WILD])
        wild = wild_rank(wild_card)
        if phase == 0:
            take = ids[A_TAKE]
            if not m[take]:
                actions[row] = ids[A_DRAW]
                continue
            want = wants_top(hand, top, wild, has_jokers, False, False, ace_high, values, sparams, rank_values,
                             tables, state, scratch, memo, pmemo, out, nat, loose)
            if want < 0:
                actions[row] = -1
                continue
            actions[row] = take if want == 1 else ids[A_DRAW]
            continue
        # play: declare when offered
        declared = -1
        for c in range(53):
            if 0 <= ids[A_DECLARE] + c < n_actions and m[ids[A_DECLARE] + c]:
                declared = ids[A_DECLARE] + c
                break
        if declared >= 0:
            actions[row] = declared
            continue
        dead, pure, runs = arrange(hand, wild, sparams, rank_values, tables, state, scratch, memo, pmemo, out, nat,
                                    loose)
        if dead < 0:
            actions[row] = -1
            continue
        lives_boost = weights[W_LIVES]
        if not pure:
            run_factor = 1.0 + lives_boost
        elif runs < 2:
            run_factor = 1.0 + 0.5 * lives_boost
        else:
            run_factor = 1.0
        actions[row] = discard_action(o, m, first, hand, wild, wild_card, top, loose, run_factor, no_fits, offsets, ids,
                                      weights, values, copies, num_players, has_jokers, ace_high, sparams,
                                      rank_values, tables, state, scratch, memo, pmemo, out, nat, rest, unseen)
    return actions
