"""Indian Rummy (I1–I9, G1–G10) for many hands at once, in numba: the core behind
``VectorGame(backend="numba")``.

Every hand of a batch lives in rows of a few arrays (``IndianCore``); the kernels step all rows in
one call and write each row's observation and action mask straight into ``VectorGame``'s buffers.
What they compute is what ``rummy_env.game`` and ``rummy_env.encoding`` compute, with the same
numbers:

* **Deal and stock rebuild** (I1, I2, G8) use CPython's shuffles bit for bit
  (``rummy_env.compiled.mt19937``): the deck in the engine's order, shuffled by the generator of
  ``shuffle_rng(seed, 0)``, dealt one card a player from the first seat, the discard top, then
  the wild card; a rebuilt stock is shuffled by ``shuffle_rng(seed, 1)``.
* **A turn** (I4, G7): draw or take the discard top; discard a card (not the one just taken) or
  declare (I5); the turn cap (G9) and the stalemate (G8) end the hand.
* **Declarations** (I5) are exact: the kernel runs the solver's quick necessary tests
  (``rummy_env.solver.declare_discards``: a pure run; cards that cannot meld; cards that need
  two jokers; with one joker, the cards that must share its meld) and marks the rare hands that
  pass them; ``IndianCore.settle_declares`` asks the Python solver which discards declare. The
  penalties of a declared hand (I6, I7) come from ``solver.indian_penalty`` too.
* **Observations** are ``ObservationEncoder.encode``'s: small integers times the same float32
  scales, the match scores in float64 rounded to float32, as ``encode`` does.

``tests/test_vector_compiled.py`` steps this core and the Python engine in lockstep.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import solver
from ..cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_TYPES
from ..encoding import DISCARD_BASE, INDIAN_DECLARE_BASE, INDIAN_NUM_ACTIONS, discard_cap, layout_for
from ..game import PHASE_DRAW, PHASE_OVER, PHASE_PLAY, HandResult
from ..ruleset import RuleSet
from . import mt19937

# Columns of the per-row scalars (``IndianCore.scalars``).
CURRENT, PHASE, TURN, TAKEN, REBUILDS, FIRST, WILD, WILD_RANK, STOCK_LEN, PILE_LEN, HISTORY_LEN, OUTCOME, \
    WINNER, KEY_LEN = range(14)
NUM_SCALARS = 14

# ``OUTCOME``: how the row's hand ended (0 while it runs).
PLAYING, DECLARED, STALEMATE, CUT_OFF = range(4)
OUTCOME_NAMES = (None, "declare", "stalemate", "cut_off")

# ``status`` after a step: the row goes on, needs the Python solver for its declarations, or ended.
GOES_ON, ASK_SOLVER, ENDED = range(3)

# Entries of the layout array the kernels read (offsets in the observation, then rule numbers).
(L_HAND, L_TOP, L_REST, L_TAKEN, L_WILD, L_KNOWN, L_DISCARDED, L_PHASE, L_TO_ACT, L_STOCK, L_REBUILT, L_SIZES,
 L_MATCH, L_TURN, L_PLAYERS, L_CAP, L_MAX_TURNS, L_DECK, L_HAND_SIZE, L_MATCH_MODE, L_HISTORY) = range(21)

_DRAW_ACTION = 0
_TAKE_ACTION = 1
_RUN_STARTS = sum(1 << (s * NUM_RANKS + r) for s in range(4) for r in range(NUM_RANKS - 2))
_QUEENS = sum(1 << (s * NUM_RANKS + 11) for s in range(4))
_ACES = sum(1 << (s * NUM_RANKS) for s in range(4))


def _mask_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per 13-bit rank mask of one suit (ace high): the ranks in a run of three held, and the
    ranks with no other card of the suit within two ranks (the solver's ``_mask_facts``)."""
    facts = solver._mask_facts(True)
    in_run = np.array([f[2] for f in facts], np.int64)
    lone = np.array([f[3] for f in facts], np.int64)
    return in_run, lone


IN_RUN, LONE = _mask_tables()

if (DISCARD_BASE, INDIAN_DECLARE_BASE, INDIAN_NUM_ACTIONS, JOKER, NUM_TYPES) != (2, 55, 108, 52, 53):
    raise ImportError("rummy_env.compiled.indian expects the Indian action ids of rummy_env.encoding")
if (PHASE_DRAW, PHASE_PLAY, PHASE_OVER) != (0, 1, 2):
    raise ImportError("rummy_env.compiled.indian expects the engine's phases 0, 1, 2")


