"""Basic Rummy (G1–G10, B1–B6) for many hands at once, in numba: the core behind
``VectorGame("basic", backend="numba")``.

Design: Basic is römi without what makes römi hard (no jokers, no cut card, no cards owed to the
table, no joker swaps, no own meld needed before laying off), so this core is a thin layer on
``rummy_env.compiled.romi``: the same arrays and the same ``RomiCore`` bookkeeping (``load``,
``state_dict``, ``observe``), its observation writer (Basic has no ``must_place`` or ``cut_card``
plane), its stock rebuild and turn cap (``_end_turn``: G8, G9) and its ``apply_play`` for melds and
lay-offs. What differs is written here:

* **Deal** (G3): one deck of 52, no cut card; 10 cards each for 2 players, 7 for 3–4
  (``RuleSet.hand_size``), then the discard top, replaying CPython's shuffle (``compiled.mt19937``).
* **Masks** are ``GameState._compute_legal`` without a look-ahead: with nothing owed every play the
  table rules allow is legal. Melds are the 329 Basic templates (``melds.meld_templates(False)``,
  ace low) whose cards are all held; lay-offs are a run's open ends (ace low: nothing above the
  king) and a set's missing suits, on any table meld (B3). A play may empty the hand (B4); one that
  would leave only the card just taken to discard may not (G7).
* **Going out** (B4) ends the hand when a play empties the hand, or by a last discard. Payments are
  the others' hand values (B5), doubled when the winner had laid nothing before this turn (B6, the
  ``rummy_bonus`` option).

``tests/test_vector_compiled_basic.py`` steps this core and the Python engine in lockstep;
``benchmarks/lockstep_vector.py --games basic`` runs the long form.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import NUM_NATURAL, NUM_RANKS, NUM_TYPES
from ..encoding import BASIC_MELD_BASE, BASIC_NUM_ACTIONS, BASIC_PLACE_BASE, DISCARD_BASE, ROMI_MELD_BASE, \
    ROMI_PLACE_BASE
from ..game import PHASE_DRAW, PHASE_OVER, PHASE_PLAY, HandResult
from ..melds import RUN, SET, meld_templates
from ..obs_spec import MAX_TABLE_MELDS
from ..ruleset import RuleSet
from . import mt19937
from .romi import (
    CURRENT, CUT, ENDED, FIRST, GOES_ON, HISTORY_LEN, KEY_LEN, L_DECK, L_HAND_SIZE, L_HISTORY, L_PLAYERS, LAID, MAX_SLOTS,
    NMELDS, OUT, OUTCOME, OUTCOME_NAMES, OWED, OWED_JOKERS, PHASE, PILE_LEN, PLAYING, REBUILDS, SETS_PER_RANK,
    STOCK_LEN, TAKEN, TURN, WINNER, RomiCore, _end_turn, _held, _take, apply_play, check_actions,
    write_observation,
)

_DRAW_ACTION = 0
_TAKE_ACTION = 1
_KING = NUM_RANKS - 1  # the highest run position: the ace is low only (B1)
_MELD_SHIFT = ROMI_MELD_BASE - BASIC_MELD_BASE  # Basic action id -> römi's, for ``romi.apply_play``
_PLACE_SHIFT = ROMI_PLACE_BASE - BASIC_PLACE_BASE


def _template_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Basic meld templates as rows (kind, key, low, size, card 0 … card 13), their card-type
    masks, and the template id of each run by (suit, lowest position, length)."""
    templates = meld_templates(False)
    rows = np.full((len(templates), 4 + MAX_SLOTS), -1, np.int64)
    masks = np.zeros(len(templates), np.int64)
    run_ids = np.full((4, NUM_RANKS, NUM_RANKS + 1), -1, np.int64)
    for t, template in enumerate(templates):
        rows[t, :4] = template.kind, template.key, template.low, len(template.cards)
        rows[t, 4:4 + len(template.cards)] = template.cards
        for card in template.cards:
            masks[t] |= 1 << card
        if template.kind == RUN:
            run_ids[template.key, template.low, len(template.cards)] = t
        elif t // SETS_PER_RANK != template.key:
            raise ImportError("rummy_env.compiled.basic expects the sets of each rank together, ranks in order")
    return rows, masks, run_ids


