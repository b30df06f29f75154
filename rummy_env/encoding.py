"""Action ids, action masks and observation vectors for the three games (``docs/env.md``).

This is the one module that maps engine moves ``(kind, a, b)`` (see ``rummy_env.game``) to
action ids and back. The mask is computed from ``GameState.legal_moves()``: the encoding adds no
rule of its own, so every allowed action is legal and every legal move has exactly one id.

Action ids
==========

Every game has one fixed ``Discrete(n)``. Card types are 0..52 (``suit * 13 + rank``, suits
s h d c, ranks A..K, 52 = joker; see ``rummy_env.cards``). The first 55 ids mean the same in
every game.

==========================  ============  ============  ============  =============================
block                       Indian        Basic         römi          meaning
==========================  ============  ============  ============  =============================
``DRAW_ACTION``             0             0             0             draw the stock top
``TAKE_DISCARD_ACTION``     1             1             1             take the discard top (G7, R4)
``DISCARD_BASE`` + c        2..54         2..54         2..54         discard card type c
``INDIAN_DECLARE_BASE`` + c 55..107       --            --            discard c and declare (I5)
``ROMI_TAKE_CUT_ACTION``    --            --            55            take the cut card, go out (R4)
meld template t             --            55..383       56..428       lay template t (B3, R5)
place c on table meld s     --            384..1284     429..2283     lay off c, or swap c for a
                                                                      joker (R5): base + 53 s + c;
                                                                      a joker goes to a run's high end
joker at low end of meld s  --            --            2284..2318    lay a joker at the low end of
                                                                      the run on table meld s (R5):
                                                                      ``ROMI_PLACE_JOKER_LOW_BASE`` + s
total                       108           1285          2319
==========================  ============  ============  ============  =============================

Meld templates are ``table.template_index(rules.ace_high, rules.max_jokers).templates`` (329 in
Basic, 373 in römi: sets, then runs). Table melds are numbered in the order they were laid; the
table holds at most ``MAX_TABLE_MELDS`` melds (Basic 17 = 52 // 3, römi 35 = 106 // 3), so every
placement has an id. Ids of card types a game lacks (the joker in Basic) are never allowed.

Canonicalisations (made by the engine, so one move has one id): identical cards of two decks are
one card type; a template is laid with the hand's natural cards where it holds them and jokers
in the gaps; a natural ace that fits both ends of a run goes to its low end; the cut-card move
plays the going-out melds the engine finds. A joker laid off on a run open at both ends may stand
at either end (R5): two actions, ``place * on s`` (high end) and ``ROMI_PLACE_JOKER_LOW_BASE + s``.

Observation
===========

A flat float32 vector; ``observation_layout(game, num_players)`` names its slices. Its parts are
defined once, in the observation spec ``rummy_env.obs_spec.OBSERVATION_PLANES`` (name, games,
size, bounds, scale, writer, how the tracker keeps it, reader, contents), which the layout, the
``Box`` bounds (``layout_for``), ``ObservationEncoder``, ``ObservationTracker``,
``agents.view`` and the table of ``docs/env.md`` all follow.

Nothing hidden from the observer enters it: other hands are present only through their sizes
and the public ``known`` cards, and the stock only through its size.

``encode_observation(state, seat)`` (or ``ObservationEncoder(rules).encode``) builds a vector
from scratch; ``ObservationTracker`` keeps one buffer per seat through a hand and rewrites only
what each move changed (the environment uses it; tests check both give the same vectors).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .cards import JOKER, NUM_RANKS, NUM_TYPES
from .game import (
    DECLARE, DISCARD, DRAW, MELD, PHASE_DRAW, PHASE_PLAY, PLACE, PLACE_JOKER_LOW, TAKE_CUT, TAKE_DISCARD,
    GameState, Move,
)
from .games import by_game, game_spec
from .melds import SET
from .obs_spec import (
    DEAL, MAX_TABLE_MELDS, MOVE_KEPT, MOVES, OBSERVE, ONE, discard_cap, layout_for, rules_for,
)
# Re-exported: agents, tests and docs/env.md take the observation layout and size from this module.
from .obs_spec import observation_layout as observation_layout, observation_size as observation_size
from .ruleset import RuleSet
from .table import template_index

if (PHASE_DRAW, PHASE_PLAY) != (0, 1):  # the ``phase`` one-hot is indexed by the engine's phase
    raise ImportError("rummy_env.encoding expects PHASE_DRAW == 0 and PHASE_PLAY == 1")

# ----------------------------------------------------------------------------- action ids

DRAW_ACTION = 0
TAKE_DISCARD_ACTION = 1
DISCARD_BASE = 2
INDIAN_DECLARE_BASE = DISCARD_BASE + NUM_TYPES  # 55
INDIAN_NUM_ACTIONS = INDIAN_DECLARE_BASE + NUM_TYPES  # 108

BASIC_NUM_TEMPLATES = 329
BASIC_MAX_TABLE_MELDS = MAX_TABLE_MELDS["basic"]  # 17
BASIC_MELD_BASE = DISCARD_BASE + NUM_TYPES  # 55
BASIC_PLACE_BASE = BASIC_MELD_BASE + BASIC_NUM_TEMPLATES  # 384
BASIC_NUM_ACTIONS = BASIC_PLACE_BASE + BASIC_MAX_TABLE_MELDS * NUM_TYPES  # 1285

ROMI_NUM_TEMPLATES = 373
ROMI_MAX_TABLE_MELDS = MAX_TABLE_MELDS["romi"]  # 35
ROMI_TAKE_CUT_ACTION = DISCARD_BASE + NUM_TYPES  # 55
ROMI_MELD_BASE = ROMI_TAKE_CUT_ACTION + 1  # 56
ROMI_PLACE_BASE = ROMI_MELD_BASE + ROMI_NUM_TEMPLATES  # 429
ROMI_PLACE_JOKER_LOW_BASE = ROMI_PLACE_BASE + ROMI_MAX_TABLE_MELDS * NUM_TYPES  # 2284
ROMI_NUM_ACTIONS = ROMI_PLACE_JOKER_LOW_BASE + ROMI_MAX_TABLE_MELDS  # 2319

_NO_BLOCK = -(10**9)  # base of a move kind the game lacks: any id built on it is out of range


class EncodingError(ValueError):
    """An action id or move that has no counterpart in this game's action space."""