# ----------------------------------------------------------------------------- declarations


@njit(cache=True)
def _bits(x):
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True)
def _length(x):
    """``int.bit_length`` of ``x`` >= 0."""
    n = 0
    while x:
        x >>= 1
        n += 1
    return n


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
                p = positions ^ (1 << (_length(positions) - 1))
            if p == 0:
                continue
            low = _length(p & -p) - 1
            high = _length(p) - 1
            if high - low + 1 <= 13 and _bits(((1 << (high + 1)) - (1 << low)) & ~mask) <= 1:
                return True
    return False


@njit(cache=True)
def _joker_meld_after_discard(c0, c1, c2, c3, t0, t1, t2, t3, m0, m1, m2, m3):
    """``solver._joker_meld_after_discard`` (ace high), on per-suit masks."""
    cards = (c0, c1, c2, c3)
    twice = (t0, t1, t2, t3)
    held = (m0, m1, m2, m3)
    counts = (_bits(c0) + _bits(t0), _bits(c1) + _bits(t1), _bits(c2) + _bits(t2), _bits(c3) + _bits(t3))
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
        dead = _bits(l0) + _bits(l1) + _bits(l2) + _bits(l3)
        if dead > 1:
            return False
        if dead:
            suit = 0 if l0 else 1 if l1 else 2 if l2 else 3
            lost = (l0, l1, l2, l3)[suit]
            if hand[suit * NUM_RANKS + _length(lost) - 1] > 1:
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
def write_observation(out, row, seat, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest,
                      scalars, totals):
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
    if sc[WILD] != -1:
        out[lay[L_WILD] + sc[WILD]] = 1.0
    cap = lay[L_CAP]
    size_scale = scales[1]
    for r in range(n):
        p = seat + r
        if p >= n:
            p -= n
        at = lay[L_KNOWN] + NUM_TYPES * r
        row_known = known[row, p]
        for c in range(NUM_TYPES):
            out[at + c] = row_known[c]
        at = lay[L_DISCARDED] + NUM_TYPES * r
        row_discarded = discarded[row, p]
        for c in range(NUM_TYPES):
            d = row_discarded[c]
            out[at + c] = d if d < cap else cap
        out[lay[L_SIZES] + r] = np.float32(sizes[row, p]) * size_scale
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
def _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars, totals,
               observations, masks, to_act, in_run, lone):
    """The row's observation and mask for its seat to act; True when its declarations need the solver."""
    sc = scalars[row]
    seat = sc[CURRENT]
    write_observation(observations[row], row, seat, lay, scales, inv_target, hands, known, discarded, sizes, stock,
                      pile, rest, scalars, totals)
    to_act[row] = seat
    mask = masks[row]
    mask[:] = 0
    if sc[PHASE] == PHASE_DRAW:
        mask[_DRAW_ACTION] = 1
        if sc[PILE_LEN]:
            mask[_TAKE_ACTION] = 1
        return False
    hand = hands[row, seat]
    for c in range(NUM_TYPES):
        if hand[c]:
            mask[DISCARD_BASE + c] = 1
    taken = sc[TAKEN]
    if taken != -1:
        mask[DISCARD_BASE + taken] = 0  # G7
    return may_declare(hand, sc[WILD_RANK], in_run, lone)


@njit(cache=True)
def check_actions(rows, actions, masks, num_actions):
    """The first ``k`` whose action (for row ``rows[k]``) is out of range (code 1) or forbidden by
    its row's mask (code 2), as ``k * 4 + code``; -1 when every action is allowed."""
    for k in range(actions.shape[0]):
        a = actions[k]
        if a < 0 or a >= num_actions:
            return k * 4 + 1
        if not masks[rows[k], a]:
            return k * 4 + 2
    return -1


@njit(cache=True)
def _remove(row, seat, card, hands, known, sizes):
    hands[row, seat, card] -= 1
    if known[row, seat, card]:
        known[row, seat, card] -= 1
    sizes[row, seat] -= 1


@njit(cache=True)
def _push_pile(row, card, pile, rest, scalars):
    length = scalars[row, PILE_LEN]
    if length:
        rest[row, pile[row, length - 1]] += 1  # the old top joins the cards under it
    pile[row, length] = card
    scalars[row, PILE_LEN] = length + 1