TEMPLATES, TEMPLATE_MASKS, RUN_IDS = _template_arrays()
MAX_MELDS = MAX_TABLE_MELDS["basic"]  # 17

if (DISCARD_BASE, BASIC_MELD_BASE, BASIC_PLACE_BASE, BASIC_NUM_ACTIONS, len(TEMPLATES), MAX_MELDS) != \
        (2, 55, 384, 1285, 329, 17):
    raise ImportError("rummy_env.compiled.basic expects the Basic action ids of rummy_env.encoding")
if (PHASE_DRAW, PHASE_PLAY, PHASE_OVER, SET, RUN) != (0, 1, 2, 0, 1):
    raise ImportError("rummy_env.compiled.basic expects the engine's phases 0, 1, 2 and meld kinds SET 0, RUN 1")


@njit(cache=True)
def _leaves_discard(left, sub, taken, hand):
    """G7: a play leaving ``left`` cards may not leave only the card just taken (``sub``: how many
    of it the play uses); leaving none is going out (B4)."""
    return left == 0 or taken == -1 or left != hand[taken] - sub


@njit(cache=True)
def write_mask(row, mask, hands, sizes, scalars, tk, tkey, tlow, tlen, ts, tpl, tpl_mask, run_ids):
    """The row's legal actions (``GameState._compute_legal`` for Basic) into ``mask``."""
    sc = scalars[row]
    mask[:] = 0
    if sc[PHASE] == PHASE_DRAW:
        mask[_DRAW_ACTION] = 1
        if sc[PILE_LEN]:
            mask[_TAKE_ACTION] = 1
        return
    seat = sc[CURRENT]
    hand = hands[row, seat]
    size = sizes[row, seat]
    taken = sc[TAKEN]
    held = _held(hand)
    for rank in range(NUM_RANKS):  # sets (G5)
        at_rank = held >> rank
        if (at_rank & 1) + ((at_rank >> 13) & 1) + ((at_rank >> 26) & 1) + ((at_rank >> 39) & 1) < 3:
            continue
        for t in range(SETS_PER_RANK * rank, SETS_PER_RANK * rank + SETS_PER_RANK):
            m = tpl_mask[t]
            if m & held == m:
                sub = (m >> taken) & 1 if taken != -1 else 0
                if _leaves_discard(size - tpl[t, 3], sub, taken, hand):
                    mask[BASIC_MELD_BASE + t] = 1
    for suit in range(4):  # runs (G5), ace low
        positions = (held >> (suit * NUM_RANKS)) & 0x1FFF
        if positions == 0:
            continue
        for low in range(NUM_RANKS - 2):
            if not (positions >> low) & 1:
                continue
            for length in range(2, NUM_RANKS - low + 1):
                if not (positions >> (low + length - 1)) & 1:
                    break
                if length >= 3:
                    t = run_ids[suit, low, length]
                    sub = (tpl_mask[t] >> taken) & 1 if taken != -1 else 0
                    if _leaves_discard(size - length, sub, taken, hand):
                        mask[BASIC_MELD_BASE + t] = 1
    left = size - 1
    for s in range(scalars[row, NMELDS]):  # lay-offs on any table meld (B3)
        base = BASIC_PLACE_BASE + NUM_TYPES * s
        key = tkey[row, s]
        if tk[row, s] == RUN:
            low = tlow[row, s]
            length = tlen[row, s]
            high = low + length - 1
            if low > 0:
                card = key * NUM_RANKS + low - 1
                if hand[card] and _leaves_discard(left, 1 if card == taken else 0, taken, hand):
                    mask[base + card] = 1
            if high < _KING:
                card = key * NUM_RANKS + high + 1
                if hand[card] and _leaves_discard(left, 1 if card == taken else 0, taken, hand):
                    mask[base + card] = 1
        else:
            slots = ts[row, s]
            filled = 0
            for suit in range(4):
                if slots[suit] != -1:
                    filled += 1
            if filled < 4:
                for suit in range(4):
                    card = suit * NUM_RANKS + key
                    if slots[suit] == -1 and hand[card] and _leaves_discard(left, 1 if card == taken else 0, taken,
                                                                            hand):
                        mask[base + card] = 1
    for c in range(NUM_NATURAL):
        if hand[c]:
            mask[DISCARD_BASE + c] = 1
    if taken != -1:
        mask[DISCARD_BASE + taken] = 0  # G7