@dataclass(frozen=True)
class ActionLayout:
    """The action ids of one game: named blocks, and the move behind each id."""

    game: str
    num_actions: int
    blocks: dict[str, range]
    """Block name (``"draw"``, ``"discard"``, ``"meld"`` …) to its id range."""
    kind_base: tuple[int, ...]
    """Per move kind, the id of ``(kind, 0, 0)``: a move's id is ``base + a + 53 * b``."""
    moves: tuple[Move, ...]
    """The engine move of each action id."""
    max_table_melds: int
    ids: dict[Move, int] = field(default_factory=dict, repr=False, compare=False)
    """Engine move -> action id (the inverse of ``moves``)."""

    def __post_init__(self) -> None:
        self.ids.update((move, action) for action, move in enumerate(self.moves))

    def mask_of(self, moves) -> bytearray:
        """The action mask of engine moves ``moves`` (a list of legal moves) as bytes 0/1: the one
        mask builder the environments, ``VectorGame`` and ``action_mask`` share. A move with no
        action id is an ``EncodingError`` naming it."""
        mask = bytearray(self.num_actions)
        ids = self.ids
        try:
            for move in moves:
                mask[ids[move]] = 1
        except (KeyError, TypeError):  # a move that is not in the table, or not even hashable
            self.ids_of(moves)  # raises, naming the move
        return mask

    def ids_of(self, moves) -> list[int]:
        """The action ids of engine moves ``moves``, in their order; a move with none is an error naming it."""
        ids = self.ids
        try:
            return [ids[move] for move in moves]
        except (KeyError, TypeError):
            bad = next(m for m in moves if not isinstance(m, tuple) or m not in ids)
            raise EncodingError(f"legal move {bad!r} has no action id in {self.game!r}") from None

    def action(self, move) -> int:
        """The action id of engine move ``move``; a move with no id is an error naming it."""
        kind, a, b = move
        action = self.kind_base[kind] + a + NUM_TYPES * b if 0 <= kind < len(self.kind_base) else -1
        if not 0 <= action < self.num_actions or self.moves[action] != (kind, a, b):
            raise EncodingError(f"move {tuple(move)!r} has no action id in {self.game!r}")
        return action

    def move(self, action) -> Move:
        """The engine move of action id ``action``; an id out of range is an error naming it."""
        try:
            index = operator.index(action)
        except TypeError:
            raise EncodingError(f"action {action!r} is not an int: "
                                f"expected an id in 0..{self.num_actions - 1}") from None
        if not 0 <= index < self.num_actions:
            raise EncodingError(f"action {action!r} is out of range for {self.game!r}: "
                                f"expected 0..{self.num_actions - 1}")
        return self.moves[index]


