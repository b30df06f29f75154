"""What the two table games share in numba (Basic Rummy B1–B6, römi R1–R8): melds, lay-offs, the table.

On top of ``rummy_env.compiled.skeleton``, the compiled twins of the engine's table steps, for
``compiled.basic`` and ``compiled.romi``:

* **Templates** (``template_arrays``): ``melds.meld_templates`` as rows (kind, key, low, size,
  cards), their card masks, and the run template of each (suit, lowest position, length).
* **Plays on the arrays of one position** (a row of the batch, or a position of römi's search):
  ``lay_meld`` is ``GameState._apply_meld`` (naturals where held, jokers in the gaps), and
  ``place_card`` is ``table.place_card`` (a lay-off, or a joker swap that owes the joker back to
  the table this turn, R5). Cards leave the hand through the skeleton's ``remove_card``, which
  settles owed cards (R4).
* **The table's planes** of the observation (``must_place``, ``table_cards``, ``table_melds``,
  ``opened``) on top of the skeleton's.
* ``TableCore``: payments when a player goes out (``GameState._finish_out``: the cards left in
  hand, B5; R7's penalty for a player with no meld; B6's doubling).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import JOKER, NUM_RANKS, NUM_TYPES
from ..melds import RUN, SET, meld_templates
from . import skeleton
from .skeleton import CURRENT, L_MUST, L_OPENED, L_PLAYERS, L_TABLE_CARDS, L_TABLE_MELDS, LAID, MAX_SLOTS, NMELDS, \
    OWED, OWED_JOKERS, remove_card

SETS_PER_RANK = 5
"""Four sets of three suits and one of four: templates ``5 r`` … ``5 r + 4`` are the sets of rank r."""

if (SET, RUN) != (0, 1):
    raise ImportError("rummy_env.compiled.table expects the engine's meld kinds SET 0, RUN 1")


def template_arrays(ace_high: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The meld templates as rows (kind, key, low, size, card 0 … card 13), their card-type
    masks, and the template id of each run by (suit, lowest position, length), -1 where none."""
    templates = meld_templates(ace_high)
    rows = np.full((len(templates), 4 + MAX_SLOTS), -1, np.int64)
    masks = np.zeros(len(templates), np.int64)
    run_ids = np.full((4, MAX_SLOTS, MAX_SLOTS + 1), -1, np.int64)
    for t, template in enumerate(templates):
        rows[t, :4] = template.kind, template.key, template.low, len(template.cards)
        rows[t, 4:4 + len(template.cards)] = template.cards
        for card in template.cards:
            masks[t] |= 1 << card
        if template.kind == RUN:
            run_ids[template.key, template.low, len(template.cards)] = t
        elif t // SETS_PER_RANK != template.key:
            raise ImportError("rummy_env.compiled.table expects the sets of each rank together, ranks in order")
    return rows, masks, run_ids


# ----------------------------------------------------------------------------- plays