@njit(cache=True)
def _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals, opened, tk,
               tkey, tlow, tlen, ts, observations, masks, to_act, tpl, tpl_mask, run_ids):
    seat = scalars[row, CURRENT]
    write_observation(observations[row], row, seat, lay, scales, inv_target, hands, known, discarded, sizes, pile,
                      rest, scalars, totals, opened, tk, tkey, tlow, tlen, ts)
    to_act[row] = seat
    write_mask(row, masks[row], hands, sizes, scalars, tk, tkey, tlow, tlen, ts, tpl, tpl_mask, run_ids)


@njit(cache=True)
def step_rows(rows, actions, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars,
              totals, turns_taken, opened, has_laid, tk, tkey, tlow, tlen, ts, keys, history, rng, observations, masks,
              to_act, status, tpl, tpl_mask, run_ids):
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
            sc[PHASE] = PHASE_PLAY
        elif a < BASIC_MELD_BASE:  # a discard ends the turn
            card = a - DISCARD_BASE
            _take(card, hands[row, seat], known[row, seat], sc)
            sizes[row, seat] -= 1
            length = sc[PILE_LEN]
            if length:
                rest[row, pile[row, length - 1]] += 1  # the old top joins the cards under it
            pile[row, length] = card
            sc[PILE_LEN] = length + 1
            discarded[row, seat, card] += 1
            if sizes[row, seat] == 0:  # B4: out by the last discard
                ended = True
            else:
                ended = _end_turn(row, seat, lay, stock, pile, rest, scalars, turns_taken, has_laid, keys, rng)
        else:
            shifted = a + _MELD_SHIFT if a < BASIC_PLACE_BASE else a + _PLACE_SHIFT
            sizes[row, seat] += apply_play(shifted, hands[row, seat], known[row, seat], sc, tk[row], tkey[row],
                                           tlow[row], tlen[row], ts[row], tpl)
            if a < BASIC_PLACE_BASE:
                opened[row, seat] = 1
            ended = sizes[row, seat] == 0  # B4: out by melding or laying off every card
        if ended and sc[PHASE] != PHASE_OVER:
            sc[OUTCOME] = OUT
            sc[WINNER] = seat
            sc[PHASE] = PHASE_OVER
        if ended:
            status[row] = ENDED
        else:
            _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals,
                       opened, tk, tkey, tlow, tlen, ts, observations, masks, to_act, tpl, tpl_mask, run_ids)
            status[row] = GOES_ON


@njit(cache=True)
def refresh_rows(rows, lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals, opened,
                 tk, tkey, tlow, tlen, ts, observations, masks, to_act, tpl, tpl_mask, run_ids):
    """Write the observation and mask of ``rows`` afresh (after a deal or a load)."""
    for k in range(rows.shape[0]):
        _write_row(rows[k], lay, scales, inv_target, hands, known, discarded, sizes, pile, rest, scalars, totals,
                   opened, tk, tkey, tlow, tlen, ts, observations, masks, to_act, tpl, tpl_mask, run_ids)


