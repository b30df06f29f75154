"""What the three compiled cores share: the batch's state, the turn steps, the deal and the rows.

Each core (``compiled.indian``, ``compiled.basic``, ``compiled.romi``) keeps the hands of a batch
in the rows of one ``BatchState``, a numba structref of arrays that every kernel takes as one
argument, and adds only what its game does differently: Indian's declaration (I5), Basic's and
römi's melds and lay-offs (``compiled.table``), römi's cut card (R4) and look-aheads. Written once
here, each the compiled twin of ``rummy_env.game.GameState``'s step of the same name:

* **The turn** (G4, G7–G9): ``draw``, ``take_discard`` (owing the card to the table where the
  rules say so, R4), ``discard``, ``end_turn`` with the stock's rebuild (G8) and the turn cap (G9),
  and ``turn_step``, which plays the moves every game has and leaves the rest to the game.
* **The deal** (``deal_rows``, ``GameState.__init__``): the deck in the engine's order, shuffled
  by CPython's generator (``compiled.mt19937``) of ``shuffle_rng(seed, 0)``; the cut card (R2),
  the hands from the first seat, the discard top, the wild card (I2). A rebuilt stock is shuffled
  by ``shuffle_rng(seed, 1)``.
* **The rows**: the observation planes every game has (``observe_row``), the draw-phase and
  discard masks, and ``check_actions``.
* **Bit helpers** and the solver's per-suit mask tables (``IN_RUN``, ``LONE``).
* ``Core``: the arrays and the Python side of a batch (deal keys, ``load``, ``state_dict``,
  ``observe``, results, the step driver that hands rows to Python where a kernel asks).

A turn writes ``status[row]``: the row goes on (``GOES_ON``), its mask needs Python
(``ASK_PYTHON``: Indian's declarations, a römi look-ahead out of budget), or its hand ended.
"""

from __future__ import annotations

import inspect

import numpy as np
from numba import njit, types
from numba.experimental import structref

from ..cards import JOKER, NUM_NATURAL, NUM_TYPES
from ..encoding import DISCARD_BASE, DRAW_ACTION, TAKE_DISCARD_ACTION, discard_cap, layout_for
from ..game import PHASE_DRAW, PHASE_OVER, PHASE_PLAY, HandResult
from ..ruleset import RuleSet
from ..solver_tables import mask_facts
from . import mt19937

# Columns of the per-row scalars (``BatchState.scalars``), as ``GameState``'s fields; a game
# without a cut card, wild card, owed cards or table keeps them at -1 or 0.
(CURRENT, PHASE, TURN, TAKEN, REBUILDS, FIRST, SHOWN, STOCK_LEN, PILE_LEN, HISTORY_LEN, OUTCOME, WINNER, KEY_LEN,
 OWED, OWED_JOKERS, LAID, NMELDS) = range(17)
NUM_SCALARS = 17
"""``SHOWN``: the card turned face up beside the stock, römi's cut card (R2) or Indian's wild card (I2)."""

# ``OUTCOME``: how the row's hand ended (0 while it runs).
PLAYING, WON, STALEMATE, CUT_OFF = range(4)

# ``status`` after a step; ``turn_step`` answers ``GAME_MOVE`` for a move the game plays itself.
GOES_ON, ASK_PYTHON, ENDED = range(3)
GAME_MOVE = -1

# Entries of the layout array ``BatchState.lay``: where each plane starts in the observation (-1
# for a plane the game lacks), then the rule numbers the kernels read.
(L_HAND, L_TOP, L_REST, L_TAKEN, L_SHOWN, L_MUST, L_TABLE_CARDS, L_TABLE_MELDS, L_KNOWN, L_DISCARDED, L_PHASE,
 L_TO_ACT, L_STOCK, L_REBUILT, L_SIZES, L_OPENED, L_MATCH, L_TURN, L_PLAYERS, L_CAP, L_MAX_TURNS, L_DECK, L_DECKS,
 L_HAND_SIZE, L_MATCH_MODE, L_HISTORY, L_CUT_CARD, L_WILD_CARD, L_TAKE_OWED) = range(29)