@njit(cache=True)
def step_rows(rows, actions, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars,
              totals, turns_taken, keys, history, rng, observations, masks, to_act, status, in_run, lone):
    """Play ``actions[k]`` (allowed by its row's mask) in row ``rows[k]``; write the row's ``status``."""
    n = lay[L_PLAYERS]
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
        else:
            declare = a >= INDIAN_DECLARE_BASE
            card = a - (INDIAN_DECLARE_BASE if declare else DISCARD_BASE)
            _remove(row, seat, card, hands, known, sizes)
            _push_pile(row, card, pile, rest, scalars)
            discarded[row, seat, card] += 1
            if declare:  # I5: the hand ends; the penalties are the solver's (I6, I7)
                sc[OUTCOME] = DECLARED
                sc[WINNER] = seat
                sc[PHASE] = PHASE_OVER
                ended = True
            else:  # the end of the turn
                turns_taken[row, seat] += 1
                sc[TAKEN] = -1
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
                        ended = True
                if not ended and sc[TURN] >= lay[L_MAX_TURNS]:  # G9
                    sc[OUTCOME] = CUT_OFF
                    sc[PHASE] = PHASE_OVER
                    ended = True
        if ended:
            status[row] = ENDED
        elif _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars,
                        totals, observations, masks, to_act, in_run, lone):
            status[row] = ASK_SOLVER
        else:
            status[row] = GOES_ON


@njit(cache=True)
def refresh_rows(rows, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars, totals,
                 observations, masks, to_act, status, in_run, lone):
    """Write the observation and mask of ``rows`` afresh (after a hand was copied in); their ``status``."""
    for k in range(rows.shape[0]):
        row = rows[k]
        if _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars,
                      totals, observations, masks, to_act, in_run, lone):
            status[row] = ASK_SOLVER
        else:
            status[row] = GOES_ON


@njit(cache=True)
def deal_rows(rows, deal_keys, deal_key_lens, rebuild_keys, rebuild_key_lens, firsts, lay, scales, inv_target, hands,
              known, discarded, sizes, stock, pile, rest, scalars, totals, turns_taken, keys, history, rng,
              observations, masks, to_act, in_run, lone, wild_joker):
    """A new hand in each of ``rows`` (``GameState.__init__``), with its observation and mask."""
    n = lay[L_PLAYERS]
    deck_size = lay[L_DECK]
    hand_size = lay[L_HAND_SIZE]
    for k in range(rows.shape[0]):
        row = rows[k]
        sc = scalars[row]
        deck = stock[row]
        at = 0
        for c in range(NUM_NATURAL):  # two decks (I1): each natural card twice, then the printed jokers
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
        first = firsts[k]
        top = deck_size
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
        sc[WILD] = -1
        sc[WILD_RANK] = -1
        if wild_joker:  # I2
            top -= 1
            sc[WILD] = deck[top]
            sc[WILD_RANK] = 0 if deck[top] == JOKER else deck[top] % NUM_RANKS
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
        length = rebuild_key_lens[k]
        keys[row, :length] = rebuild_keys[k, :length]
        sc[KEY_LEN] = length
        _write_row(row, lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars, totals,
                   observations, masks, to_act, in_run, lone)


# ----------------------------------------------------------------------------- the batch


HISTORY_LIMIT = 1 << 13
"""Moves of a hand kept for ``IndianCore.state_dict`` (hands longer than this have no state)."""