def _build_action_layout(game: str) -> ActionLayout:
    blocks = {"draw": range(DRAW_ACTION, DRAW_ACTION + 1),
              "take_discard": range(TAKE_DISCARD_ACTION, TAKE_DISCARD_ACTION + 1),
              "discard": range(DISCARD_BASE, DISCARD_BASE + NUM_TYPES)}
    base = [_NO_BLOCK] * (PLACE_JOKER_LOW + 1)
    base[DRAW], base[TAKE_DISCARD], base[DISCARD] = DRAW_ACTION, TAKE_DISCARD_ACTION, DISCARD_BASE
    moves: list[Move] = [(DRAW, 0, 0), (TAKE_DISCARD, 0, 0)] + [(DISCARD, c, 0) for c in range(NUM_TYPES)]
    spec = game_spec(game)
    if spec.declares:
        blocks["declare"] = range(INDIAN_DECLARE_BASE, INDIAN_NUM_ACTIONS)
        base[DECLARE] = INDIAN_DECLARE_BASE
        moves += [(DECLARE, c, 0) for c in range(NUM_TYPES)]
        slots = 0
    else:
        rules = spec.melds
        templates = template_index(rules.ace_high, rules.max_jokers).templates
        if spec.cut_card:
            blocks["take_cut"] = range(ROMI_TAKE_CUT_ACTION, ROMI_TAKE_CUT_ACTION + 1)
            base[TAKE_CUT] = ROMI_TAKE_CUT_ACTION
            moves.append((TAKE_CUT, 0, 0))
        meld_base = len(moves)
        blocks["meld"] = range(meld_base, meld_base + len(templates))
        base[MELD] = meld_base
        moves += [(MELD, t, 0) for t in range(len(templates))]
        slots = spec.max_table_melds
        place_base = len(moves)
        blocks["place"] = range(place_base, place_base + slots * NUM_TYPES)
        base[PLACE] = place_base
        moves += [(PLACE, c, s) for s in range(slots) for c in range(NUM_TYPES)]
        if rules.max_jokers != 0:  # R5: a joker may stand at either end of a run
            low_base = len(moves)
            blocks["place_joker_low"] = range(low_base, low_base + slots)
            base[PLACE_JOKER_LOW] = low_base
            moves += [(PLACE_JOKER_LOW, s, 0) for s in range(slots)]
    return ActionLayout(game, len(moves), blocks, tuple(base), tuple(moves), slots)


@cache
def action_layout(game: str) -> ActionLayout:
    """The action ids of ``game`` (a registered game's name: ``"indian"``, ``"basic"``, ``"romi"`` …)."""
    game_spec(game)  # an unknown game is an error naming it
    return _build_action_layout(game)


def num_actions(game: str) -> int:
    """The size of ``game``'s ``Discrete`` action space."""
    return action_layout(game).num_actions


NUM_ACTIONS = by_game(num_actions)
"""Game -> the size of its action space (Indian 108, Basic 1285, römi 2319: the table above)."""


def move_to_action(game: str, move) -> int:
    """The action id of engine move ``move`` in ``game``."""
    return action_layout(game).action(move)


def action_to_move(game: str, action: int) -> Move:
    """The engine move of action id ``action`` in ``game``."""
    return action_layout(game).move(action)


def legal_actions(state: GameState) -> list[int]:
    """The action ids of the current player's legal moves, in the engine's order."""
    return action_layout(state.rules.game).ids_of(state.legal_moves())