NUM_LAYOUT = 29
_PLANES = ((L_HAND, "hand"), (L_TOP, "discard_top"), (L_REST, "discard_rest"), (L_TAKEN, "just_taken"),
           (L_MUST, "must_place"), (L_TABLE_CARDS, "table_cards"), (L_TABLE_MELDS, "table_melds"),
           (L_KNOWN, "known"), (L_DISCARDED, "discarded"), (L_PHASE, "phase"), (L_TO_ACT, "to_act"),
           (L_STOCK, "stock_size"), (L_REBUILT, "stock_rebuilt"), (L_SIZES, "hand_sizes"), (L_OPENED, "opened"),
           (L_MATCH, "match_scores"), (L_TURN, "turn"))

MAX_SLOTS = 14
"""Cards one table meld holds: a run of 13, and room to shift it while a card goes in (römi, Basic)."""
HISTORY_LIMIT = 1 << 13
"""Moves of a hand kept for ``Core.state_dict`` (hands longer than this have no state)."""

if (DRAW_ACTION, TAKE_DISCARD_ACTION, DISCARD_BASE, JOKER, NUM_TYPES) != (0, 1, 2, 52, 53):
    raise ImportError("rummy_env.compiled expects the discard ids and card types of rummy_env.encoding")
if (PHASE_DRAW, PHASE_PLAY, PHASE_OVER) != (0, 1, 2):
    raise ImportError("rummy_env.compiled expects the engine's phases 0, 1, 2")