@njit(cache=True)
def deal_rows(rows, deal_keys, deal_key_lens, rebuild_keys, rebuild_key_lens, firsts, lay, hands, known, discarded,
              sizes, stock, pile, rest, scalars, turns_taken, opened, has_laid, keys, rng):
    """A new hand in each of ``rows`` (``GameState.__init__``: one deck, no cut card); no row written."""
    n = lay[L_PLAYERS]
    deck_size = lay[L_DECK]
    hand_size = lay[L_HAND_SIZE]
    for k in range(rows.shape[0]):
        row = rows[k]
        sc = scalars[row]
        deck = stock[row]
        for c in range(deck_size):
            deck[c] = c
        mt19937.seed_state(rng, deal_keys[k], deal_key_lens[k])
        mt19937.shuffle(rng, deck, deck_size)
        hands[row] = 0
        known[row] = 0
        discarded[row] = 0
        rest[row] = 0
        turns_taken[row] = 0
        opened[row] = 0
        has_laid[row] = 0
        top = deck_size
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
        sc[CUT] = -1
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


GAME_TABLES = (TEMPLATES, TEMPLATE_MASKS, RUN_IDS)


class BasicCore(RomiCore):
    """The arrays of ``num_envs`` Basic Rummy hands and the kernels that step them (``RomiCore``'s
    arrays, loading, state and observation; Basic's deal, masks, steps and payments)."""

    @staticmethod
    def _check_rules(rules: RuleSet) -> None:
        if rules.game != "basic":
            raise ValueError(f"BasicCore plays Basic Rummy, not {rules.game!r}")
        if (rules.ace_high, rules.max_jokers, rules.printed_jokers, rules.decks, rules.cut_card,
                rules.later_take_must_be_placed, rules.layoff_needs_own_meld, rules.out_without_discard) != \
                (False, 0, 0, 1, False, False, False, True):
            raise ValueError("BasicCore expects Basic's rules (B1, B3, B4): one deck, no jokers, ace low, lay-offs "
                             "on any meld, out without a last discard")

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
                  self.hands, self.known, self.discarded, self.sizes, self.stock, self.pile, self.rest, self.scalars,
                  self.turns_taken, self.opened, self.has_laid, self.keys, self.rng)
        self._refresh(array)

    def _refresh(self, rows: np.ndarray) -> None:
        refresh_rows(rows, self.lay, self.scales, self.inv_target, self.hands, self.known, self.discarded, self.sizes,
                     self.pile, self.rest, self.scalars, self.totals, self.opened, *self._table(), self.observations,
                     self.action_masks, self.to_act, *GAME_TABLES)
        self.status[rows] = GOES_ON

    def first_refusal(self, rows: np.ndarray, actions: np.ndarray) -> tuple[int, int]:
        found = check_actions(rows, actions, self.action_masks, BASIC_NUM_ACTIONS)
        return (-1, 0) if found < 0 else (found >> 2, found & 3)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> list[int]:
        """Play ``actions[k]`` in row ``rows[k]`` (all allowed); the rows whose hand ended, in order."""
        status = self.status
        status.fill(GOES_ON)
        step_rows(rows, actions, self.lay, self.scales, self.inv_target, self.hands, self.known, self.discarded,
                  self.sizes, self.stock, self.pile, self.rest, self.scalars, self.totals, self.turns_taken,
                  self.opened, self.has_laid, *self._table(), self.keys, self.history, self.rng, self.observations,
                  self.action_masks, self.to_act, status, *GAME_TABLES)
        if status.any():
            return rows[status[rows] == ENDED].tolist()
        return []

    def load(self, row: int, state, action_ids: dict) -> None:
        if len(state.table) > MAX_MELDS:
            raise ValueError(f"{len(state.table)} table melds, more than the {MAX_MELDS} the encoding holds")
        super().load(row, state, action_ids)

    def ended_hand(self, row: int) -> tuple[HandResult, int]:
        """(result, turns played) of the hand that ended in ``row`` (B5, B6; G8, G9: nobody pays)."""
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
            else:  # B5: the value of the cards left in hand
                hand = self.hands[row, p].tolist()
                payments.append(sum(values[c] * k for c, k in enumerate(hand) if k))
        if rules.rummy_bonus and not self.has_laid[row, winner]:
            payments = [2 * p for p in payments]  # B6: out without having laid anything before
        return HandResult("out", winner, tuple(payments)), int(sc[TURN])