class IndianCore:
    """The arrays of ``num_envs`` Indian hands and the kernels that step them."""

    def __init__(self, rules: RuleSet, num_envs: int, observations: np.ndarray, action_masks: np.ndarray,
                 to_act: np.ndarray, match_mode: bool):
        if rules.game != "indian":
            raise ValueError(f"IndianCore plays Indian Rummy, not {rules.game!r}")
        self.rules = rules
        n, size = rules.num_players, num_envs
        deck = NUM_NATURAL * rules.decks + rules.printed_jokers
        layout = layout_for(rules).slices
        history = min(2 * rules.max_turns + 1, HISTORY_LIMIT)
        lay = np.zeros(21, np.int64)
        for index, name in ((L_HAND, "hand"), (L_TOP, "discard_top"), (L_REST, "discard_rest"),
                            (L_TAKEN, "just_taken"), (L_WILD, "wild_card"), (L_KNOWN, "known"),
                            (L_DISCARDED, "discarded"), (L_PHASE, "phase"), (L_TO_ACT, "to_act"),
                            (L_STOCK, "stock_size"), (L_REBUILT, "stock_rebuilt"), (L_SIZES, "hand_sizes"),
                            (L_MATCH, "match_scores"), (L_TURN, "turn")):
            lay[index] = layout[name].start
        lay[L_PLAYERS] = n
        lay[L_CAP] = discard_cap(rules.decks, rules.printed_jokers)
        lay[L_MAX_TURNS] = rules.max_turns
        lay[L_DECK] = deck
        lay[L_HAND_SIZE] = rules.hand_size
        lay[L_MATCH_MODE] = 1 if match_mode else 0
        lay[L_HISTORY] = history
        self.lay = lay
        # the encoder's float32 scales (``ObservationEncoder._scale``)
        self.scales = np.array([1.0 / deck, 1.0 / rules.hand_size, 1.0 / 127], np.float32)
        self.inv_target = 1.0 / rules.match_target
        self.wild_joker = bool(rules.wild_joker)
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
        self.keys = np.zeros((size, mt19937.KEY_WORDS), np.int64)
        self.history = np.zeros((size, history), np.int16)
        self.rng = np.zeros(mt19937.STATE_WORDS + 1, np.int64)
        self.status = np.zeros(size, np.int8)
        self.observations = observations
        self.action_masks = action_masks
        self.to_act = to_act

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
        deal_rows(np.asarray(rows, np.int64), deal_keys, deal_lens, rebuild_keys, rebuild_lens,
                  np.asarray(firsts, np.int64), self.lay, self.scales, self.inv_target, self.hands, self.known,
                  self.discarded, self.sizes, self.stock, self.pile, self.rest, self.scalars, self.totals,
                  self.turns_taken, self.keys, self.history, self.rng, self.observations, self.action_masks,
                  self.to_act, IN_RUN, LONE, self.wild_joker)

    def first_refusal(self, rows: np.ndarray, actions: np.ndarray) -> tuple[int, int]:
        """(k, 1 out of range / 2 forbidden) of the first action ``actions[k]`` that row ``rows[k]``'s
        mask refuses, or (-1, 0)."""
        found = check_actions(rows, actions, self.action_masks, INDIAN_NUM_ACTIONS)
        return (-1, 0) if found < 0 else (found >> 2, found & 3)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> list[int]:
        """Play ``actions[k]`` in row ``rows[k]`` (all allowed); the rows whose hand ended, in order."""
        status = self.status
        status.fill(GOES_ON)
        step_rows(rows, actions, self.lay, self.scales, self.inv_target, self.hands, self.known, self.discarded,
                  self.sizes, self.stock, self.pile, self.rest, self.scalars, self.totals, self.turns_taken, self.keys,
                  self.history, self.rng, self.observations, self.action_masks, self.to_act, status, IN_RUN, LONE)
        if status.any():
            asks = np.flatnonzero(status == ASK_SOLVER)
            if asks.size:
                self.settle_declares(asks)
            return rows[status[rows] == ENDED].tolist()
        return []

    def load(self, row: int, state, action_ids: dict) -> None:
        """Copy ``state`` (an Indian ``GameState`` before its end) into ``row`` and write its row
        (``action_ids``: engine move to action id, for the history)."""
        key = mt19937.seed_key(f"{state.seed}:1")  # shuffle_rng(seed, 1), for a rebuild (G8); it may refuse
        stock, discard = state.stock, state.discard
        self.hands[row] = state.hands
        self.known[row] = state.known
        self.discarded[row] = state.discarded
        self.sizes[row] = [sum(hand) for hand in state.hands]
        self.stock[row, :len(stock)] = stock
        self.pile[row, :len(discard)] = discard
        self.rest[row] = np.bincount(np.asarray(discard[:-1], np.int64), minlength=NUM_TYPES)
        self.turns_taken[row] = state.turns_taken
        sc = self.scalars[row]
        sc[CURRENT], sc[PHASE], sc[TURN], sc[TAKEN] = state.current, state.phase, state.turn, state.taken_card
        sc[REBUILDS], sc[FIRST], sc[WILD] = state.rebuilds, state.first_player, state.wild_card
        sc[WILD_RANK] = -1 if state.wild_rank is None else state.wild_rank
        sc[STOCK_LEN], sc[PILE_LEN], sc[OUTCOME], sc[WINNER] = len(stock), len(discard), PLAYING, -1
        moves = [action_ids[move] for move in state.history]
        sc[HISTORY_LEN] = len(moves)
        kept = min(len(moves), self.history_limit)
        self.history[row, :kept] = moves[:kept]
        self.keys[row, :len(key)] = key
        sc[KEY_LEN] = len(key)
        rows = np.array([row], np.int64)
        refresh_rows(rows, self.lay, self.scales, self.inv_target, self.hands, self.known, self.discarded, self.sizes,
                     self.stock, self.pile, self.rest, self.scalars, self.totals, self.observations,
                     self.action_masks, self.to_act, self.status, IN_RUN, LONE)
        if self.status[row] == ASK_SOLVER:
            self.settle_declares(rows)
        self.status[row] = GOES_ON

    def settle_declares(self, rows: np.ndarray) -> None:
        """The declarations (I5) of rows whose hands passed the quick tests, from the exact solver."""
        masks = self.action_masks
        for row in rows.tolist():
            sc = self.scalars[row]
            wild_rank = int(sc[WILD_RANK])
            cards = solver.declare_discards(self.hands[row, sc[CURRENT]].tolist(), None if wild_rank < 0 else wild_rank)
            taken = int(sc[TAKEN])
            for card in cards:
                if card != taken:  # G7
                    masks[row, INDIAN_DECLARE_BASE + card] = 1

    def ended_hand(self, row: int) -> tuple[HandResult, int]:
        """(result, turns played) of the hand that ended in ``row``."""
        sc = self.scalars[row]
        outcome = int(sc[OUTCOME])
        winner = int(sc[WINNER]) if outcome == DECLARED else None
        return HandResult(OUTCOME_NAMES[outcome], winner, self.payments(row)), int(sc[TURN])

    def payments(self, row: int) -> tuple[int, ...]:
        """What each player pays for the hand that ended in ``row`` (I6, I7; G8, G9: nothing)."""
        sc = self.scalars[row]
        n = self.rules.num_players
        if sc[OUTCOME] != DECLARED:
            return (0,) * n
        wild_rank = int(sc[WILD_RANK])
        cap = self.rules.penalty_cap
        out = []
        for p in range(n):
            pay = 0 if p == sc[WINNER] else solver.indian_penalty(self.hands[row, p].tolist(),
                                                                   None if wild_rank < 0 else wild_rank)
            out.append(pay if cap is None else min(pay, cap))
        return tuple(out)

    def observe(self, row: int, seat: int) -> np.ndarray:
        """A new observation of ``seat`` in ``row``."""
        out = np.zeros(self.observations.shape[1], np.float32)
        write_observation(out, row, seat, self.lay, self.scales, self.inv_target, self.hands, self.known,
                          self.discarded, self.sizes, self.stock, self.pile, self.rest, self.scalars, self.totals)
        return out

    def state_dict(self, row: int, seed, actions_to_moves) -> dict:
        """``GameState.to_dict()`` of the hand in ``row`` (``seed``: the seed it was dealt with)."""
        sc = self.scalars[row].tolist()
        rules = self.rules
        n = rules.num_players
        moves = sc[HISTORY_LEN]
        if moves > self.history_limit:
            raise RuntimeError(f"row {row}: the hand has {moves} moves, more than the {self.history_limit} the "
                               f"numba backend keeps for state(); lower max_turns (G9) to reconstruct it")
        if sc[PHASE] == PHASE_OVER:
            raise RuntimeError(f"row {row}: the hand is over and not yet replaced")
        return {
            "game": rules.game,
            "num_players": n,
            "options": rules.options,
            "seed": seed,
            "first_player": sc[FIRST],
            "hands": self.hands[row].astype(np.int64).tolist(),
            "stock": self.stock[row, :sc[STOCK_LEN]].astype(np.int64).tolist(),
            "discard": self.pile[row, :sc[PILE_LEN]].astype(np.int64).tolist(),
            "table": [],
            "cut_card": -1,
            "wild_card": sc[WILD],
            "current": sc[CURRENT],
            "phase": sc[PHASE],
            "turn": sc[TURN],
            "turns_taken": self.turns_taken[row].tolist(),
            "taken_card": sc[TAKEN],
            "owed_card": -1,
            "owed_jokers": 0,
            "opened": [False] * n,
            "has_laid": [False] * n,
            "laid_this_turn": False,
            "rebuilds": sc[REBUILDS],
            "known": self.known[row].astype(np.int64).tolist(),
            "discarded": self.discarded[row].astype(np.int64).tolist(),
            "result": None,
            "history": [list(actions_to_moves[a]) for a in self.history[row, :moves].tolist()],
        }
