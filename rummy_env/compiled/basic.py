"""Basic Rummy (G1–G10, B1–B6) for many hands at once, in numba: the core behind
``VectorGame("basic", backend="numba")``.

The turn, the deal and the observation are the skeleton's (``rummy_env.compiled.skeleton``), the
melds, lay-offs and payments the table games' (``rummy_env.compiled.table``). What is Basic's own
is written here:

* **Masks** are ``GameState._compute_legal`` without a look-ahead: with nothing owed every play the
  table rules allow is legal. Melds are the 329 Basic templates (``melds.meld_templates(False)``,
  ace low) whose cards are all held; lay-offs are a run's open ends (ace low: nothing above the
  king) and a set's missing suits, on any table meld (B3). A play may empty the hand (B4); one that
  would leave only the card just taken to discard may not (G7).
* **Going out** (B4) ends the hand when a play empties the hand, or by a last discard (the
  skeleton's). Payments are the others' hand values (B5), doubled when the winner had laid nothing
  before this turn (B6, the ``rummy_bonus`` option).

``tests/test_vector_compiled.py`` steps this core and the Python engine in lockstep;
``benchmarks/lockstep_vector.py --games basic`` runs the long form.
"""

from __future__ import annotations

from numba import njit

from ..cards import NUM_RANKS, NUM_TYPES
from ..encoding import BASIC_MELD_BASE, BASIC_NUM_ACTIONS, BASIC_PLACE_BASE, DISCARD_BASE
from ..game import PHASE_DRAW
from ..games.basic import SPEC
from ..melds import RUN
from ..ruleset import RuleSet
from . import skeleton, table
from .skeleton import CURRENT, ENDED, GAME_MOVE, GOES_ON, NMELDS, PHASE, TAKEN, held_bits
from .table import SETS_PER_RANK

_KING = NUM_RANKS - 1  # the highest run position: the ace is low only (B1)

TEMPLATES, TEMPLATE_MASKS, RUN_IDS = table.template_arrays(False)

if (DISCARD_BASE, BASIC_MELD_BASE, BASIC_PLACE_BASE, BASIC_NUM_ACTIONS, len(TEMPLATES)) != (2, 55, 384, 1285, 329):
    raise ImportError("rummy_env.compiled.basic expects the Basic action ids of rummy_env.encoding")


@njit(cache=True)
def _leaves_discard(left, sub, taken, hand):
    """G7: a play leaving ``left`` cards may not leave only the card just taken (``sub``: how many
    of it the play uses); leaving none is going out (B4)."""
    return left == 0 or taken == -1 or left != hand[taken] - sub


@njit(cache=True)
def _write_mask(row, seat, mask, s, tpl, tpl_mask, run_ids):
    """The row's legal actions (``GameState._compute_legal`` for Basic) into ``mask``."""
    sc = s.scalars[row]
    mask[:] = 0
    if sc[PHASE] == PHASE_DRAW:
        skeleton.draw_mask(mask, sc)
        return
    hand = s.hands[row, seat]
    size = s.sizes[row, seat]
    taken = sc[TAKEN]
    held = held_bits(hand)
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
    tk, tkey, tlow, tlen, ts = s.table_kind[row], s.table_key[row], s.table_low[row], s.table_len[row], \
        s.table_slots[row]
    for meld in range(sc[NMELDS]):  # lay-offs on any table meld (B3)
        base = BASIC_PLACE_BASE + NUM_TYPES * meld
        key = tkey[meld]
        if tk[meld] == RUN:
            low = tlow[meld]
            high = low + tlen[meld] - 1
            if low > 0:
                card = key * NUM_RANKS + low - 1
                if hand[card] and _leaves_discard(left, 1 if card == taken else 0, taken, hand):
                    mask[base + card] = 1
            if high < _KING:
                card = key * NUM_RANKS + high + 1
                if hand[card] and _leaves_discard(left, 1 if card == taken else 0, taken, hand):
                    mask[base + card] = 1
        else:
            slots = ts[meld]
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
    skeleton.discard_mask(mask, hand, taken)


@njit(cache=True)
def _write_row(row, s, tpl, tpl_mask, run_ids):
    """The row's observation and mask for its seat to act (never left to Python)."""
    seat = table.observe_row(row, s)
    _write_mask(row, seat, s.action_masks[row], s, tpl, tpl_mask, run_ids)
    return GOES_ON


@njit(cache=True)
def write_rows(rows, s, tpl, tpl_mask, run_ids):
    """Write the observation, mask and status of ``rows`` afresh (after a deal or a load)."""
    for k in range(rows.shape[0]):
        s.status[rows[k]] = _write_row(rows[k], s, tpl, tpl_mask, run_ids)


@njit(cache=True)
def step_rows(rows, actions, s, tpl, tpl_mask, run_ids):
    """Play ``actions[k]`` (allowed by its row's mask) in row ``rows[k]``; write the row's ``status``."""
    for k in range(rows.shape[0]):
        row = rows[k]
        a = actions[k]
        done = skeleton.turn_step(row, a, s)
        if done == GAME_MOVE:  # a meld or a lay-off (B3); out when it empties the hand (B4)
            if a < BASIC_PLACE_BASE:
                table.meld_row(row, a - BASIC_MELD_BASE, s, tpl)
            else:
                table.place_row(row, (a - BASIC_PLACE_BASE) // NUM_TYPES, (a - BASIC_PLACE_BASE) % NUM_TYPES, False, s)
            seat = s.scalars[row, CURRENT]
            if s.sizes[row, seat] == 0:
                skeleton.win(row, seat, s)
                done = ENDED
        s.status[row] = ENDED if done == ENDED else _write_row(row, s, tpl, tpl_mask, run_ids)


class BasicCore(table.TableCore):
    """The arrays of ``num_envs`` Basic Rummy hands and the kernels that step them."""

    tables = (TEMPLATES, TEMPLATE_MASKS, RUN_IDS)
    _step_rows = staticmethod(step_rows)
    _write_rows = staticmethod(write_rows)

    @staticmethod
    def _check_rules(rules: RuleSet) -> None:
        if rules.spec is not SPEC:
            raise ValueError(f"BasicCore plays {SPEC.title}, not {rules.game!r}: use backend='python'")
        if (rules.ace_high, rules.max_jokers, rules.printed_jokers, rules.decks, rules.cut_card,
                rules.later_take_must_be_placed, rules.layoff_needs_own_meld, rules.out_without_discard) != \
                (False, 0, 0, 1, False, False, False, True):
            raise ValueError("BasicCore expects Basic's rules (B1, B3, B4): one deck, no jokers, ace low, lay-offs "
                             "on any meld, out without a last discard")