def action_mask(state: GameState, for_player: int | None = None) -> np.ndarray:
    """int8 mask over ``game``'s actions: 1 for each legal move of the player to act.

    With ``for_player`` set to anyone but the player to act, the mask is all zeros.
    """
    layout = action_layout(state.rules.game)
    if for_player is None or for_player == state.current:
        mask = layout.mask_of(state.legal_moves())
    else:
        mask = bytearray(layout.num_actions)
    return np.frombuffer(mask, dtype=np.int8)


def move_ids(game: str) -> dict[Move, int]:
    """Engine move -> action id for every action of ``game`` (the inverse of ``ActionLayout.moves``)."""
    return action_layout(game).ids


def describe_action(state: GameState, action: int) -> str:
    """Action ``action`` in words for ``state``'s game (cards in G2 notation)."""
    if isinstance(action, (bool, np.bool_)):
        raise EncodingError(f"action {action!r} is a bool, not an action id")
    move = action_layout(state.rules.game).move(action)  # an id that is not one raises, naming it
    return f"action {operator.index(action)} {state.describe_move(move)}"


# ----------------------------------------------------------------------------- observation


def split_observation(observation: np.ndarray, game: str, num_players: int) -> dict[str, np.ndarray]:
    """The observation cut into its named parts (views, with planes of several rows of 53 reshaped)."""
    parts = {}
    layout = layout_for(rules_for(game, num_players))
    for entry in layout.planes:
        view = observation[..., layout.slices[entry.name]]
        if entry.width == NUM_TYPES and entry.rows != ONE:
            view = view.reshape(*observation.shape[:-1], -1, NUM_TYPES)
        parts[entry.name] = view
    return parts


class ObservationEncoder:
    """Builds the observation vector of one rule set for any seat of a ``GameState``.

    ``encode`` reads only public facts and the observer's own hand. Each plane's writer
    (``obs_spec.OBSERVATION_PLANES``) gives its entries as small ints; they are joined into one
    int8 buffer (``encode_bytes``), then converted and scaled once (stock size, hand sizes, turn).
    """

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.layout = layout_for(rules)
        s = self.layout.slices
        n = rules.num_players
        self.size = self.layout.size
        self._n = n
        self._rows = tuple(operator.itemgetter(*((observer + i) % n for i in range(n))) for observer in range(n))
        self.to_act_bytes = tuple(bytes(i) + b"\x01" + bytes(n - i - 1) for i in range(n))
        """Relative seat -> the ``to_act`` one-hot."""
        self._writers = tuple(entry.write for entry in self.layout.planes if entry.write is not None)
        self._table = rules.table_melds
        self._max_slots = rules.spec.max_table_melds
        self._hand = s["hand"]
        self._top = s["discard_top"].start
        self._rest = s["discard_rest"]
        self._taken = s["just_taken"].start
        self._must = s["must_place"].start if "must_place" in s else -1
        self._cut = s["cut_card"].start if "cut_card" in s else -1
        self._table_slice = slice(s["table_cards"].start, s["table_melds"].stop) if self._table else None
        self._known = s["known"].start
        self._discarded = s["discarded"].start
        self._phase = s["phase"].start
        self._to_act = s["to_act"].start
        self._stock = s["stock_size"].start
        self._rebuilt = s["stock_rebuilt"].start
        self._hand_sizes = s["hand_sizes"]
        self._opened = s["opened"] if "opened" in s else None
        self._match = s["match_scores"]
        self._turn = s["turn"].start
        cap = discard_cap(rules.decks, rules.printed_jokers)
        self._cap_discarded = bytes(min(v, cap) for v in range(256))
        scale = np.ones(self.size, np.float32)
        for entry in self.layout.planes:
            if entry.scale is not None:
                scale[s[entry.name]] = entry.scale(rules)
        self._scale = scale
        self._max_turns = rules.max_turns
        self._inverse_target = 1.0 / rules.match_target

    def rows_of(self, observer: int):
        """A function picking per-player entries in seat order relative to ``observer``."""
        return self._rows[observer]

    def table_bytes(self, table: list[list]) -> bytes:
        """The ``table_cards`` and ``table_melds`` planes as int8 bytes."""
        counts = [0] * NUM_TYPES
        melds = bytearray(self._max_slots * NUM_TYPES)
        if len(table) > self._max_slots:
            raise EncodingError(f"{len(table)} table melds, more than the {self._max_slots} the encoding holds")
        for slot, (kind, key, low, cards) in enumerate(table):
            row = slot * NUM_TYPES
            jokers = 0
            for i, card in enumerate(cards):
                if card == -1:
                    continue
                stands_for = i * NUM_RANKS + key if kind == SET else key * NUM_RANKS + (low + i) % NUM_RANKS
                counts[card] += 1
                if card == JOKER:
                    jokers += 1
                    melds[row + stands_for] = 255  # -1 as int8
                else:
                    melds[row + stands_for] = 1
            melds[row + JOKER] = jokers
        return bytes(counts) + bytes(melds)

    @staticmethod
    def discard_rest_bytes(discard: list[int]) -> bytes:
        """The ``discard_rest`` plane (the pile under its top) as bytes."""
        rest = [0] * NUM_TYPES
        for card in discard[:-1]:
            rest[card] += 1
        return bytes(rest)

    def capped_discards(self, counts: list[int]) -> bytes:
        """One player's ``discarded`` row, capped, as bytes."""
        try:
            return bytes(counts).translate(self._cap_discarded)
        except ValueError:  # a count above 255
            return bytes(min(x, 255) for x in counts).translate(self._cap_discarded)

    def encode_bytes(self, state: GameState, observer: int) -> bytearray:
        """The observation of seat ``observer`` as int8 entries, before scaling (no match scores)."""
        return bytearray(b"".join([write(self, state, observer) for write in self._writers]))

    def finish(self, buffer: bytearray | np.ndarray, observer: int, match_totals=None) -> np.ndarray:
        """The float32 observation from ``encode_bytes``' buffer (or an int8 view of it), with the match scores."""
        obs = (buffer if isinstance(buffer, np.ndarray) else np.frombuffer(buffer, dtype=np.int8)) * self._scale
        if match_totals is not None:
            inverse = self._inverse_target
            obs[self._match] = [min(total * inverse, 2.0) for total in self._rows[observer](match_totals)]
        return obs

    def encode(self, state: GameState, observer: int, match_totals=None) -> np.ndarray:
        """The observation of seat ``observer``, a new float32 vector."""
        return self.finish(self.encode_bytes(state, observer), observer, match_totals)


