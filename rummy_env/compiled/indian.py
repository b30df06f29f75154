"""Indian Rummy (I1–I9, G1–G10) for many hands at once, in numba: the core behind
``VectorGame(backend="numba")``.

The turn, the deal and the observation are the skeleton's (``rummy_env.compiled.skeleton``);
what is Indian's own is written here:

* **Declarations** (I5) are exact: the kernel runs the solver's quick necessary tests
  (``rummy_env.solver.declare_discards``: a pure run; cards that cannot meld; cards that need
  two jokers; with one joker, the cards that must share its meld) and marks the rare hands that
  pass them; ``IndianCore`` asks ``solver.declare_discards`` which discards declare (its last step
  is the compiled penalty of each discard's hand). The penalties of a
  declared hand (I6, I7) come from ``solver.indian_penalty`` too.
* **Masks**: draw or take the discard top; discard any card but the one just taken (G7); declare
  with a discard that the solver allows.
* **The wild card** (I2) is the skeleton's ``SHOWN`` card; its rank is the declaration's wild rank.

``tests/test_vector_compiled.py`` steps this core and the Python engine in lockstep.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import solver
from ..cards import JOKER, NUM_NATURAL, NUM_RANKS
from ..encoding import INDIAN_DECLARE_BASE, INDIAN_NUM_ACTIONS
from ..game import PHASE_DRAW
from ..games.indian import SPEC
from ..ruleset import RuleSet
from . import skeleton
from .skeleton import ASK_PYTHON, CURRENT, ENDED, GAME_MOVE, GOES_ON, IN_RUN, LONE, PHASE, SHOWN, TAKEN, \
    bit_count, bit_length

_RUN_STARTS = sum(1 << (s * NUM_RANKS + r) for s in range(4) for r in range(NUM_RANKS - 2))
_QUEENS = sum(1 << (s * NUM_RANKS + 11) for s in range(4))
_ACES = sum(1 << (s * NUM_RANKS) for s in range(4))

if (INDIAN_DECLARE_BASE, INDIAN_NUM_ACTIONS) != (55, 108):
    raise ImportError("rummy_env.compiled.indian expects the Indian action ids of rummy_env.encoding")


# ----------------------------------------------------------------------------- declarations


@njit(cache=True)
def _run_window(ranks, held, spare):
    """``solver._run_window`` (ace high)."""
    for attempt in range(2):
        if attempt == 0:
            positions, mask = ranks, held
        else:
            if not ranks & 1:
                break
            positions, mask = (ranks & ~1) | (1 << 13), held | (1 << 13)
        tries = 3 if spare else 1
        for t in range(tries):
            p = positions
            if t == 1:
                p = positions ^ (positions & -positions)
            elif t == 2:
                p = positions ^ (1 << (bit_length(positions) - 1))
            if p == 0:
                continue
            low = bit_length(p & -p) - 1
            high = bit_length(p) - 1
            if high - low + 1 <= 13 and bit_count(((1 << (high + 1)) - (1 << low)) & ~mask) <= 1:
                return True
    return False


@njit(cache=True)
def _joker_meld_after_discard(c0, c1, c2, c3, t0, t1, t2, t3, m0, m1, m2, m3):
    """``solver._joker_meld_after_discard`` (ace high), on per-suit masks."""
    cards = (c0, c1, c2, c3)
    twice = (t0, t1, t2, t3)
    held = (m0, m1, m2, m3)
    counts = (bit_count(c0) + bit_count(t0), bit_count(c1) + bit_count(t1), bit_count(c2) + bit_count(t2),
              bit_count(c3) + bit_count(t3))
    count = counts[0] + counts[1] + counts[2] + counts[3]
    if count <= 2:
        return True
    suits = 0
    for s in range(4):
        if counts[s]:
            suits += 1
    if count == 3:
        for s in range(4):
            for t in range(s + 1, 4):
                if counts[s] and counts[t] and cards[s] & cards[t]:
                    return True
    if suits > 2:
        return False
    spare = True
    main = -1
    if suits == 2:
        a = -1
        b = -1
        for s in range(4):
            if counts[s]:
                if a == -1:
                    a = s
                else:
                    b = s
        if counts[a] == 1:
            main = b
        elif counts[b] == 1:
            main = a
        else:
            return False
        spare = False
    else:
        for s in range(4):
            if counts[s]:
                main = s
    doubled = twice[main]
    if doubled:
        if not spare or doubled & (doubled - 1):
            return False
        spare = False
    return _run_window(cards[main], held[main], spare)


@njit(cache=True)
def may_declare(hand, wild_rank, in_run, lone):
    """False when ``solver.declare_discards(hand, wild_rank)`` is surely empty: its quick tests,
    in its order. True sends the hand to the solver."""
    held = 0
    doubles = 0
    for c in range(NUM_NATURAL):
        if hand[c]:
            held |= 1 << c
            if hand[c] > 1:
                doubles |= 1 << c
    if not (held & (held >> 1) & (held >> 2) & _RUN_STARTS or held & (held >> 1) & _QUEENS & ((held & _ACES) << 11)):
        return False  # I5: no pure run
    m0, m1, m2, m3 = held & 0x1FFF, (held >> 13) & 0x1FFF, (held >> 26) & 0x1FFF, (held >> 39) & 0x1FFF
    jokers = np.int64(hand[JOKER])
    wild_bit = 0
    if wild_rank >= 0:
        wild_bit = 1 << wild_rank
        for s in range(4):
            jokers += hand[s * NUM_RANKS + wild_rank]
    in_set = (m0 & m1 & (m2 | m3)) | (m2 & m3 & (m0 | m1))
    if jokers < 2:
        keep = ~wild_bit
        if jokers == 0:
            keep &= ~in_set
            l0, l1, l2, l3 = m0 & ~in_run[m0] & keep, m1 & ~in_run[m1] & keep, m2 & ~in_run[m2] & keep, \
                m3 & ~in_run[m3] & keep
        else:
            l0 = lone[m0] & ~(m1 | m2 | m3) & keep
            l1 = lone[m1] & ~(m0 | m2 | m3) & keep
            l2 = lone[m2] & ~(m0 | m1 | m3) & keep
            l3 = lone[m3] & ~(m0 | m1 | m2) & keep
        dead = bit_count(l0) + bit_count(l1) + bit_count(l2) + bit_count(l3)
        if dead > 1:
            return False
        if dead:
            suit = 0 if l0 else 1 if l1 else 2 if l2 else 3
            lost = (l0, l1, l2, l3)[suit]
            if hand[suit * NUM_RANKS + bit_length(lost) - 1] > 1:
                return False
    if jokers >= 2:
        keep = ~wild_bit
        need = 0
        lost0 = lone[m0] & ~(m1 | m2 | m3) & keep
        lost1 = lone[m1] & ~(m0 | m2 | m3) & keep
        lost2 = lone[m2] & ~(m0 | m1 | m3) & keep
        lost3 = lone[m3] & ~(m0 | m1 | m2) & keep
        if lost0:
            need += 4 if lost0 & doubles else 2
        if lost1:
            need += 4 if lost1 & (doubles >> 13) else 2
        if lost2:
            need += 4 if lost2 & (doubles >> 26) else 2
        if lost3:
            need += 4 if lost3 & (doubles >> 39) else 2
        if need - 2 > jokers:
            return False
    if jokers == 1:
        keep = ~in_set & ~wild_bit
        a0, a1, a2, a3 = m0 & ~in_run[m0] & keep, m1 & ~in_run[m1] & keep, m2 & ~in_run[m2] & keep, \
            m3 & ~in_run[m3] & keep
        if not _joker_meld_after_discard(a0, a1, a2, a3, a0 & doubles, a1 & (doubles >> 13), a2 & (doubles >> 26),
                                         a3 & (doubles >> 39), m0, m1, m2, m3):
            return False
    return True


# ----------------------------------------------------------------------------- rows


@njit(cache=True)
def wild_rank(shown):
    """The wild rank (I2) of the wild card ``shown`` (a printed joker: aces), or -1 without one."""
    if shown == -1:
        return -1
    return 0 if shown == JOKER else shown % NUM_RANKS


@njit(cache=True)
def _write_row(row, s, in_run, lone):
    """The row's observation and mask for its seat to act; ``ASK_PYTHON`` when its declarations
    need the solver."""
    seat = skeleton.observe_row(row, s)
    sc = s.scalars[row]
    mask = s.action_masks[row]
    mask[:] = 0
    if sc[PHASE] == PHASE_DRAW:
        skeleton.draw_mask(mask, sc)
        return GOES_ON
    hand = s.hands[row, seat]
    skeleton.discard_mask(mask, hand, sc[TAKEN])
    return ASK_PYTHON if may_declare(hand, wild_rank(sc[SHOWN]), in_run, lone) else GOES_ON


@njit(cache=True)
def write_rows(rows, s, in_run, lone):
    """Write the observation, mask and status of ``rows`` afresh (after a deal or a load)."""
    for k in range(rows.shape[0]):
        s.status[rows[k]] = _write_row(rows[k], s, in_run, lone)


@njit(cache=True)
def step_rows(rows, actions, s, in_run, lone):
    """Play ``actions[k]`` (allowed by its row's mask) in row ``rows[k]``; write the row's ``status``."""
    for k in range(rows.shape[0]):
        row = rows[k]
        done = skeleton.turn_step(row, actions[k], s)
        if done == GAME_MOVE:  # a declaration (I5): the discard, and the hand ends
            seat = s.scalars[row, CURRENT]
            skeleton.discard(row, seat, actions[k] - INDIAN_DECLARE_BASE, s)
            skeleton.win(row, seat, s)
            done = ENDED
        s.status[row] = ENDED if done == ENDED else _write_row(row, s, in_run, lone)


# ----------------------------------------------------------------------------- the batch


class IndianCore(skeleton.Core):
    """The arrays of ``num_envs`` Indian hands and the kernels that step them."""

    MOVES_PER_TURN = (2, 1)
    tables = (IN_RUN, LONE)
    _step_rows = staticmethod(step_rows)
    _write_rows = staticmethod(write_rows)
    _write_observation = staticmethod(skeleton.write_observation)

    @staticmethod
    def _check_rules(rules: RuleSet) -> None:
        if rules.spec is not SPEC:
            raise ValueError(f"IndianCore plays {SPEC.title}, not {rules.game!r}: use backend='python'")

    def _wild_rank(self, row: int) -> int | None:
        rank = int(wild_rank(self.scalars[row, SHOWN]))
        return None if rank < 0 else rank

    def _ask_python(self, rows: np.ndarray) -> None:
        """The declarations (I5) of rows whose hands passed the quick tests, from the exact solver."""
        masks = self.action_masks
        for row in rows.tolist():
            sc = self.scalars[row]
            cards = solver.declare_discards(self.hands[row, sc[CURRENT]].tolist(), self._wild_rank(row))
            taken = int(sc[TAKEN])
            for card in cards:
                if card != taken:  # G7
                    masks[row, INDIAN_DECLARE_BASE + card] = 1

    def _payments(self, row: int, winner: int) -> tuple[int, ...]:
        """What each player pays for a declared hand: the solver's penalty (I6, I7), capped."""
        wild = self._wild_rank(row)
        cap = self.rules.penalty_cap
        out = []
        for p in range(self.rules.num_players):
            pay = 0 if p == winner else solver.indian_penalty(self.hands[row, p].tolist(), wild)
            out.append(pay if cap is None else min(pay, cap))
        return tuple(out)