@njit(cache=True)
def lay_meld(t, hand, known, sc, tk, tkey, tlow, tlen, ts, tpl):
    """``GameState._apply_meld`` of template ``t`` on the arrays of one position: naturals where
    held, jokers in the gaps; the change in hand size."""
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
        remove_card(physical, hand, known, sc)
        if kind == SET:
            ts[s, card // NUM_RANKS] = physical
        else:
            ts[s, i] = physical
    sc[LAID] = 1
    return -tsize


@njit(cache=True)
def place_card(s, card, low_end, hand, known, sc, tk, tkey, tlow, tlen, ts):
    """``table.place_card``: ``card`` onto table meld ``s`` (a joker at a run's low end when
    ``low_end``), swapping out the joker that stands for it; the change in hand size."""
    remove_card(card, hand, known, sc)
    sc[LAID] = 1
    slots = ts[s]
    key = tkey[s]
    if tk[s] == RUN:
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


@njit(cache=True)
def meld_row(row, t, s, tpl):
    """The player to act in row ``row`` lays template ``t``: opened (R5, R7)."""
    seat = s.scalars[row, CURRENT]
    s.sizes[row, seat] += lay_meld(t, s.hands[row, seat], s.known[row, seat], s.scalars[row], s.table_kind[row],
                                   s.table_key[row], s.table_low[row], s.table_len[row], s.table_slots[row], tpl)
    s.opened[row, seat] = 1


@njit(cache=True)
def place_row(row, meld, card, low_end, s):
    """The player to act in row ``row`` places ``card`` on table meld ``meld`` (``place_card``)."""
    seat = s.scalars[row, CURRENT]
    s.sizes[row, seat] += place_card(meld, card, low_end, s.hands[row, seat], s.known[row, seat], s.scalars[row],
                                     s.table_kind[row], s.table_key[row], s.table_low[row], s.table_len[row],
                                     s.table_slots[row])


# ----------------------------------------------------------------------------- rows


@njit(cache=True)
def write_table_planes(out, row, seat, s):
    """The table's planes of ``ObservationEncoder.encode`` for ``seat`` in row ``row`` into ``out``
    (written by the skeleton's ``write_observation`` first)."""
    lay = s.lay
    sc = s.scalars[row]
    if lay[L_MUST] >= 0:  # a game without owed cards (Basic) has no ``must_place`` plane
        if sc[OWED] != -1:
            out[lay[L_MUST] + sc[OWED]] = 1.0
        out[lay[L_MUST] + JOKER] = sc[OWED_JOKERS]
    cards_at = lay[L_TABLE_CARDS]
    tk, tkey, tlow, tlen, ts = s.table_kind[row], s.table_key[row], s.table_low[row], s.table_len[row], \
        s.table_slots[row]
    for m in range(sc[NMELDS]):
        at = lay[L_TABLE_MELDS] + NUM_TYPES * m
        key = tkey[m]
        jokers = 0
        for i in range(tlen[m]):
            card = ts[m, i]
            if card == -1:
                continue
            if tk[m] == SET:
                stands_for = i * NUM_RANKS + key
            else:
                stands_for = key * NUM_RANKS + (tlow[m] + i) % NUM_RANKS
            out[cards_at + card] += 1.0
            if card == JOKER:
                jokers += 1
                out[at + stands_for] = -1.0
            else:
                out[at + stands_for] = 1.0
        out[at + JOKER] = jokers
    n = lay[L_PLAYERS]
    for r in range(n):
        p = seat + r
        if p >= n:
            p -= n
        out[lay[L_OPENED] + r] = s.opened[row, p]


@njit(cache=True)
def write_observation(out, row, seat, s):
    """``ObservationEncoder.encode`` of ``seat`` in row ``row`` into ``out``: the skeleton's planes
    and the table's."""
    skeleton.write_observation(out, row, seat, s)
    write_table_planes(out, row, seat, s)


@njit(cache=True)
def observe_row(row, s):
    """The observation of the seat to act into the row's (``skeleton.observe_row`` and the table's
    planes); that seat."""
    seat = skeleton.observe_row(row, s)
    write_table_planes(s.observations[row], row, seat, s)
    return seat


# ----------------------------------------------------------------------------- the batch


class TableCore(skeleton.Core):
    """A core of a table game (Basic, römi): its observation has the table's planes, and a player
    going out is paid as ``GameState._finish_out`` pays."""

    MOVES_PER_TURN = (16, 64)
    _write_observation = staticmethod(write_observation)

    def _payments(self, row: int, winner: int) -> tuple[int, ...]:
        """The cards left in each other hand (B5), or R7's penalty for a player with no meld laid;
        doubled when the winner had laid nothing before (B6, the ``rummy_bonus`` option)."""
        rules = self.rules
        values = rules.values
        payments = []
        for p in range(rules.num_players):
            if p == winner:
                payments.append(0)
            elif rules.unopened_penalty is not None and not self.opened[row, p]:
                payments.append(rules.unopened_penalty)  # R7: no meld laid this hand
            else:
                hand = self.hands[row, p].tolist()
                payments.append(sum(values[c] * k for c, k in enumerate(hand) if k))
        if rules.rummy_bonus and not self.has_laid[row, winner]:
            payments = [2 * p for p in payments]  # B6: out without having laid anything before
        return tuple(payments)