def _mask_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per 13-bit rank mask of one suit (ace high): the ranks in a run of three held, and the
    ranks with no other card of the suit within two ranks (the solver's mask facts)."""
    facts = mask_facts(True)
    in_run = np.array([f[2] for f in facts], np.int64)
    lone = np.array([f[3] for f in facts], np.int64)
    return in_run, lone


IN_RUN, LONE = _mask_tables()


# ----------------------------------------------------------------------------- the state


@structref.register
class BatchStateType(types.StructRef):
    """The numba type of ``BatchState``."""


class BatchState(structref.StructRefProxy):
    """Every array of a batch of hands, one argument to the kernels. Python keeps the same arrays
    on the ``Core`` (``core.hands`` …); this object only carries them into compiled code."""


_INT8_2D, _INT8_3D, _INT64_2D = types.int8[:, ::1], types.int8[:, :, ::1], types.int64[:, ::1]
BATCH_FIELDS = (
    ("lay", types.int64[::1]),  # the layout entries (L_HAND …)
    ("scales", types.float32[::1]),  # the encoder's float32 scales: stock, hand sizes, turn
    ("inv_target", types.float64),  # 1 / match target, for the match scores
    ("hands", _INT8_3D),  # (row, seat, card type): cards held
    ("known", _INT8_3D),  # cards known to be in each hand (taken from the discard pile)
    ("discarded", types.int32[:, :, ::1]),  # cards each seat discarded
    ("sizes", _INT64_2D),  # cards in each hand
    ("stock", _INT8_2D),  # the stock, top last
    ("pile", _INT8_2D),  # the discard pile, top last
    ("rest", _INT8_2D),  # counts of the discard pile under its top
    ("scalars", _INT64_2D),  # the columns CURRENT …
    ("totals", _INT64_2D),  # match totals before this hand
    ("turns_taken", _INT64_2D),  # turns each seat has finished
    ("keys", _INT64_2D),  # the seed key of the stock's rebuild (G8)
    ("history", types.int16[:, ::1]),  # the hand's action ids
    ("rng", types.int64[::1]),  # the generator's state, scratch for every shuffle
    ("observations", types.float32[:, ::1]),  # VectorGame's buffers
    ("action_masks", _INT8_2D),
    ("to_act", types.int64[::1]),
    ("status", types.int8[::1]),  # GOES_ON / ASK_PYTHON / ENDED after a step
    ("opened", _INT8_2D),  # (row, seat): has a meld on the table (Basic, römi)
    ("has_laid", _INT8_2D),  # laid anything in an earlier turn (B6)
    ("table_kind", _INT8_2D),  # (row, table meld): SET or RUN
    ("table_key", _INT8_2D),  # its rank (a set) or suit (a run)
    ("table_low", _INT8_2D),  # a run's lowest position
    ("table_len", _INT8_2D),  # its slots
    ("table_slots", _INT8_3D),  # (row, meld, slot): the physical cards, -1 for a set's empty suit
)
BATCH_TYPE = BatchStateType(list(BATCH_FIELDS))
structref.define_boxing(BatchStateType, BatchState)


@njit(cache=True)
def new_batch_state(lay, scales, inv_target, hands, known, discarded, sizes, stock, pile, rest, scalars, totals,
                    turns_taken, keys, history, rng, observations, action_masks, to_act, status, opened, has_laid,
                    table_kind, table_key, table_low, table_len, table_slots):
    """A ``BatchState`` holding the given arrays (the fields of ``BATCH_FIELDS``, in order)."""
    state = structref.new(BATCH_TYPE)
    state.lay = lay
    state.scales = scales
    state.inv_target = inv_target
    state.hands = hands
    state.known = known
    state.discarded = discarded
    state.sizes = sizes
    state.stock = stock
    state.pile = pile
    state.rest = rest
    state.scalars = scalars
    state.totals = totals
    state.turns_taken = turns_taken
    state.keys = keys
    state.history = history
    state.rng = rng
    state.observations = observations
    state.action_masks = action_masks
    state.to_act = to_act
    state.status = status
    state.opened = opened
    state.has_laid = has_laid
    state.table_kind = table_kind
    state.table_key = table_key
    state.table_low = table_low
    state.table_len = table_len
    state.table_slots = table_slots
    return state


if list(inspect.signature(new_batch_state.py_func).parameters) != [name for name, _ in BATCH_FIELDS]:
    raise ImportError("new_batch_state must take the fields of BATCH_FIELDS, in order")


# ----------------------------------------------------------------------------- bits


@njit(cache=True)
def bit_count(x):
    """The set bits of ``x`` (0 <= x < 2**62), counted without a loop."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    x += x >> 8
    x += x >> 16
    x += x >> 32
    return x & 0x7F


@njit(cache=True)
def bit_length(x):
    """``int.bit_length`` of ``x`` (0 <= x < 2**62): the bits below its highest, set, and counted."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    x |= x >> 32
    return bit_count(x)


@njit(cache=True)
def held_bits(hand):
    """Bit c for each natural card type c held (``table.held_bits``)."""
    held = 0
    for c in range(NUM_NATURAL):
        if hand[c]:
            held |= np.int64(1) << c
    return held


# ----------------------------------------------------------------------------- the turn


@njit(cache=True)
def remove_card(card, hand, known, sc):
    """``GameState._remove``: one ``card`` leaves the hand, settling an owed card or joker (R4, R5)."""
    hand[card] -= 1
    if known[card]:
        known[card] -= 1
    if card == sc[OWED]:
        sc[OWED] = -1
    elif card == JOKER and sc[OWED_JOKERS]:
        sc[OWED_JOKERS] -= 1


@njit(cache=True)
def draw(row, seat, s):
    """The stock's top card into the hand."""
    sc = s.scalars[row]
    length = sc[STOCK_LEN] - 1
    card = s.stock[row, length]
    sc[STOCK_LEN] = length
    s.hands[row, seat, card] += 1
    s.sizes[row, seat] += 1
    sc[PHASE] = PHASE_PLAY


@njit(cache=True)
def take_discard(row, seat, s):
    """The discard top into the hand, known to all; owed to the table this turn where the rules
    say so (R4: after one's first turn)."""
    sc = s.scalars[row]
    rest = s.rest[row]
    pile = s.pile[row]
    length = sc[PILE_LEN] - 1
    card = pile[length]
    sc[PILE_LEN] = length
    if length:
        rest[pile[length - 1]] -= 1  # the card under it is the top now
    s.hands[row, seat, card] += 1
    s.known[row, seat, card] += 1
    s.sizes[row, seat] += 1
    sc[TAKEN] = card
    if s.lay[L_TAKE_OWED] and s.turns_taken[row, seat] > 0:
        if card == JOKER:
            sc[OWED_JOKERS] += 1
        else:
            sc[OWED] = card
    sc[PHASE] = PHASE_PLAY


@njit(cache=True)
def discard(row, seat, card, s):
    """``card`` from the hand onto the discard pile."""
    sc = s.scalars[row]
    remove_card(card, s.hands[row, seat], s.known[row, seat], sc)
    s.sizes[row, seat] -= 1
    pile = s.pile[row]
    length = sc[PILE_LEN]
    if length:
        s.rest[row, pile[length - 1]] += 1  # the old top joins the cards under it
    pile[length] = card
    sc[PILE_LEN] = length + 1
    s.discarded[row, seat, card] += 1


@njit(cache=True)
def win(row, seat, s):
    """The hand ends, won by ``seat`` (a declaration I5, or going out B4, R4, R6)."""
    sc = s.scalars[row]
    sc[OUTCOME] = WON
    sc[WINNER] = seat
    sc[PHASE] = PHASE_OVER


@njit(cache=True)
def end_turn(row, seat, s):
    """``GameState._end_turn``: the next seat draws; the stock's rebuild or a stalemate (G8), the
    cap (G9). True when the hand ended."""
    lay = s.lay
    sc = s.scalars[row]
    n = lay[L_PLAYERS]
    s.turns_taken[row, seat] += 1
    if sc[LAID]:
        s.has_laid[row, seat] = 1
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
            stock = s.stock[row]
            pile = s.pile[row]
            sc[REBUILDS] = 1
            for k in range(length - 1):
                stock[k] = pile[k]
            pile[0] = pile[length - 1]
            sc[PILE_LEN] = 1
            sc[STOCK_LEN] = length - 1
            s.rest[row, :] = 0
            mt19937.seed_state(s.rng, s.keys[row], sc[KEY_LEN])
            mt19937.shuffle(s.rng, stock, length - 1)
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
def turn_step(row, a, s):
    """Record action ``a`` of row ``row`` and play it if every game has it: a draw, taking the
    discard top, a discard (out by the last card, B4, R6, else the turn ends). ``ENDED`` or
    ``GOES_ON``; ``GAME_MOVE`` for an action the game plays itself."""
    sc = s.scalars[row]
    seat = sc[CURRENT]
    if sc[HISTORY_LEN] < s.lay[L_HISTORY]:
        s.history[row, sc[HISTORY_LEN]] = a
    sc[HISTORY_LEN] += 1
    if a == DRAW_ACTION:
        draw(row, seat, s)
    elif a == TAKE_DISCARD_ACTION:
        take_discard(row, seat, s)
    elif a < DISCARD_BASE + NUM_TYPES:
        discard(row, seat, a - DISCARD_BASE, s)
        if s.sizes[row, seat] == 0:
            win(row, seat, s)
            return ENDED
        if end_turn(row, seat, s):
            return ENDED
    else:
        return GAME_MOVE
    return GOES_ON


# ----------------------------------------------------------------------------- the deal


@njit(cache=True)
def deal_rows(rows, deal_keys, deal_key_lens, rebuild_keys, rebuild_key_lens, firsts, s):
    """A new hand in each of ``rows`` (``GameState.__init__``); no row written."""
    lay = s.lay
    n = lay[L_PLAYERS]
    deck_size = lay[L_DECK]
    decks = lay[L_DECKS]
    hand_size = lay[L_HAND_SIZE]
    for k in range(rows.shape[0]):
        row = rows[k]
        sc = s.scalars[row]
        deck = s.stock[row]
        at = 0
        for c in range(NUM_NATURAL):  # each natural card once a deck (I1, B1, R1), then the printed jokers
            for _ in range(decks):
                deck[at] = c
                at += 1
        while at < deck_size:
            deck[at] = JOKER
            at += 1
        mt19937.seed_state(s.rng, deal_keys[k], deal_key_lens[k])
        mt19937.shuffle(s.rng, deck, deck_size)
        s.hands[row] = 0
        s.known[row] = 0
        s.discarded[row] = 0
        s.rest[row] = 0
        s.turns_taken[row] = 0
        s.opened[row] = 0
        s.has_laid[row] = 0
        sc[:] = 0
        top = deck_size
        shown = -1
        if lay[L_CUT_CARD]:  # R2: turned before the deal
            top -= 1
            shown = deck[top]
        first = firsts[k]
        for _ in range(hand_size):
            for i in range(n):
                p = first + i
                if p >= n:
                    p -= n
                top -= 1
                s.hands[row, p, deck[top]] += 1
        for p in range(n):
            s.sizes[row, p] = hand_size
        top -= 1
        s.pile[row, 0] = deck[top]
        sc[PILE_LEN] = 1
        if lay[L_WILD_CARD]:  # I2
            top -= 1
            shown = deck[top]
        sc[SHOWN] = shown
        sc[STOCK_LEN] = top
        sc[CURRENT] = first
        sc[FIRST] = first
        sc[PHASE] = PHASE_DRAW
        sc[TAKEN] = -1
        sc[OUTCOME] = PLAYING
        sc[WINNER] = -1
        sc[OWED] = -1
        length = rebuild_key_lens[k]
        s.keys[row, :length] = rebuild_keys[k, :length]
        sc[KEY_LEN] = length


# ----------------------------------------------------------------------------- rows


@njit(cache=True)
def write_observation(out, row, seat, s):
    """The planes of ``ObservationEncoder.encode`` every game has, for ``seat`` in row ``row``,
    into ``out`` (float32, zeroed here)."""
    lay = s.lay
    scales = s.scales
    n = lay[L_PLAYERS]
    sc = s.scalars[row]
    out[:] = 0.0
    hand = s.hands[row, seat]
    at = lay[L_HAND]
    for c in range(NUM_TYPES):
        out[at + c] = hand[c]
    pile_len = sc[PILE_LEN]
    if pile_len:
        out[lay[L_TOP] + s.pile[row, pile_len - 1]] = 1.0
    at = lay[L_REST]
    rest = s.rest[row]
    for c in range(NUM_TYPES):
        out[at + c] = rest[c]
    if sc[TAKEN] != -1:
        out[lay[L_TAKEN] + sc[TAKEN]] = 1.0
    if sc[SHOWN] != -1:
        out[lay[L_SHOWN] + sc[SHOWN]] = 1.0
    cap = lay[L_CAP]
    size_scale = scales[1]
    for r in range(n):
        p = seat + r
        if p >= n:
            p -= n
        at = lay[L_KNOWN] + NUM_TYPES * r
        row_known = s.known[row, p]
        for c in range(NUM_TYPES):
            out[at + c] = row_known[c]
        at = lay[L_DISCARDED] + NUM_TYPES * r
        row_discarded = s.discarded[row, p]
        for c in range(NUM_TYPES):
            d = row_discarded[c]
            out[at + c] = d if d < cap else cap
        out[lay[L_SIZES] + r] = np.float32(s.sizes[row, p]) * size_scale
        if lay[L_MATCH_MODE]:
            score = s.totals[row, p] * s.inv_target
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
def observe_row(row, s):
    """``write_observation`` of the seat to act into the row's observation; that seat, in ``to_act`` too."""
    seat = s.scalars[row, CURRENT]
    write_observation(s.observations[row], row, seat, s)
    s.to_act[row] = seat
    return seat


@njit(cache=True)
def draw_mask(mask, sc):
    """Draw, or take the discard top when there is one (G4)."""
    mask[DRAW_ACTION] = 1
    if sc[PILE_LEN]:
        mask[TAKE_DISCARD_ACTION] = 1


@njit(cache=True)
def discard_mask(mask, hand, taken):
    """Discard any card held but the one just taken (G7)."""
    for c in range(NUM_TYPES):
        if hand[c]:
            mask[DISCARD_BASE + c] = 1
    if taken != -1:
        mask[DISCARD_BASE + taken] = 0


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


# ----------------------------------------------------------------------------- the batch


class Core:
    """The arrays of ``num_envs`` hands of one game and the kernels that step them.

    A game's core sets its kernels (``_step_rows(rows, actions, state, *tables)``,
    ``_write_rows(rows, state, *tables)``: each row's observation, mask and status;
    ``_write_observation(out, row, seat, state)``), the read-only arrays they take (``tables``),
    the moves a turn may hold (``MOVES_PER_TURN``), and the hooks ``_check_rules``,
    ``_ask_python`` (rows whose mask a kernel left to Python) and ``_payments``."""

    MOVES_PER_TURN = (2, 1)
    """(per turn, more): a hand keeps ``min(per_turn * max_turns + more, HISTORY_LIMIT)`` moves of its history."""
    tables: tuple = ()

    def __init__(self, rules: RuleSet, num_envs: int, observations: np.ndarray, action_masks: np.ndarray,
                 to_act: np.ndarray, match_mode: bool):
        self._check_rules(rules)
        self.rules = rules
        n, size = rules.num_players, num_envs
        deck = NUM_NATURAL * rules.decks + rules.printed_jokers
        per_turn, more = self.MOVES_PER_TURN
        history = min(per_turn * rules.max_turns + more, HISTORY_LIMIT)
        self.max_melds = rules.spec.max_table_melds
        self.history_limit = history
        self.lay = self._layout(rules, deck, history, match_mode)
        # the encoder's float32 scales (``ObservationEncoder._scale``)
        self.scales = np.array([1.0 / deck, 1.0 / rules.hand_size, 1.0 / 127], np.float32)
        self.inv_target = 1.0 / rules.match_target
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
        self.observations = observations
        self.action_masks = action_masks
        self.to_act = to_act
        self.status = np.zeros(size, np.int8)
        self.opened = np.zeros((size, n), np.int8)
        self.has_laid = np.zeros((size, n), np.int8)
        melds = self.max_melds
        self.table_kind = np.zeros((size, melds), np.int8)
        self.table_key = np.zeros((size, melds), np.int8)
        self.table_low = np.zeros((size, melds), np.int8)
        self.table_len = np.zeros((size, melds), np.int8)
        self.table_slots = np.zeros((size, melds, MAX_SLOTS), np.int8)
        self.state = new_batch_state(*(getattr(self, name) for name, _ in BATCH_FIELDS))
        self._args = (self.state, *self.tables)

    @staticmethod
    def _layout(rules: RuleSet, deck: int, history: int, match_mode: bool) -> np.ndarray:
        layout = layout_for(rules).slices
        lay = np.zeros(NUM_LAYOUT, np.int64)
        for index, name in _PLANES:
            lay[index] = layout[name].start if name in layout else -1  # -1: a plane the game lacks
        shown = "wild_card" if "wild_card" in layout else "cut_card"
        lay[L_SHOWN] = layout[shown].start if shown in layout else -1
        lay[L_PLAYERS] = rules.num_players
        lay[L_CAP] = discard_cap(rules.decks, rules.printed_jokers)
        lay[L_MAX_TURNS] = rules.max_turns
        lay[L_DECK] = deck
        lay[L_DECKS] = rules.decks
        lay[L_HAND_SIZE] = rules.hand_size
        lay[L_MATCH_MODE] = 1 if match_mode else 0
        lay[L_HISTORY] = history
        lay[L_CUT_CARD] = 1 if rules.cut_card else 0
        lay[L_WILD_CARD] = 1 if rules.wild_joker else 0
        lay[L_TAKE_OWED] = 1 if rules.later_take_must_be_placed else 0
        return lay

    # ------------------------------------------------------------------ hooks

    @staticmethod
    def _check_rules(rules: RuleSet) -> None:
        """Refuse rules this core does not play."""
        raise NotImplementedError

    def _ask_python(self, rows: np.ndarray) -> None:
        """Complete the masks of ``rows`` that a kernel left to Python."""
        raise NotImplementedError

    def _payments(self, row: int, winner: int) -> tuple[int, ...]:
        """What each player pays for the hand ``winner`` won in ``row``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ stepping

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
        deal_rows(array, deal_keys, deal_lens, rebuild_keys, rebuild_lens, np.asarray(firsts, np.int64), self.state)
        self._refresh(array)

    def _refresh(self, rows: np.ndarray) -> None:
        """Write the observation and mask of ``rows`` afresh (after a deal or a load)."""
        self._write_rows(rows, *self._args)
        asks = rows[self.status[rows] == ASK_PYTHON]
        if asks.size:
            self._ask_python(asks)
        self.status[rows] = GOES_ON

    def first_refusal(self, rows: np.ndarray, actions: np.ndarray) -> tuple[int, int]:
        """(k, 1 out of range / 2 forbidden) of the first action ``actions[k]`` that row ``rows[k]``'s
        mask refuses, or (-1, 0)."""
        found = check_actions(rows, actions, self.action_masks, self.action_masks.shape[1])
        return (-1, 0) if found < 0 else (found >> 2, found & 3)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> list[int]:
        """Play ``actions[k]`` in row ``rows[k]`` (all allowed); the rows whose hand ended, in order."""
        status = self.status
        status.fill(GOES_ON)
        self._step_rows(rows, actions, *self._args)
        if status.any():
            asks = np.flatnonzero(status == ASK_PYTHON)
            if asks.size:
                self._ask_python(asks)
            return rows[status[rows] == ENDED].tolist()
        return []

    # ------------------------------------------------------------------ copying in and out

    def load(self, row: int, state, action_ids: dict) -> None:
        """Copy ``state`` (a ``GameState`` of this game before its end) into ``row`` and write its
        row (``action_ids``: engine move to action id, for the history)."""
        if state.rebuilt_stock is not None and not state.rebuilds:
            raise ValueError("a hand dealt from a deck order (GameState.from_deck) rebuilds its stock in the order "
                             "it was given (G8), which this core does not keep: play it on GameState")
        key = mt19937.seed_key(f"{state.seed}:1")  # shuffle_rng(seed, 1), for a rebuild (G8); it may refuse
        if len(state.table) > self.max_melds:
            raise ValueError(f"{len(state.table)} table melds, more than the {self.max_melds} the encoding holds")
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
        sc[REBUILDS], sc[FIRST] = state.rebuilds, state.first_player
        sc[SHOWN] = state.cut_card if state.cut_card != -1 else state.wild_card
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
        """(result, turns played) of the hand that ended in ``row`` (G8, G9: nobody pays)."""
        sc = self.scalars[row]
        rules = self.rules
        outcome = int(sc[OUTCOME])
        if outcome != WON:
            name = "stalemate" if outcome == STALEMATE else "cut_off"
            return HandResult(name, None, (0,) * rules.num_players), int(sc[TURN])
        winner = int(sc[WINNER])
        name = "declare" if rules.declares else "out"
        return HandResult(name, winner, self._payments(row, winner)), int(sc[TURN])

    def observe(self, row: int, seat: int) -> np.ndarray:
        """A new observation of ``seat`` in ``row``."""
        out = np.zeros(self.observations.shape[1], np.float32)
        self._write_observation(out, row, seat, self.state)
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
            "cut_card": sc[SHOWN] if rules.cut_card else -1,
            "wild_card": sc[SHOWN] if rules.wild_joker else -1,
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