def _changes(old: bytes | bytearray, new: bytes) -> list[tuple[int, int]]:
    """(index, int8 value of ``new``) wherever the two byte strings (of one length) differ."""
    diff = int.from_bytes(old, "little") ^ int.from_bytes(new, "little")
    out = []
    while diff:
        i = (diff.bit_length() - 1) >> 3
        value = new[i]
        out.append((i, value if value < 128 else value - 256))
        diff &= (1 << (i << 3)) - 1
    return out


_OBSERVED_FAST = ("discard_top", "just_taken", "must_place", "cut_card", "phase", "to_act", "stock_size",
                  "stock_rebuilt", "turn")
"""The planes kept ``"observe"`` that ``ObservationTracker.observe`` sets cell by cell."""


class ObservationTracker:
    """The observations of one hand, kept per seat and brought up to date as moves are played.

    ``encode`` rebuilds everything; the tracker rewrites only what a move can have changed, which
    makes an observation several times cheaper. It relies on facts of the engine that
    ``tests/test_env.py`` checks against ``encode`` on every step: a move changes the hand, known
    cards, discards and opened flag of the player who made it and of nobody else; a draw changes
    one card of the hand, taking the discard top one card of the hand and of the known cards, a
    discard or declaration that card of the hand, known cards and discards; melds, lay-offs and the
    cut-card move (after which the player's rows are compared card by card) are the only moves that
    change the table; the cards under the discard top stay put while the pile grows. Call ``start``
    for each new hand and ``moved`` after each move.

    Each seat that has looked keeps a float32 vector; ``moved`` writes the cells a move changed
    into every such vector, and ``observe`` sets the one-hot marks and scalars and returns a copy
    (a new array each time: observations handed out never change).
    """

    def __init__(self, encoder: ObservationEncoder):
        self.encoder = encoder
        n = self._n = encoder.rules.num_players
        self._has_table = encoder._table
        self._max_turns = encoder._max_turns
        self._offsets = (encoder._top, encoder._taken, encoder._must, encoder._cut, encoder._phase,
                         encoder._to_act, encoder._stock, encoder._rebuilt, encoder._turn)
        self._hand = encoder._hand
        self._known = encoder._known
        self._discarded = encoder._discarded
        self._sizes_at = encoder._hand_sizes.start
        self._opened = -1 if encoder._opened is None else encoder._opened.start
        self._rest_slice = encoder._rest
        self._table_at = encoder._table_slice.start if encoder._table_slice is not None else -1
        self._cap = discard_cap(encoder.rules.decks, encoder.rules.printed_jokers)
        self._row_of = tuple(tuple((p - o) % n for p in range(n)) for o in range(n))
        # per observer, per player: where that player's hand (own seat only, else -1), known
        # cards, discards and hand size start in the observer's vector
        self._places = tuple(
            tuple((self._hand.start if p == o else -1, self._known + NUM_TYPES * row,
                   self._discarded + NUM_TYPES * row, self._sizes_at + row)
                  for p, row in enumerate(rows))
            for o, rows in enumerate(self._row_of))
        # ``encode`` multiplies int8 entries by the float32 scale; the scaled entries (stock size,
        # hand sizes, turn) are looked up in tables of the same float32 products.
        scale = encoder._scale
        values = np.arange(256, dtype=np.int64).astype(np.uint8).view(np.int8).astype(np.float32)
        self._stock_values = (values * scale[encoder._stock]).tolist()
        self._size_values = (values * scale[encoder._hand_sizes.start]).tolist()
        self._turn_values = (values * scale[encoder._turn]).tolist()
        # the turn entry for each turn of a hand (when the cap is not huge)
        self._turn_cells = [self._turn_values[min(t * 127 // self._max_turns, 127)]
                            for t in range(min(self._max_turns, 1 << 16) + 1)]
        self._to_act_at = tuple(tuple(encoder._to_act + row for row in rows) for rows in self._row_of)
        self._match = encoder._match
        self._inverse_target = encoder._inverse_target
        self._rows = encoder._rows
        # what the spec asks of the tracker (``obs_spec.Plane.keep``): planes kept by moves need a
        # branch in ``moved``; planes rewritten at each look that ``observe`` has no fast code for
        # are rewritten from their writers
        planes = encoder.layout.planes
        unknown = [p.name for p in planes if p.keep == MOVES and p.name not in MOVE_KEPT]
        if unknown:
            raise EncodingError(f"observation planes {unknown} are kept 'moves', but ObservationTracker.moved keeps "
                                f"only {MOVE_KEPT}: keep them 'observe' (obs_spec) or give moved a branch")
        unknown = [f"{p.name} ({p.keep!r})" for p in planes
                   if p.keep not in (DEAL, OBSERVE, MOVES) and p.name != "match_scores"]
        if unknown:
            raise EncodingError(f"observation planes {', '.join(unknown)}: no code keeps them that way (only "
                                f"match_scores is set from the match totals); keep them 'observe' (obs_spec)")
        self._rewritten = tuple((encoder.layout.slices[p.name], p.write, encoder._scale[encoder.layout.slices[p.name]])
                                for p in planes if p.keep == OBSERVE and p.name not in _OBSERVED_FAST)
        self._vectors: list[np.ndarray | None] = [None] * n
        self._stale = True

    def start(self, state: GameState) -> None:
        """Forget everything: a new hand (or a state changed behind the tracker's back)."""
        n = self._n
        self._vectors = [None] * n  # per seat that has looked: its float32 observation
        self._cells: list[memoryview | None] = [None] * n  # the same memory, to write single cells
        self._looking: list[tuple] = []  # per seat that has looked: (cells, its _places, rest start)
        self._marks: list[list[int] | None] = [None] * n  # per seat: the one-hot entries last set
        self._table_part = self.encoder.table_bytes(state.table) if self._has_table else b""
        self._rest = bytearray(ObservationEncoder.discard_rest_bytes(state.discard))
        self._rest_length = len(state.discard)
        self._rest_rebuilds = state.rebuilds
        self._sizes = [sum(hand) for hand in state.hands]
        # each player's rows as the vectors hold them (int8), to find what a move changed
        self._hand_rows = [bytearray(hand) for hand in state.hands]
        self._known_rows = [bytearray(known) for known in state.known]
        self._discarded_rows = [bytearray(self.encoder.capped_discards(d)) for d in state.discarded]
        self._stale = False

    def moved(self, player: int, move, state: GameState | None = None, drawn: int = -1) -> None:
        """Note that ``player`` made ``move``, leaving ``state`` (``drawn``: the card a draw took,
        read from the stock before it). Without ``state``, the next ``observe`` starts afresh."""
        if state is None:
            self._stale = True
            return
        if self._stale:
            return
        kind = move[0]
        discard = state.discard
        length = len(discard)
        old = self._rest_length
        if length == old and state.rebuilds == self._rest_rebuilds:
            rest = ()
        elif length == old + 1 and old >= 1 and state.rebuilds == self._rest_rebuilds:
            under = discard[-2]  # a discard: the old top joins the cards under it
            self._rest[under] += 1
            self._rest_length = length
            rest = (under,)
        elif length == old - 1 and length >= 1 and state.rebuilds == self._rest_rebuilds:
            under = discard[-1]  # the top taken: the card under it is the top now
            self._rest[under] -= 1
            self._rest_length = length
            rest = (under,)
        else:
            rest = self._update_rest(state)
        sizes = self._sizes
        if kind == DISCARD or kind == DECLARE:
            card = move[1]
            sizes[player] -= 1
            count = state.discarded[player][card]
            discarded = count if count < self._cap else self._cap
        elif kind == TAKE_DISCARD:
            card = state.taken_card
            sizes[player] += 1
            discarded = -1
        elif kind == DRAW and drawn != -1:
            card = drawn
            sizes[player] += 1
            discarded = -1
        else:  # melds, lay-offs, swaps, the cut card: compare the player's rows card by card
            sizes[player] = sum(state.hands[player])
            self._full_update(state, player, kind, rest)
            return
        in_hand = state.hands[player][card]
        self._hand_rows[player][card] = in_hand
        if kind != DRAW:
            known = self._known_rows[player][card] = state.known[player][card]
            if discarded != -1:
                self._discarded_rows[player][card] = discarded
        else:
            known = -1
        size = self._size_values[sizes[player]]
        for cells, places, rest_at in self._looking:
            hand_at, known_at, discarded_at, size_at = places[player]
            if hand_at != -1:
                cells[hand_at + card] = in_hand
            if known != -1:
                cells[known_at + card] = known
                if discarded != -1:
                    cells[discarded_at + card] = discarded
            cells[size_at] = size
            if rest:
                for changed in rest:
                    cells[rest_at + changed] = self._rest[changed]
            elif rest is None:
                cells[rest_at:rest_at + NUM_TYPES] = np.frombuffer(self._rest, dtype=np.uint8).astype(np.float32)

    def _full_update(self, state: GameState, player: int, kind: int, rest: list[int] | tuple | None) -> None:
        """``moved`` for a move that may change any card of the player's rows (and the table)."""
        hand = bytes(state.hands[player])
        known = bytes(state.known[player])
        discarded = self.encoder.capped_discards(state.discarded[player])
        hand_changes = _changes(self._hand_rows[player], hand)
        known_changes = _changes(self._known_rows[player], known)
        discarded_changes = _changes(self._discarded_rows[player], discarded)
        self._hand_rows[player] = bytearray(hand)
        self._known_rows[player] = bytearray(known)
        self._discarded_rows[player] = bytearray(discarded)
        table_changes: list | tuple = ()
        if kind == MELD or kind == PLACE or kind == PLACE_JOKER_LOW or kind == TAKE_CUT:
            table = self.encoder.table_bytes(state.table)
            table_changes = _changes(self._table_part, table)
            self._table_part = table
        size = self._size_values[self._sizes[player]]
        opened = 1 if state.opened[player] else 0
        table_at = self._table_at
        rest_at = self._rest_slice.start
        for observer, cells in enumerate(self._cells):
            if cells is None:
                continue
            hand_at, known_at, discarded_at, size_at = self._places[observer][player]
            if hand_at != -1:
                for card, value in hand_changes:
                    cells[hand_at + card] = value
            for card, value in known_changes:
                cells[known_at + card] = value
            for card, value in discarded_changes:
                cells[discarded_at + card] = value
            cells[size_at] = size
            if self._opened != -1:
                cells[self._opened + self._row_of[observer][player]] = opened
            if rest is None:
                cells[rest_at:rest_at + NUM_TYPES] = np.frombuffer(self._rest, dtype=np.uint8).astype(np.float32)
            else:
                for changed in rest:
                    cells[rest_at + changed] = self._rest[changed]
            for at, value in table_changes:
                cells[table_at + at] = value

    def _update_rest(self, state: GameState) -> list[int] | None:
        """Bring the counts under the discard top up to date: the cards whose count changed, or
        None when they were counted afresh."""
        # The pile changes only at its top and a turn takes at most one card before discarding,
        # so cards under the top stay put while the pile grows; a rebuild (G8) recounts.
        discard = state.discard
        length = len(discard)
        old = self._rest_length
        counts = self._rest
        changed: list[int] | None
        if state.rebuilds == self._rest_rebuilds and length > old >= 1:
            changed = discard[old - 1:length - 1]
            for card in changed:
                counts[card] += 1
        elif state.rebuilds == self._rest_rebuilds and length == old - 1 >= 1:
            card = discard[length - 1]
            counts[card] -= 1
            changed = [card]
        else:
            self._rest = bytearray(ObservationEncoder.discard_rest_bytes(discard))
            changed = None
        self._rest_length = length
        self._rest_rebuilds = state.rebuilds
        return changed

    def observe(self, state: GameState, observer: int, match_totals=None) -> np.ndarray:
        """The observation of seat ``observer`` now: equal to ``encoder.encode(state, observer, match_totals)``."""
        if self._stale:
            self.start(state)
        vector = self._vectors[observer]
        top, taken, must, cut, phase, to_act, stock, rebuilt, turn = self._offsets
        if vector is None:
            vector = self._vectors[observer] = self.encoder.encode(state, observer)
            cells = self._cells[observer] = memoryview(vector)
            self._looking.append((cells, self._places[observer], self._rest_slice.start))
        else:
            cells = self._cells[observer]
            for mark in self._marks[observer]:
                cells[mark] = 0
            cells[stock] = self._stock_values[len(state.stock)]
            cells[rebuilt] = 1 if state.rebuilds else 0
            if state.turn < len(self._turn_cells):
                cells[turn] = self._turn_cells[state.turn]
            else:
                turns = state.turn * 127 // self._max_turns
                cells[turn] = self._turn_values[turns if turns < 127 else 127]
        discard = state.discard
        mark = self._to_act_at[observer][state.current]
        cells[mark] = 1
        marks = [mark]
        if discard:
            mark = top + discard[-1]
            cells[mark] = 1
            marks.append(mark)
        if state.taken_card != -1:
            mark = taken + state.taken_card
            cells[mark] = 1
            marks.append(mark)
        if state.phase < 2:  # PHASE_DRAW, PHASE_PLAY
            mark = phase + state.phase
            cells[mark] = 1
            marks.append(mark)
        if must != -1:
            if state.owed_card != -1:
                mark = must + state.owed_card
                cells[mark] = 1
                marks.append(mark)
            if state.owed_jokers:
                mark = must + JOKER
                cells[mark] = state.owed_jokers
                marks.append(mark)
            if state.cut_card != -1:
                mark = cut + state.cut_card
                cells[mark] = 1
                marks.append(mark)
        self._marks[observer] = marks
        for part, write, scale in self._rewritten:
            vector[part] = np.frombuffer(write(self.encoder, state, observer), dtype=np.int8) * scale
        obs = vector.copy()
        if match_totals is not None:
            inverse = self._inverse_target
            obs[self._match] = [min(total * inverse, 2.0) for total in self._rows[observer](match_totals)]
        return obs


def encode_observation(state: GameState, observer: int, match_totals=None) -> np.ndarray:
    """The float32 observation vector of seat ``observer`` in ``state``."""
    return ObservationEncoder(state.rules).encode(state, observer, match_totals)
