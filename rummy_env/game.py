"""The game engine: one turn loop, three rule sets (RULES G1–G10, I1–I9, B1–B6, R1–R8).

A ``GameState`` is one hand. It lists its legal moves (``legal_moves``), applies one
(``apply``), and can be cloned, serialised (``to_dict`` / ``from_dict``) and replayed from its
seed and move list (``replay``). A move is a tuple ``(kind, a, b)`` of small ints:

====================  ====================  ==============================================
kind                  a, b                  meaning
====================  ====================  ==============================================
``DRAW``              0, 0                  take the stock top (I4, B3, R4)
``TAKE_DISCARD``      0, 0                  take the discard top (G7, R4)
``TAKE_CUT``          0, 0                  römi: take the cut card and go out (R4)
``DISCARD``           card, 0               discard ``card``, ending the turn
``DECLARE``           card, 0               Indian: discard ``card`` and declare (I5)
``MELD``              template id, 0        lay a meld template on the table (B3, R5)
``PLACE``             card, table slot      lay off ``card`` (a joker: at a run's high
                                            end), or swap it for a joker (R5)
``PLACE_JOKER_LOW``   table slot, 0         römi: lay a joker off at a run's low end (R5)
====================  ====================  ==============================================

Römi cards owed to the table (R4, R5): the discard top taken after the first turn
(``owed_card``) and jokers taken by swaps or from the discard pile (``owed_jokers``) must be on
the table by the end of the turn, by any of its plays. A play is listed only when, after it,
some plays can still place them all and leave a card to discard, so no listed move leads to a
dead end; the turn cannot end while one is in hand.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress

from . import solver
from .cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_SUITS, NUM_TYPES, format_card, format_cards, make_card, to_counts
from .melds import RUN as RUN_MELD
from .melds import SET as SET_MELD
from .melds import MeldRules, is_meld_cards, meld_templates, table_meld_cards, table_meld_from_template
from .ruleset import RuleSet, make_ruleset
from .solver_tables import mask_facts
from .table import JOKER_LOW_END, LAY_OFF, SWAP, held_bits, place_card, placements, suit_masks, template_index

DRAW, TAKE_DISCARD, TAKE_CUT, DISCARD, DECLARE, MELD, PLACE, PLACE_JOKER_LOW = range(8)
MOVE_NAMES = ("draw", "take_discard", "take_cut", "discard", "declare", "meld", "place", "place_joker_low")

PHASE_DRAW, PHASE_PLAY, PHASE_OVER = range(3)

Move = tuple[int, int, int]

_DRAW_MOVE = (DRAW, 0, 0)
_TAKE_DISCARD_MOVE = (TAKE_DISCARD, 0, 0)
_TAKE_CUT_MOVE = (TAKE_CUT, 0, 0)
_DISCARD_MOVES = tuple((DISCARD, c, 0) for c in range(NUM_TYPES))
_DECLARE_MOVES = tuple((DECLARE, c, 0) for c in range(NUM_TYPES))
_MELD_MOVES = tuple((MELD, t, 0) for t in range(max(len(meld_templates(True)), len(meld_templates(False)))))


class IllegalMoveError(ValueError):
    """A move the rules do not allow now, or not a move at all; the state is left as it was."""


class InvalidStateError(ValueError):
    """A state ``GameState.from_dict`` (or a deck ``GameState.from_deck``) was given that no hand
    of the game can reach; the message names what is wrong."""


def _as_move(move) -> Move:
    """``move`` as a tuple of three ints, or ``IllegalMoveError`` naming what it is instead."""
    try:
        items = tuple(move)
    except TypeError:
        raise IllegalMoveError(f"illegal move {move!r}: a move is a tuple (kind, a, b) of three ints") from None
    if len(items) != 3:
        raise IllegalMoveError(
            f"illegal move {move!r}: a move is a tuple (kind, a, b) of three ints, not {len(items)} items")
    out = []
    for name, x in zip(("kind", "a", "b"), items):
        if isinstance(x, bool) or not hasattr(type(x), "__index__"):
            raise IllegalMoveError(f"illegal move {move!r}: {name}={x!r} is not an int")
        out.append(x.__index__())
    return tuple(out)


@dataclass(frozen=True)
class HandResult:
    """How a hand ended and what each player pays (RULES I6, I7, B5, R7, G8, G9)."""

    outcome: str
    """``"declare"`` (Indian), ``"out"`` (Basic, römi), ``"stalemate"`` (G8) or ``"cut_off"`` (G9)."""
    winner: int | None
    payments: tuple[int, ...]
    """What each player pays; the winner pays 0. All zero in a stalemate or cut-off hand."""

    @property
    def rewards(self) -> tuple[int, ...]:
        """Zero-sum points: the winner gets what the others pay, each other player minus theirs."""
        if self.winner is None:
            return tuple(0 for _ in self.payments)
        total = sum(self.payments)
        return tuple(total if p == self.winner else -pay for p, pay in enumerate(self.payments))


def shuffle_rng(seed: int | str, *salt: int) -> random.Random:
    """The generator for one shuffle: seeded from text, so the same on every machine (G10)."""
    return random.Random(":".join(str(x) for x in (seed, *salt)))


def game_deck(rules: RuleSet) -> list[int]:
    """The game's cards in a fixed order: ``rules.decks`` of each natural card, then the jokers (G1)."""
    return [c for c in range(NUM_NATURAL) for _ in range(rules.decks)] + [JOKER] * rules.printed_jokers


def shuffled_deck(rules: RuleSet, seed: int | str) -> list[int]:
    """The deck after the shuffle of ``seed`` (G10), the top card last: ``GameState`` deals from the top."""
    deck = game_deck(rules)
    shuffle_rng(seed, 0).shuffle(deck)
    return deck


def _checked_cards(name: str, cards) -> list[int]:
    """``cards`` as a list of card types (ints 0..52), or ``InvalidStateError`` naming the bad one."""
    if isinstance(cards, (str, bytes)) or not hasattr(cards, "__iter__"):
        raise InvalidStateError(f"{name} must be a list of card types (ints 0..{JOKER}), not {type(cards).__name__}")
    out = []
    for i, card in enumerate(cards):
        if isinstance(card, bool) or not hasattr(type(card), "__index__") or not 0 <= card.__index__() <= JOKER:
            raise InvalidStateError(f"{name}[{i}]={card!r} is not a card type: expected an int 0..{JOKER}")
        out.append(card.__index__())
    return out


def _checked_deck(rules: RuleSet, deck) -> list[int]:
    """``deck`` as a list, if it holds exactly the game's cards (G1); else ``InvalidStateError`` naming a card."""
    cards = _checked_cards("deck", deck)
    wanted, got = to_counts(game_deck(rules)), to_counts(cards)
    if wanted != got:
        card = next(c for c in range(NUM_TYPES) if wanted[c] != got[c])
        raise InvalidStateError(f"deck: {len(cards)} cards with {got[card]} {format_card(card)}, but "
                                f"{rules.spec.title} is played with {sum(wanted)} cards with "
                                f"{wanted[card]} {format_card(card)} (G1)")
    return cards


# ----------------------------------------------------------------------------- the state's fields

_VALUE, _LIST, _ROWS, _TABLE, _CACHE = "value", "list", "rows", "table", "cache"
"""How a field is copied: an immutable value (shared as is), a flat list, a list of rows, the table
melds (``[kind, key, low, slots]``, the slots a list), or a cache a copy may keep or drop."""


@dataclass(frozen=True)
class StateField:
    """One field of ``GameState``: how ``clone``, ``_trial``, ``to_dict`` and ``from_dict`` treat it."""

    name: str
    copy: str
    """``"value"``, ``"list"``, ``"rows"``, ``"table"`` or ``"cache"`` (see ``_VALUE`` …)."""
    shared_in_trial: bool
    """Whether a look-ahead copy (``_trial``) shares it with the real game instead of copying it:
    only fields no play of the turn changes. A trial sees them read-only (``TrialWriteError``)."""
    why: str
    """Why the state keeps it (the rule it serves)."""
    keys: tuple[str, ...] = ()
    """The ``to_dict`` keys it writes (none: derived from other fields, or a cache)."""
    required: bool = True
    """Whether ``from_dict`` needs its keys (older dicts may lack an optional one)."""
    dump: Callable | None = None
    """value -> {key: JSON value}; None: the copy kind's plain JSON form under ``name``."""
    load: Callable | None = None
    """(_StateCheck, dict) -> the checked value; None for a derived field or a cache."""


def _plain_json(field: StateField, value) -> dict:
    if field.copy == _LIST:
        value = list(value)
    elif field.copy == _ROWS:
        value = [list(row) for row in value]
    elif field.copy == _TABLE:
        value = [[m[0], m[1], m[2], list(m[3])] for m in value]
    return {field.name: value}


def _field(name: str, copy: str, why: str, load: Callable | None = None, shared: bool = False, dump=None,
           keys: tuple[str, ...] | None = None, required: bool = True) -> StateField:
    if keys is None:
        keys = () if load is None else (name,)
    return StateField(name, copy, shared, why, keys, required, dump, load)


def _load_rules(check: _StateCheck, data: dict) -> RuleSet:
    return check.rules


def _load_rebuilt_stock(check: _StateCheck, data: dict) -> tuple[int, ...] | None:
    given = data.get("rebuilt_stock")
    return None if given is None else tuple(check.cards("rebuilt_stock", given))


def _load_owed_card(check: _StateCheck, data: dict) -> int:
    if "owed_card" in data:
        return check.integer("owed_card", data["owed_card"], -1, NUM_NATURAL - 1)
    card = check.integer("must_place", data.get("must_place", -1), -1, JOKER)  # written before jokers were owed apart
    return card if card != JOKER else -1


def _load_owed_jokers(check: _StateCheck, data: dict) -> int:
    if "owed_card" in data:
        return check.integer("owed_jokers", data.get("owed_jokers", 0), 0, check.rules.printed_jokers)
    return 1 if data.get("must_place", -1) == JOKER else 0


STATE_FIELDS: tuple[StateField, ...] = (
    _field("rules", _VALUE, "the game, player count and options (the rule set, G1–G10 and the game's own rules)",
           _load_rules, keys=("game", "num_players", "options"),
           dump=lambda r: {"game": r.game, "num_players": r.num_players, "options": r.options}),
    _field("seed", _VALUE, "the deal's seed: the stock is reshuffled from it when rebuilt (G8, G10); "
           "None for a hand dealt from a deck order (from_deck)",
           lambda c, d: c.seed(d["seed"], d.get("rebuilt_stock") is not None)),
    _field("rebuilt_stock", _VALUE, "a hand dealt from a deck order: the stock after its rebuild (G8), top last, "
           "() if none was given; None for a seeded hand", _load_rebuilt_stock, required=False,
           dump=lambda v: {"rebuilt_stock": None if v is None else list(v)}),
    _field("first_player", _VALUE, "who started the hand (G6)",
           lambda c, d: c.integer("first_player", d["first_player"], 0, c.rules.num_players - 1)),
    _field("hands", _ROWS, "each player's cards, counts per card type",
           lambda c, d: c.per_player("hands", d["hands"], c.rules.num_players)),
    _field("stock", _LIST, "the face-down stock, top last (I4, B3, R4); only drawing and a rebuild change it",
           lambda c, d: c.cards("stock", d["stock"]), shared=True),
    _field("discard", _LIST, "the discard pile, top last (G7)", lambda c, d: c.cards("discard", d["discard"])),
    _field("table", _TABLE, "the melds on the table, in the order laid (B3, R5)",
           lambda c, d: [c.table_meld(i, m) for i, m in enumerate(c.seq("table", d["table"]))]),
    _field("cut_card", _VALUE, "römi: the cut card while it lies there (R2), else -1",
           lambda c, d: c.integer("cut_card", d["cut_card"], -1, JOKER if c.rules.cut_card else -1)),
    _field("wild_card", _VALUE, "Indian: the card turned up to name the wild rank (I2), else -1",
           lambda c, d: c.integer("wild_card", d["wild_card"], -1, JOKER if c.rules.wild_joker else -1)),
    _field("wild_rank", _VALUE, "Indian: the wild rank (I2), else None; derived from wild_card"),
    _field("current", _VALUE, "the player to act",
           lambda c, d: c.integer("current", d["current"], 0, c.rules.num_players - 1)),
    _field("phase", _VALUE, "draw, play or over",
           lambda c, d: c.integer("phase", d["phase"], PHASE_DRAW, PHASE_OVER)),
    _field("turn", _VALUE, "turns played this hand (G9)",
           lambda c, d: c.integer("turn", d["turn"], 0, c.rules.max_turns)),
    _field("turns_taken", _LIST, "turns each player has ended: the discard top is free only on one's first (R4)",
           lambda c, d: c.rows("turns_taken", d["turns_taken"], c.rules.num_players, 1 << 30), shared=True),
    _field("taken_card", _VALUE, "the card taken this turn from the pile or as the cut card, else -1 (G7)",
           lambda c, d: c.integer("taken_card", d["taken_card"], -1, JOKER)),
    _field("owed_card", _VALUE, "römi: the discard top taken after the first turn, owed to the table (R4)",
           _load_owed_card, required=False),
    _field("owed_jokers", _VALUE, "römi: jokers owed to the table this turn, from swaps or the pile (R4, R5)",
           _load_owed_jokers, required=False),
    _field("opened", _LIST, "who has a meld on the table: lay-offs need one (R5), unopened pay 80 (R7)",
           lambda c, d: c.flags("opened", d["opened"], c.rules.num_players)),
    _field("has_laid", _LIST, "who has laid cards in a turn already ended: the rummy bonus (B6)",
           lambda c, d: c.flags("has_laid", d["has_laid"], c.rules.num_players), shared=True),
    _field("laid_this_turn", _VALUE, "whether the player to act has laid cards this turn (B6)",
           lambda c, d: c.flag("laid_this_turn", d["laid_this_turn"])),
    _field("rebuilds", _VALUE, "1 once the stock was rebuilt from the discards: the next empty stock ends it (G8)",
           lambda c, d: c.integer("rebuilds", d["rebuilds"], 0, 1)),
    _field("known", _ROWS, "per player, cards known to be in their hand: taken from the pile (public, G7)",
           lambda c, d: c.per_player("known", d["known"], c.rules.num_players)),
    _field("discarded", _ROWS, "per player, the cards they discarded this hand (public)",
           lambda c, d: c.per_player("discarded", d["discarded"], c.rules.num_players), shared=True),
    _field("result", _VALUE, "how the hand ended and what each pays (I6, I7, B5, R7, G8, G9), else None",
           lambda c, d: c.result(d["result"]),
           dump=lambda r: {"result": None if r is None else
                           {"outcome": r.outcome, "winner": r.winner, "payments": list(r.payments)}}),
    _field("history", _LIST, "the moves played this hand: with the seed they replay it (G10)",
           lambda c, d: [_as_state_move(i, m) for i, m in enumerate(c.seq("history", d["history"]))],
           shared=True, dump=lambda h: {"history": [list(m) for m in h]}),
    _field("_legal", _CACHE, "the legal moves, once listed (a tuple: callers cannot change it)"),
)
"""Every field of ``GameState``, in ``to_dict`` order: the one list copying and serialising read."""

_STATE_KEYS = tuple(key for f in STATE_FIELDS if f.required for key in f.keys)
"""The keys ``from_dict`` needs (``owed_card`` and ``owed_jokers`` default to nothing owed)."""


class GameState:
    """One hand of one of the three games, with whose turn it is and what may happen next."""

    __slots__ = tuple(f.name for f in STATE_FIELDS)

    def __init__(self, rules: RuleSet, seed: int | str = 0, first_player: int = 0):
        self._deal(rules, seed, first_player, shuffled_deck(rules, seed), None)

    @classmethod
    def from_deck(cls, rules: RuleSet, deck, first_player: int = 0, rebuilt_stock=None) -> GameState:
        """A hand dealt from a given deck order instead of a seed (a game record, docs/records.md).

        ``deck`` is the shuffled deck as ``shuffled_deck`` gives it, the top card last (dealt
        first); it must be exactly the game's cards (G1). ``rebuilt_stock`` is the stock after its
        one rebuild from the discards (G8), top last, if the hand rebuilds it: there is no seed to
        shuffle with. A deck that is not the game's is an ``InvalidStateError`` naming the card."""
        deck = _checked_deck(rules, deck)
        state = cls.__new__(cls)
        rebuilt = () if rebuilt_stock is None else tuple(_checked_cards("rebuilt_stock", rebuilt_stock))
        state._deal(rules, None, first_player, deck, rebuilt)
        return state

    def _deal(self, rules: RuleSet, seed, first_player: int, deck: list[int], rebuilt_stock) -> None:
        """Deal ``deck`` (top last) from ``first_player`` on (G6; R2 the cut card, I2 the wild joker)."""
        if not 0 <= first_player < rules.num_players:
            raise ValueError(f"first_player={first_player} is out of range 0..{rules.num_players - 1}")
        self.rules = rules
        self.seed = seed
        self.rebuilt_stock = rebuilt_stock
        self.first_player = first_player
        n = rules.num_players
        self.cut_card = deck.pop() if rules.cut_card else -1  # R2: turned before the deal
        self.hands = [[0] * NUM_TYPES for _ in range(n)]
        for _ in range(rules.hand_size):
            for i in range(n):
                self.hands[(first_player + i) % n][deck.pop()] += 1
        self.discard = [deck.pop()]
        self.wild_card = deck.pop() if rules.wild_joker else -1  # I2
        if self.wild_card == -1:
            self.wild_rank = None
        else:
            self.wild_rank = 0 if self.wild_card == JOKER else self.wild_card % NUM_RANKS
        self.stock = deck
        self.table: list[list] = []
        self.current = first_player
        self.phase = PHASE_DRAW
        self.turn = 0
        self.turns_taken = [0] * n
        self.taken_card = -1
        self.owed_card = -1
        self.owed_jokers = 0
        self.opened = [False] * n
        self.has_laid = [False] * n
        self.laid_this_turn = False
        self.rebuilds = 0
        self.known = [[0] * NUM_TYPES for _ in range(n)]
        self.discarded = [[0] * NUM_TYPES for _ in range(n)]
        self.result: HandResult | None = None
        self.history: list[Move] = []
        self._legal: list[Move] | None = None

    @classmethod
    def new(cls, game: str, num_players: int = 2, seed: int | str = 0, first_player: int = 0, **options) -> GameState:
        """A freshly dealt hand of ``game`` (RULES G6)."""
        return cls(make_ruleset(game, num_players, **options), seed, first_player)

    # ----------------------------------------------------------------- queries

    @property
    def must_place(self) -> int:
        """A card owed to the table this turn (R4, R5): the discard top taken after the first turn,
        else a joker if one is owed, else -1. Setting it owes that one card and nothing else."""
        if self.owed_card != -1:
            return self.owed_card
        return JOKER if self.owed_jokers else -1

    @must_place.setter
    def must_place(self, card: int) -> None:
        self.owed_card = card if card != JOKER else -1
        self.owed_jokers = 1 if card == JOKER else 0

    def owed_cards(self) -> list[int]:
        """The cards owed to the table this turn (R4, R5), jokers last."""
        return ([self.owed_card] if self.owed_card != -1 else []) + [JOKER] * self.owed_jokers

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended (a result, a stalemate or the turn cap)."""
        return self.phase == PHASE_OVER

    def legal_moves(self) -> tuple[Move, ...]:
        """Every move the rules allow the current player now (empty once the hand is over): a
        tuple, kept until the state changes, so no caller can change what the next one reads."""
        legal = self._legal
        if legal is None:
            legal = self._legal = tuple(self._compute_legal())
        return legal

    def hand_cards(self, player: int) -> list[int]:
        """The card types in ``player``'s hand, sorted."""
        hand = self.hands[player]
        return [c for c in range(NUM_TYPES) for _ in range(hand[c])]

    def clone(self) -> GameState:
        """An independent copy of this state (``STATE_FIELDS`` says how each field is copied)."""
        return _copy_whole(self, self)

    def _trial(self) -> GameState:
        """A copy for looking ahead within the turn (taking a card, melds, lay-offs, swaps): what
        those change is copied (hands, known cards, the discard pile, the table, who has opened);
        what they never touch (the stock, discards made, turns, history) is read from this state
        through read-only views, so a look-ahead cannot change the real game (``_Trial``)."""
        return _copy_trial(self, self)

    # ----------------------------------------------------------------- legal moves

    def _compute_legal(self) -> list[Move]:
        if self.phase == PHASE_OVER:
            return []
        if self.phase == PHASE_DRAW:
            return self._draw_moves()
        rules = self.rules
        moves = self._plays() if rules.table_melds else []
        if self.owed_card != -1 or self.owed_jokers:
            return moves  # R4, R5: the turn cannot end while a card owed to the table is in hand
        hand = self.hands[self.current]
        taken = self.taken_card
        start = len(moves)
        moves += compress(_DISCARD_MOVES, hand)  # every card type held, in order
        if taken != -1 and hand[taken]:
            del moves[moves.index(_DISCARD_MOVES[taken], start)]  # G7: not the card just taken
        if rules.declares:
            cards = solver.declare_discards(hand, self.wild_rank)
            if cards:
                declare = _DECLARE_MOVES
                moves += [declare[c] for c in cards if c != taken]
        return moves

    def _draw_moves(self) -> list[Move]:
        moves: list[Move] = [_DRAW_MOVE]
        facts = None  # what the two römi look-aheads both read, found once
        if self.discard:
            if not self.rules.later_take_must_be_placed or self.turns_taken[self.current] == 0:
                moves.append(_TAKE_DISCARD_MOVE)
            else:
                facts = self._hand_facts()
                if self._can_place_top(facts):
                    moves.append(_TAKE_DISCARD_MOVE)
        if self.cut_card != -1 and self._going_out_plays(facts or self._hand_facts()) is not None:
            moves.append(_TAKE_CUT_MOVE)
        return moves

    def _hand_facts(self) -> tuple[int, list[int]]:
        """(bit c set for each natural card type c the player to act holds, the card each table
        joker stands for)."""
        return held_bits(self.hands[self.current]), _table_jokers(self.table)

    def _plays(self) -> list[Move]:
        """The melds and placements the current player may make now: those the rules allow
        (``_table_plays``) after which every card owed to the table can still get there this
        turn, leaving a card to discard (R4, R5, R6, G7). Without cards owed, only a joker swap
        needs that look-ahead; with cards owed, every play does."""
        moves, swaps = self._table_plays()
        if self.owed_card == -1 and not self.owed_jokers:
            if not swaps:
                return moves
            check = set(swaps)
        else:
            check = None  # all of them
        known: dict = {}
        uses: dict = {}
        finishers: list[Move] = []  # plays that place every owed card by themselves
        if check is None:
            hand, size, taken = self.hands[self.current], sum(self.hands[self.current]), self.taken_card
            uses = {move: None if move in swaps else _cards_used(self, move) for move in moves}
            owed, jokers = self.owed_card, self.owed_jokers
            finishers = [move for move, cards in uses.items() if cards is not None
                         and (owed == -1 or owed in cards) and cards.count(JOKER) >= jokers]
        out = []
        for move in moves:
            if check is not None and move not in check:
                out.append(move)
                continue
            if finishers and uses[move] is not None and (
                    move in finishers or any(_independent(hand, size, taken, uses, move, q) for q in finishers)):
                out.append(move)  # a finisher that does not share its cards can still follow it
                continue
            trial = self._trial()
            trial._apply_play(move)
            if _can_finish(trial, known):
                out.append(move)
        return out

    def _table_plays(self) -> tuple[list[Move], list[Move]]:
        """(plays, the joker swaps among them): every meld, lay-off and swap the table rules allow
        the current player now (B3, B4, R3, R5, R6, G7), not yet asking whether cards owed to the
        table can all be placed afterwards."""
        rules = self.rules
        swaps: list[Move] = []
        if not rules.table_melds:
            return [], swaps
        player = self.current
        hand = self.hands[player]
        size = sum(hand)
        taken = self.taken_card
        may_empty = rules.out_without_discard  # B4; römi needs a last discard (R6)
        index = template_index(rules.ace_high, rules.max_jokers)
        templates = index.templates
        meld_moves = _MELD_MOVES
        moves: list[Move] = []
        for tid, jokers in index.layable(hand):
            left = size - len(templates[tid].cards)
            if left == 0 and not may_empty:
                continue
            if left and taken != -1:
                if left == hand[taken] - (jokers if taken == JOKER else taken in templates[tid].cards):
                    continue  # G7: only the card just taken would be left to discard
            moves.append(meld_moves[tid])
        if rules.layoff_needs_own_meld and not self.opened[player]:
            return moves, swaps  # R5: lay-offs and swaps need a meld of one's own on the table
        left = size - 1
        for slot, meld in enumerate(self.table):
            for card, how in placements(meld, rules.ace_high, rules.max_jokers):
                if not hand[card]:
                    continue
                if how == SWAP:
                    move = (PLACE, card, slot)
                    moves.append(move)
                    swaps.append(move)
                elif left == 0:
                    if may_empty:
                        moves.append((PLACE, card, slot))
                elif not (taken != -1 and left == hand[taken] - (card == taken)):  # G7
                    moves.append((PLACE_JOKER_LOW, slot, 0) if how == JOKER_LOW_END else (PLACE, card, slot))
        return moves, swaps

    def _can_place_top(self, facts: tuple[int, list[int]] | None = None) -> bool:
        """R4: after the first turn the discard top may be taken only if some plays this turn can
        put it on the table, leaving a card to discard (``facts``: ``_hand_facts()``, if known).

        A quick test first: the top needs a home, in a meld with cards held and the jokers that
        could be had (held, or swapped from the table), or on a table meld. Then the search.
        """
        top = self.discard[-1]
        if top != JOKER:
            held_cards, table_jokers = facts if facts is not None else self._hand_facts()
            hand = self.hands[self.current]
            held_cards |= 1 << top  # the hand once it has taken the top
            if not _has_home(top, held_cards, hand[JOKER], table_jokers, self.table, self.rules.ace_high, hand):
                return False
        trial = self._trial()
        trial._apply_take_discard()
        return _can_finish(trial, {})

    # ----------------------------------------------------------------- going out with the cut card

    def _going_out_plays(self, facts: tuple[int, list[int]] | None = None) -> list[Move] | None:
        """R4: the plays that go out after taking the cut card, or None when there are none
        (``facts``: ``_hand_facts()``, if known)."""
        hand = self.hands[self.current][:]
        cut = self.cut_card
        hand[cut] += 1
        rules = self.rules
        held = swappable = None
        if facts is not None:
            held = facts[0] | (1 << cut if cut != JOKER else 0)
            swappable = sum(1 for card in facts[1] if hand[card])
        if not _may_go_out(hand, cut, self.table, rules, held, swappable):
            return None
        # The search reads only the hand, the cut card, the table and whether the player has
        # opened (and the meld rules): hands that come back with the same table reuse its answer.
        key = (rules.game, rules.ace_high, rules.max_jokers, bytes(hand), self.cut_card,
               _table_key(self.table), self.opened[self.current])
        known = _GOING_OUT.get(key, _UNKNOWN)
        if known is not _UNKNOWN:
            return None if known is None else list(known)
        trial = self._trial()
        trial._take_cut_card()
        plays = _search_going_out(trial, {})
        if len(_GOING_OUT) >= _GOING_OUT_LIMIT:
            _GOING_OUT.clear()
        _GOING_OUT[key] = None if plays is None else tuple(plays)
        return plays

    def _take_cut_card(self) -> None:
        hand = self.hands[self.current]
        hand[self.cut_card] += 1
        self.taken_card = self.cut_card  # G7 mechanism: the cut card may not be the last discard
        self.cut_card = -1
        self.phase = PHASE_PLAY
        self._legal = None

    # ----------------------------------------------------------------- applying moves

    def apply(self, move: Move) -> None:
        """Play ``move`` for the current player; an illegal move, or anything that is not a move
        (a tuple of three ints), raises ``IllegalMoveError`` naming it and changes nothing."""
        if not (type(move) is tuple and len(move) == 3 and type(move[0]) is int
                and type(move[1]) is int and type(move[2]) is int):
            move = _as_move(move)
        if move not in self.legal_moves():
            raise IllegalMoveError(self.why_illegal(move))
        self._apply_unchecked(move)

    def apply_listed(self, move: Move, listed: tuple[Move, ...]) -> None:
        """Play ``move``, which the caller took from ``listed``, a tuple ``legal_moves()`` returned
        (for example through an action mask built from it). While ``listed`` is still this state's
        list of legal moves, the search ``apply`` makes for the move is skipped; else ``apply``."""
        if listed is self._legal:
            self._apply_unchecked(move)
        else:
            self.apply(move)

    def changed(self) -> None:
        """Say that fields were set by hand (scenarios, tests): the legal moves are listed afresh."""
        self._legal = None

    def _apply_unchecked(self, move: Move) -> None:
        kind, a, b = move
        self.history.append(move)
        self._legal = None
        if kind == DRAW:
            self.hands[self.current][self.stock.pop()] += 1
            self.phase = PHASE_PLAY
        elif kind == TAKE_DISCARD:
            self._apply_take_discard()
        elif kind == TAKE_CUT:
            plays = self._going_out_plays()
            self._take_cut_card()
            for play in plays:
                self._apply_play(play)
            self._discard(self._last_card())
        elif kind == DISCARD:
            self._discard(a)
        elif kind == DECLARE:
            self._declare(a)
        else:
            self._apply_play(move)

    def _apply_take_discard(self) -> None:
        player = self.current
        card = self.discard.pop()
        self.hands[player][card] += 1
        self.known[player][card] += 1
        self.taken_card = card
        if self.rules.later_take_must_be_placed and self.turns_taken[player] > 0:
            if card == JOKER:  # R4: it must reach the table this turn
                self.owed_jokers += 1
            else:
                self.owed_card = card
        self.phase = PHASE_PLAY
        self._legal = None

    def _apply_play(self, move: Move) -> None:
        kind, a, b = move
        if kind == MELD:
            self._apply_meld(a)
        elif kind == PLACE:
            self._apply_place(a, b)
        else:
            self._apply_place(JOKER, a, low_end=True)
        if self.rules.out_without_discard and sum(self.hands[self.current]) == 0:
            self._finish_out(self.current)  # B4: went out by melding or laying off every card

    def _remove(self, card: int) -> None:
        player = self.current
        self.hands[player][card] -= 1
        if self.known[player][card]:
            self.known[player][card] -= 1
        if card == self.owed_card:
            self.owed_card = -1
        elif card == JOKER and self.owed_jokers:
            self.owed_jokers -= 1

    def _apply_meld(self, tid: int) -> None:
        rules = self.rules
        index = template_index(rules.ace_high, rules.max_jokers)
        hand = self.hands[self.current]
        physical = index.physical_cards(tid, hand)
        template = index.templates[tid]
        for card in physical:
            self._remove(card)
        self.table.append(table_meld_from_template(template, physical))
        self.opened[self.current] = True
        self.laid_this_turn = True
        self._legal = None

    def _apply_place(self, card: int, slot: int, low_end: bool = False) -> None:
        self._remove(card)
        taken_back = place_card(self.table[slot], card, low_end)
        if taken_back != -1:
            player = self.current
            self.hands[player][JOKER] += 1
            self.known[player][JOKER] += 1
            self.owed_jokers += 1  # R5: the joker goes back on the table this turn
        self.laid_this_turn = True
        self._legal = None

    def _last_card(self) -> int:
        hand = self.hands[self.current]
        return next(c for c in range(NUM_TYPES) if hand[c])

    def _discard(self, card: int) -> None:
        player = self.current
        self._remove(card)
        self.discard.append(card)
        self.discarded[player][card] += 1
        if not any(self.hands[player]):
            self._finish_out(player)  # B4, R6: out by the last discard
            return
        self._end_turn()

    def _declare(self, card: int) -> None:
        player = self.current
        self._remove(card)
        self.discard.append(card)
        self.discarded[player][card] += 1
        self._end_hand(HandResult("declare", player, self._payments(player)))  # I6: nobody draws again

    def _finish_out(self, winner: int) -> None:
        payments = self._payments(winner)
        if self.rules.rummy_bonus and not self.has_laid[winner]:
            payments = tuple(2 * p for p in payments)  # B6, doubled on both sides to stay zero-sum
        self._end_hand(HandResult("out", winner, payments))

    def _payments(self, winner: int) -> tuple[int, ...]:
        """What each player pays to ``winner`` (I7, B5, R7: ``RuleSet.payment``); the winner pays 0."""
        payment, opened, wild_rank = self.rules.payment, self.opened, self.wild_rank
        return tuple(0 if p == winner else payment(hand, opened[p], wild_rank) for p, hand in enumerate(self.hands))

    def _end_hand(self, result: HandResult) -> None:
        self.result = result
        self.phase = PHASE_OVER
        self._legal = None

    def _end_turn(self) -> None:
        player = self.current
        rules = self.rules
        self.turns_taken[player] += 1
        if self.laid_this_turn:
            self.has_laid[player] = True
        self.laid_this_turn = False
        self.taken_card = -1
        self.owed_card = -1
        self.owed_jokers = 0
        self.turn += 1
        self.current = (player + 1) % rules.num_players
        self.phase = PHASE_DRAW
        if not self.stock:  # G8
            if self.rebuilds == 0 and len(self.discard) > 1:
                self.rebuilds = 1
                self.stock = self._rebuild_stock(self.discard[:-1])
                self.discard = self.discard[-1:]
            else:
                self._end_hand(HandResult("stalemate", None, (0,) * rules.num_players))
                return
        if self.turn >= rules.max_turns:  # G9
            self._end_hand(HandResult("cut_off", None, (0,) * rules.num_players))

    def _rebuild_stock(self, cards: list[int]) -> list[int]:
        """The stock rebuilt from ``cards``, the discards under the top (G8): shuffled with the seed
        (G10), or in the order ``from_deck`` was given; a given order of other cards is an
        ``InvalidStateError`` (the hand cannot go on)."""
        given = self.rebuilt_stock
        if given is None:
            shuffle_rng(self.seed, 1).shuffle(cards)
            return cards
        if not given:
            raise InvalidStateError(f"the stock ran out and is rebuilt from {len(cards)} discards (G8), but this "
                                    "hand was dealt from a deck order with no rebuilt stock order")
        wanted, got = to_counts(cards), to_counts(given)
        if wanted != got:
            card = next(c for c in range(NUM_TYPES) if wanted[c] != got[c])
            raise InvalidStateError(
                f"the rebuilt stock given ({len(given)} cards) is not the discard pile under its top card "
                f"({len(cards)} cards, G8): it holds {got[card]} {format_card(card)}, the pile {wanted[card]}")
        return list(given)

    # ----------------------------------------------------------------- explaining refusals

    def why_illegal(self, move) -> str:
        """A sentence naming ``move`` and the rule that refuses it now."""
        text = self.describe_move(move)
        player = f"player_{self.current}"
        try:
            kind, a, b = _as_move(move)
        except IllegalMoveError as err:
            return str(err)
        rules = self.rules
        if self.phase == PHASE_OVER:
            return f"illegal move {text}: the hand is over"
        if not 0 <= kind < len(MOVE_NAMES):
            return f"illegal move {move!r}: unknown move kind {kind} (0..{len(MOVE_NAMES) - 1})"
        if self.phase == PHASE_DRAW and kind not in (DRAW, TAKE_DISCARD, TAKE_CUT):
            return f"illegal move {text} for {player}: draw first (I4, B3, R4)"
        if self.phase == PHASE_PLAY and kind in (DRAW, TAKE_DISCARD, TAKE_CUT):
            return f"illegal move {text} for {player}: already drew this turn"
        if kind == TAKE_DISCARD:
            if not self.discard:
                return f"illegal move {text}: the discard pile is empty"
            return (f"illegal move {text} for {player}: after the first turn the discard top may be taken only "
                    f"if this turn's plays can put it on the table, leaving a card to discard, and they cannot (R4)")
        if kind == TAKE_CUT:
            if not rules.cut_card:
                return f"illegal move {text}: only römi has a cut card (R2)"
            return (f"illegal move {text} for {player}: the cut card may be taken only to go out, "
                    f"and going out is not possible (R4)")
        if kind in (MELD, PLACE, PLACE_JOKER_LOW) and not rules.table_melds:
            return f"illegal move {text}: Indian Rummy lays no melds on the table (I9)"
        card = JOKER if kind == PLACE_JOKER_LOW else a
        held = 0 <= card < NUM_TYPES and self.hands[self.current][card]
        if kind in (DISCARD, DECLARE, PLACE, PLACE_JOKER_LOW) and not held:
            return f"illegal move {text} for {player}: that card is not in the hand"
        owed = self.owed_cards()
        if kind in (DISCARD, DECLARE) and owed:
            return (f"illegal move {text} for {player}: {format_cards(owed)} must be placed on the table "
                    f"before the turn ends (R4, R5)")
        if kind in (DISCARD, DECLARE) and a == self.taken_card:
            return f"illegal move {text} for {player}: {format_card(a)} was just taken and may not be discarded (G7)"
        if kind == DECLARE:
            if not rules.declares:
                return f"illegal move {text}: only Indian Rummy declares (I5)"
            return f"illegal move {text} for {player}: the other 13 cards do not make a valid declaration (I5)"
        if kind in (PLACE, PLACE_JOKER_LOW) and rules.layoff_needs_own_meld and not self.opened[self.current]:
            return f"illegal move {text} for {player}: lay-offs and swaps need a meld of one's own on the table (R5)"
        slot = a if kind == PLACE_JOKER_LOW else b
        if kind in (PLACE, PLACE_JOKER_LOW) and not 0 <= slot < len(self.table):
            return f"illegal move {text}: there is no table meld {slot}"
        plays, swaps = self._table_plays()
        if (kind, a, b) in plays:  # allowed by the table rules, refused by the look-ahead
            if not owed and (kind, a, b) in swaps:
                return (f"illegal move {text} for {player}: the joker it frees could not be placed again this "
                        f"turn, leaving a card to discard (R5)")
            return (f"illegal move {text} for {player}: after it, the cards owed to the table "
                    f"({format_cards(owed) if owed else '*'}) could not all be placed this turn, "
                    f"leaving a card to discard (R4, R5)")
        if kind == MELD:
            why = self._why_meld_refused(a)
        elif kind == PLACE:
            why = self._why_place_refused(a, b)
        else:
            why = self._why_joker_low_refused(a)
        return f"illegal move {text} for {player}: {why}"

    def _why_meld_refused(self, tid: int) -> str:
        rules = self.rules
        index = template_index(rules.ace_high, rules.max_jokers)
        if not 0 <= tid < len(index.templates):
            return f"there is no meld template {tid} (0..{len(index.templates) - 1})"
        hand = self.hands[self.current]
        physical = index.physical_cards(tid, hand)
        jokers = physical.count(JOKER)
        if jokers == len(physical):
            return "the hand holds none of its cards, and a meld needs a natural card (G5)"
        if rules.max_jokers is not None and jokers > rules.max_jokers:
            ids = rules.spec.rule_ids
            if rules.max_jokers == 0:
                return f"the hand lacks {jokers} of its cards, and {rules.game} has no jokers ({ids.players})"
            return f"it would need {jokers} jokers, and a meld holds at most {rules.max_jokers} ({ids.runs})"
        if jokers > hand[JOKER]:
            return f"it would need {jokers} jokers, and the hand has {hand[JOKER]} (G5)"
        return self._why_hand_left(physical)

    def _why_place_refused(self, card: int, slot: int) -> str:
        rules = self.rules
        kind, key, low, slots = meld = self.table[slot]
        entries = placements(meld, rules.ace_high, rules.max_jokers)
        name = format_card(card)
        if (card, LAY_OFF) in entries or (card, SWAP) in entries:
            return self._why_hand_left([card])
        if card == JOKER:
            if rules.max_jokers is not None and slots.count(JOKER) >= rules.max_jokers:
                return f"table meld {slot} already holds {rules.max_jokers} jokers, the most a meld may hold (R3)"
            if (JOKER, JOKER_LOW_END) in entries:
                return (f"the run on table meld {slot} is closed at its high end: a joker goes to its low end "
                        f"as its own move (R5)")
            return f"table meld {slot} has no room for another card (G3, G4)"
        if kind == SET_MELD:
            if card % NUM_RANKS != key:
                return f"{name} is not of the rank of the set on table meld {slot} (G3)"
            if slots[card // NUM_RANKS] == card:
                return f"the set on table meld {slot} already holds {name}: identical cards never stand in one set (G3)"
            return f"the set on table meld {slot} is full (G3)"
        if card // NUM_RANKS != key:
            return f"{name} is not of the suit of the run on table meld {slot} (G4)"
        if card % NUM_RANKS == 0 and not rules.ace_high and low + len(slots) - 1 == 12:
            return f"the ace is low only in {rules.game}, so it cannot follow the king ({rules.spec.rule_ids.runs})"
        return f"{name} does not extend the run on table meld {slot} at either end (G4)"

    def _why_joker_low_refused(self, slot: int) -> str:
        rules = self.rules
        kind, _, low, slots = meld = self.table[slot]
        if kind == SET_MELD:
            return f"table meld {slot} is a set, and only a run has a low end (G4, R5)"
        if (JOKER, JOKER_LOW_END) in placements(meld, rules.ace_high, rules.max_jokers):
            return self._why_hand_left([JOKER])
        if rules.max_jokers is not None and slots.count(JOKER) >= rules.max_jokers:
            return f"table meld {slot} already holds {rules.max_jokers} jokers, the most a meld may hold (R3)"
        if len(slots) >= 13:
            return f"the run on table meld {slot} already holds 13 cards (G4)"
        return f"the run on table meld {slot} starts with the ace and has no room below it (G4)"

    def _why_hand_left(self, cards: list[int]) -> str:
        hand = self.hands[self.current]
        left = sum(hand) - len(cards)
        if left == 0:
            return "it would empty the hand, and going out needs a last discard (R6)"
        return f"it would leave only {format_card(self.taken_card)}, which was just taken and may not be discarded (G7)"

    def describe_move(self, move, symbols: bool = False) -> str:
        """A move in words, cards in G2 notation (with suit symbols, ``5♥``, if ``symbols``)."""
        try:
            kind, a, b = _as_move(move)
            name = MOVE_NAMES[kind]
        except (IllegalMoveError, IndexError):
            return repr(move)
        if kind in (DISCARD, DECLARE):
            return f"({name} {format_card(a, symbols) if 0 <= a < NUM_TYPES else a})"
        if kind == MELD:
            index = template_index(self.rules.ace_high, self.rules.max_jokers)
            cards = format_cards(index.templates[a].cards, symbols) if 0 <= a < len(index.templates) else a
            return f"(meld {cards})"
        if kind == PLACE:
            return f"(place {format_card(a, symbols) if 0 <= a < NUM_TYPES else a} on table meld {b})"
        if kind == PLACE_JOKER_LOW:
            return f"(place * at the low end of table meld {a})"
        return f"({name})"

    # ----------------------------------------------------------------- serialisation

    def to_dict(self) -> dict:
        """A JSON-friendly dict of the whole state (``from_dict`` rebuilds it; ``STATE_FIELDS``)."""
        out: dict = {}
        for field in STATE_FIELDS:
            if field.keys:
                value = getattr(self, field.name)
                out.update(field.dump(value) if field.dump is not None else _plain_json(field, value))
        return out

    @classmethod
    def from_dict(cls, data: dict) -> GameState:
        """The state ``to_dict`` wrote. A dict no hand of the game can reach (a key missing, a
        value out of range, more copies of a card than the game has, a table meld that is not a
        meld …) raises ``InvalidStateError`` naming the problem."""
        if not isinstance(data, dict):
            raise InvalidStateError(f"a state is the dict to_dict writes, not {type(data).__name__}")
        missing = [key for key in _STATE_KEYS if key not in data]
        if missing:
            raise InvalidStateError(f"state dict lacks {missing[0]!r}")
        try:
            rules = make_ruleset(data["game"], data["num_players"], **dict(data["options"]))
        except (TypeError, ValueError) as err:
            raise InvalidStateError(f"state dict: {err}") from None
        check = _StateCheck(rules)
        state = cls.__new__(cls)
        for field in STATE_FIELDS:
            if field.load is not None:
                setattr(state, field.name, field.load(check, data))
        wild = state.wild_card
        state.wild_rank = None if wild == -1 else (0 if wild == JOKER else wild % NUM_RANKS)
        state._legal = None
        check.copies(state)
        hand = state.hands[state.current]
        if state.owed_card != -1 and not hand[state.owed_card]:
            raise InvalidStateError(f"state dict: {format_card(state.owed_card)} is owed to the table (owed_card), "
                                    f"but player {state.current} holds none")
        if state.owed_jokers > hand[JOKER]:
            raise InvalidStateError(f"state dict: {state.owed_jokers} jokers are owed to the table (owed_jokers), "
                                    f"but player {state.current} holds {hand[JOKER]}")
        if (state.result is None) != (state.phase != PHASE_OVER):
            raise InvalidStateError(f"state dict: phase={state.phase} and result={data['result']!r} disagree: "
                                    f"a hand has a result exactly when it is over")
        return state



# ----------------------------------------------------------------------------- copies


class TrialWriteError(RuntimeError):
    """A look-ahead copy (``GameState._trial``) tried to change a field it shares with the real game."""


def _refuse_write(field: str) -> TrialWriteError:
    return TrialWriteError(f"a look-ahead copy may not change {field}: it shares it with the real game "
                           f"(GameState._trial, read-only there); play on a clone() instead")


class SharedView(tuple):
    """What a look-ahead copy reads of a list it shares with the real game: a tuple of its
    current contents, and any write (item, append, pop …) raises ``TrialWriteError`` naming it."""

    def __new__(cls, values, field: str):
        view = super().__new__(cls, values)
        view.field = field
        return view

    def _refuse(self, *args, **kwargs):
        raise _refuse_write(self.field)

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse


def _shared_field(field: StateField) -> property:
    """The property through which a trial reads ``field`` of the real game (``_Trial._origin``)."""
    name, rows = field.name, field.copy == _ROWS

    def read(trial: _Trial):
        value = getattr(trial._origin, name)
        if rows:
            return SharedView((SharedView(row, f"{name}[{p}]") for p, row in enumerate(value)), name)
        return SharedView(value, name)

    def write(trial: _Trial, value) -> None:
        raise _refuse_write(name)

    return property(read, write, doc=f"The real game's {name}, read-only: {field.why}.")


class _Trial(GameState):
    """A look-ahead copy within the turn (``GameState._trial``): the fields a play of the turn can
    change are its own; those it never changes (``StateField.shared_in_trial``: the stock, turns
    taken, who has laid, discards made, history) are read from the real game through read-only
    views, so a trial that tried to change one would raise ``TrialWriteError`` instead of
    changing the real game."""

    __slots__ = ("_origin",)

    def _trial(self) -> GameState:
        return _copy_trial(self, self._origin)

    def clone(self) -> GameState:
        return _copy_whole(self, self._origin)


for _f in STATE_FIELDS:
    if _f.shared_in_trial:
        setattr(_Trial, _f.name, _shared_field(_f))


def _compile_copy(trial: bool) -> Callable:
    """The copy function ``(state, origin) -> copy`` that ``STATE_FIELDS`` describes, built once
    as straight-line code (as ``dataclasses`` builds ``__init__``): a copy sits on the hot path of
    every look-ahead, and a loop over the fields would cost several times more. ``origin`` is
    the real game the shared fields come from (the state itself unless it is a trial)."""
    forms = {_VALUE: "{}", _LIST: "{}[:]", _ROWS: "[row[:] for row in {}]",
             _TABLE: "[[m[0], m[1], m[2], m[3][:]] for m in {}]", _CACHE: "None" if trial else "{}"}
    lines = ["def copy(state, origin):", f"    out = new({'Trial' if trial else 'GameState'})"]
    if trial:
        lines.append("    out._origin = origin")
    for f in STATE_FIELDS:
        if f.copy not in forms:
            raise ValueError(f"state field {f.name}: unknown copy kind {f.copy!r}")
        if trial and f.shared_in_trial:
            continue
        source = f"origin.{f.name}" if f.shared_in_trial else f"state.{f.name}"
        lines.append(f"    out.{f.name} = {forms[f.copy].format(source)}")
    lines.append("    return out")
    namespace = {"new": object.__new__, "GameState": GameState, "Trial": _Trial}
    exec("\n".join(lines), namespace)  # noqa: S102 - code built from the field table above only
    return namespace["copy"]


_copy_whole = _compile_copy(trial=False)
_copy_trial = _compile_copy(trial=True)


_OUTCOMES = ("declare", "out", "stalemate", "cut_off")


def _as_state_move(i: int, move) -> Move:
    try:
        return _as_move(move)
    except IllegalMoveError as err:
        raise InvalidStateError(f"state dict: history[{i}]: {err}") from None


class _StateCheck:
    """The checks ``from_dict`` makes, each raising ``InvalidStateError`` naming the value."""

    def __init__(self, rules: RuleSet):
        self.rules = rules

    def seed(self, value, from_deck: bool = False) -> int | str | None:
        if value is None and from_deck:
            return value
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            raise InvalidStateError(f"state dict: seed={value!r} is neither an int nor a str")
        return value

    def integer(self, name: str, value, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidStateError(f"state dict: {name}={value!r} is out of range: expected an int {low}..{high}")
        return value

    def flag(self, name: str, value) -> bool:
        if not isinstance(value, bool):
            raise InvalidStateError(f"state dict: {name}={value!r} must be True or False")
        return value

    def seq(self, name: str, value, length: int | None = None) -> list:
        if not isinstance(value, (list, tuple)):
            raise InvalidStateError(f"state dict: {name} must be a list, not {type(value).__name__}")
        if length is not None and len(value) != length:
            raise InvalidStateError(f"state dict: {name} has {len(value)} entries, expected {length}")
        return list(value)

    def rows(self, name: str, value, length: int, most: int) -> list[int]:
        return [self.integer(f"{name}[{i}]", x, 0, most) for i, x in enumerate(self.seq(name, value, length))]

    def flags(self, name: str, value, length: int) -> list[bool]:
        return [self.flag(f"{name}[{i}]", x) for i, x in enumerate(self.seq(name, value, length))]

    def per_player(self, name: str, value, players: int) -> list[list[int]]:
        """One row of 53 card counts per player."""
        return [self.rows(f"{name}[{p}]", row, NUM_TYPES, 255) for p, row in enumerate(self.seq(name, value, players))]

    def cards(self, name: str, value) -> list[int]:
        return [self.integer(f"{name}[{i}]", x, 0, JOKER) for i, x in enumerate(self.seq(name, value))]

    def table_meld(self, i: int, meld) -> list:
        """A table meld as ``table.place_card`` keeps it: [kind, key, low, slots] (``melds``)."""
        rules = self.rules
        name = f"table[{i}]"
        if not rules.table_melds:
            raise InvalidStateError(f"state dict: {name}: {rules.game!r} lays no melds on the table (I9)")
        kind, key, low, slots = self.seq(name, meld, 4)
        self.integer(f"{name} kind", kind, 0, 1)
        if kind == RUN_MELD:
            slots = self.cards(f"{name} slots", slots)
        else:
            slots = [self.integer(f"{name} slots[{s}]", x, -1, JOKER)
                     for s, x in enumerate(self.seq(f"{name} slots", slots, NUM_SUITS))]
        if kind == SET_MELD:
            self.integer(f"{name} rank", key, 0, NUM_RANKS - 1)
            self.integer(f"{name} low", low, 0, 0)
            fits = all(card in (-1, JOKER, make_card(key, s)) for s, card in enumerate(slots))
        else:
            self.integer(f"{name} suit", key, 0, NUM_SUITS - 1)
            self.integer(f"{name} low", low, 0, 13 if rules.ace_high else 12)
            fits = all(card in (JOKER, make_card((low + p) % NUM_RANKS, key)) for p, card in enumerate(slots))
            fits = fits and low + len(slots) - 1 <= (13 if rules.ace_high else 12)
        physical = [card for card in slots if card != -1]
        if not (fits and is_meld_cards(physical, MeldRules(rules.ace_high, rules.max_jokers))):
            raise InvalidStateError(f"state dict: {name}={meld!r} is not a meld of {rules.game!r} (G3–G5, R3)")
        return [kind, key, low, slots]

    def copies(self, state: GameState) -> None:
        """No card type more often than the game's decks hold it (G1)."""
        rules = self.rules
        for card, n in enumerate(card_counts(state)):
            most = rules.printed_jokers if card == JOKER else rules.decks
            if n > most:
                raise InvalidStateError(f"state dict holds {n} copies of {format_card(card)}, and {rules.game!r} "
                                        f"has {most} (G1, R1, B1, I1)")

    def result(self, value) -> HandResult | None:
        if value is None:
            return None
        n = self.rules.num_players
        if not isinstance(value, dict) or set(value) != {"outcome", "winner", "payments"}:
            raise InvalidStateError(f"state dict: result={value!r} must be None or a dict of outcome, winner, payments")
        if value["outcome"] not in _OUTCOMES:
            raise InvalidStateError(f"state dict: result outcome={value['outcome']!r}: expected one of {_OUTCOMES}")
        winner = value["winner"]
        if winner is not None:
            self.integer("result winner", winner, 0, n - 1)
        payments = self.rows("result payments", value["payments"], n, 1 << 30)
        return HandResult(value["outcome"], winner, tuple(payments))


def card_counts(state: GameState) -> list[int]:
    """Every card type's count over hands, stock, discard pile, table, cut card and wild card (G1)."""
    counts = [0] * NUM_TYPES
    for hand in state.hands:
        for card, n in enumerate(hand):
            counts[card] += n
    for card in state.stock + state.discard:
        counts[card] += 1
    for meld in state.table:
        for _, physical in table_meld_cards(meld):
            counts[physical] += 1
    for card in (state.cut_card, state.wild_card):
        if card != -1:
            counts[card] += 1
    return counts


def replay(game: str, num_players: int, seed: int | str, moves, first_player: int = 0, **options) -> GameState:
    """The state reached by dealing with ``seed`` and playing ``moves`` (G10)."""
    state = GameState.new(game, num_players, seed, first_player, **options)
    for move in moves:
        state.apply(move)
    return state


# --------------------------------------------------------------------- going out search (R4)


def _may_go_out(hand, cut: int, table: list[list], rules: RuleSet, held: int | None = None,
                swappable: int | None = None) -> bool:
    """Necessary conditions for going out, cheapest first (the search is exact; these only prune).

    1. At most one natural card (not the cut card) has no possible home: no meld with held cards
       and the jokers that could be had, and no table meld it could reach.
    2. A relaxation: cards that could go on the table become jokers, and the rest must meld under
       Indian meld rules (any number of jokers a meld) leaving at most one card for the discard.

    ``held`` (bit c: card type c is held) and ``swappable`` (``_swappable_jokers``), if known.
    """
    jokers = hand[JOKER]
    if jokers < 2:
        jokers = min(2, jokers + (_swappable_jokers(hand, table) if swappable is None else swappable))
    ace_high = rules.ace_high
    if held is None:
        by_suit = suit_masks(hand, ace_high)
    else:
        by_suit = [held & 0x1FFF, held >> 13 & 0x1FFF, held >> 26 & 0x1FFF, held >> 39 & 0x1FFF]
        if ace_high:
            by_suit = [m | (m & 1) << 13 for m in by_suit]
    if jokers < 2:  # with two jokers every card has a home in the hand (a set of three)
        homeless = 0
        for suit, mask in enumerate(_no_hand_home_masks(by_suit, jokers, ace_high)):
            held = by_suit[suit]
            while mask:
                low = mask & -mask
                mask ^= low
                card = suit * NUM_RANKS + low.bit_length() - 1
                if not (table and _table_home(card, held, jokers, table, ace_high)):
                    if card == cut:
                        return False
                    homeless += hand[card]
                    if homeless > 1:
                        return False
    relaxed = hand[:]
    if table:
        for card in compress(range(NUM_NATURAL), hand):
            if _table_home(card, by_suit[card // NUM_RANKS], jokers, table, ace_high):
                relaxed[JOKER] += relaxed[card]
                relaxed[card] = 0
    return solver.min_loose_cards(relaxed) <= 1


def _no_hand_home_masks(by_suit: list[int], jokers: int, ace_high: bool) -> tuple[int, int, int, int]:
    """Per suit, the ranks of the natural cards held that have no home in the hand
    (``_hand_home`` is False), for ``jokers`` 0 or 1, with bit masks: with no joker, the cards in
    no natural run and of a rank held in fewer than three suits; with one, the cards with no other
    card of their suit within two ranks and no other suit of their rank."""
    facts = mask_facts(ace_high)
    m0, m1, m2, m3 = by_suit[0] & 0x1FFF, by_suit[1] & 0x1FFF, by_suit[2] & 0x1FFF, by_suit[3] & 0x1FFF
    if jokers == 0:
        keep = ~((m0 & m1 & (m2 | m3)) | (m2 & m3 & (m0 | m1)))
        return (m0 & ~facts[m0][2] & keep, m1 & ~facts[m1][2] & keep,
                m2 & ~facts[m2][2] & keep, m3 & ~facts[m3][2] & keep)
    return (facts[m0][3] & ~(m1 | m2 | m3), facts[m1][3] & ~(m0 | m2 | m3),
            facts[m2][3] & ~(m0 | m1 | m3), facts[m3][3] & ~(m0 | m1 | m2))


def _table_jokers(table: list[list]) -> list[int]:
    """The natural card each joker on the table stands for (one entry per joker)."""
    out = []
    for meld in table:
        slots = meld[3]
        if JOKER not in slots:
            continue
        kind, key, low = meld[0], meld[1], meld[2]
        for i, card in enumerate(slots):
            if card == JOKER:
                out.append(make_card(key, i) if kind == 0 else make_card((low + i) % NUM_RANKS, key))
    return out


def _swappable_jokers(hand, table: list[list]) -> int:
    """Table jokers whose natural card the hand holds: the most a swap could bring in (R5)."""
    return sum(1 for stands_for in _table_jokers(table) if hand[stands_for])


def _hand_home(card: int, suits: int, held: int, jokers: int, ace_high: bool) -> bool:
    """Whether ``card`` could meld with other held cards and ``jokers`` jokers (``suits``: the
    suits held at its rank; ``held``: the run positions held in its suit, as ``table.suit_masks``;
    the card itself is held): a set with another suit or two, or a run of three positions with
    the others held (no joker) or one other held within two ranks (one joker)."""
    if jokers >= 2:
        return True
    rank = card % NUM_RANKS
    if (suits & ~(1 << card // NUM_RANKS)).bit_count() + jokers >= 2:
        return True
    facts = mask_facts(ace_high)[held & 0x1FFF]
    if jokers == 0:
        return bool(facts[2] >> rank & 1)  # in a run of three held
    return not facts[3] >> rank & 1  # not alone in its suit


def _table_home(card: int, held: int, jokers: int, table: list[list], ace_high: bool) -> bool:
    """Whether ``card`` could end up in a table meld: a free set slot, a joker it could swap, or
    a run end it could reach through held cards and ``jokers`` jokers (``held``: the run
    positions held in its suit, as ``table.suit_masks``)."""
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    positions = (rank, 13) if (ace_high and rank == 0) else (rank,)
    for kind, key, low, slots in table:
        if kind == 0:
            if key == rank and (slots[suit] == JOKER or slots[suit] == -1):
                return True
        elif key == suit:
            high = low + len(slots) - 1
            for pos in positions:
                if low <= pos <= high:
                    if slots[pos - low] == JOKER:
                        return True
                    continue
                first, stop = (high + 1, pos) if pos > high else (pos + 1, low)  # the gap between
                missing = (((1 << stop) - (1 << first)) & ~held).bit_count() if stop > first else 0
                if missing <= jokers and len(slots) + (stop - first if stop > first else 0) + 1 <= 13:
                    return True
    return False


_GOING_OUT: dict[tuple, tuple | None] = {}
"""Answers of the going-out search (R4), by everything it reads; cleared when full."""
_GOING_OUT_LIMIT = 1 << 14
_UNKNOWN = object()


def _table_key(table: list[list]) -> tuple:
    return tuple((m[0], m[1], m[2], tuple(m[3])) for m in table)


def _search_going_out(state: GameState, seen: dict, asleep: frozenset = frozenset(),
                      swaps: bool = True) -> list[Move] | None:
    """Depth-first search for plays that leave one discardable card and nothing owed to the table.

    Plays that commute are tried in one order only (sleep sets); states already searched with
    no more plays awake are not searched again; swaps come first (``_swaps_after``).
    """
    hand = state.hands[state.current]
    if state.owed_card == -1 and not state.owed_jokers and sum(hand) == 1 and not hand[state.taken_card]:
        return []
    key = (tuple(hand), _table_key(state.table), state.opened[state.current], state.owed_card, state.owed_jokers,
           swaps)
    before = seen.get(key)
    if before is not None and before <= asleep:
        return None
    seen[key] = asleep if before is None else before & asleep
    if not _may_go_out(hand, state.taken_card, state.table, state.rules):
        return None
    plays, swap_plays = state._table_plays()
    if swap_plays and not swaps:
        plays = [play for play in plays if play not in swap_plays]
    uses = {play: _cards_used(state, play) for play in plays}
    size, taken = sum(hand), state.taken_card
    tried: list[Move] = []
    for play in plays:
        if play in asleep:
            continue
        trial = state._trial()
        trial._apply_play(play)
        nap = _asleep_after(play, (*asleep, *tried), hand, size, taken, uses)
        rest = _search_going_out(trial, seen, nap, swaps and _swaps_after(state, play, uses[play] is None))
        if rest is not None:
            return [play, *rest]
        tried.append(play)
    return None


def _asleep_after(play: Move, candidates, hand, size: int, taken: int, uses: dict) -> frozenset:
    """The sleep set after ``play``: the ``candidates`` (plays asleep, or tried before it, at this
    position) that commute with it, the same state in either order and neither disabling the
    other (``_independent``); two melds do not: the table order of the new melds would differ."""
    meld = play[0] == MELD
    return frozenset(q for q in candidates
                     if not (meld and q[0] == MELD) and _independent(hand, size, taken, uses, play, q))


def _swaps_after(state: GameState, play: Move, swap: bool) -> bool:
    """Whether the searches still try joker swaps after ``play`` (``swap``: it is one): only
    after swaps, and after the meld that opens.

    That loses no sequence of plays: a swap takes a card held from the start for a joker on a
    meld already there (a meld laid this turn has no joker where the hand holds the natural), so
    it can come before every play except the opening meld, with the same cards left and no
    more jokers owed at the end (placing a joker settles an owed one whenever one is owed).
    """
    return swap or (play[0] == MELD and not state.opened[state.current])


def _can_finish(state: GameState, known: dict, swaps: bool = True) -> bool:
    """Whether some plays from ``state`` put every card owed to the table there (R4, R5) and
    leave a card to discard (R6, G7). ``known``: answers found so far this turn, by position.

    Plays that place an owed card are tried first, swaps come first (``_swaps_after``). Every
    play adds to the table (a swap puts a natural card where a joker stood), so a position never
    comes back within the search.
    """
    if state.owed_card == -1 and not state.owed_jokers:
        return True  # every play listed leaves a card that may be discarded
    if not state.owed_jokers and _places_at_once(state, state.owed_card):
        return True
    hand = state.hands[state.current]
    key = (bytes(hand), tuple(sorted(_table_key(state.table))), state.opened[state.current],
           state.owed_card, state.owed_jokers, swaps)
    answer = known.get(key)
    if answer is not None:
        return answer
    known[key] = False
    owed = state.owed_card
    if owed != -1 and not _has_home(owed, held_bits(hand), hand[JOKER], _table_jokers(state.table), state.table,
                                    state.rules.ace_high, hand):
        return False
    plays, swap_plays = state._table_plays()
    if swap_plays and not swaps:
        plays = [play for play in plays if play not in swap_plays]
    if owed != -1:
        plays.sort(key=lambda play: not _places(state, play, owed))
    elif state.owed_jokers:
        plays.sort(key=lambda play: not _places(state, play, JOKER))
    for play in plays:
        trial = state._trial()
        trial._apply_play(play)
        if _can_finish(trial, known, swaps and _swaps_after(state, play, play in swap_plays)):
            known[key] = True
            return True
    return False


def _places_at_once(state: GameState, card: int) -> bool:
    """Whether one meld or lay-off (no swap) can put natural ``card`` on the table now, leaving a
    card to discard (R6, G7): the plays ``_table_plays`` would list that hold it, found directly."""
    rules = state.rules
    player = state.current
    hand = state.hands[player]
    size = sum(hand)
    taken = state.taken_card
    index = template_index(rules.ace_high, rules.max_jokers)
    templates = index.templates
    for tid, jokers in index.layable_with(hand, card):
        cards = templates[tid].cards
        left = size - len(cards)
        if left and not (taken != -1 and left == hand[taken] - (jokers if taken == JOKER else taken in cards)):
            return True
    if (rules.layoff_needs_own_meld and not state.opened[player]) or size == 1:
        return False
    if taken != -1 and size - 1 == hand[taken] - (card == taken):
        return False
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    for meld in state.table:
        if meld[1] == (rank if meld[0] == SET_MELD else suit) and (card, LAY_OFF) in placements(
                meld, rules.ace_high, rules.max_jokers):
            return True
    return False


def _places(state: GameState, play: Move, card: int) -> bool:
    """Whether ``play`` puts ``card`` (a card type, or a joker) on the table."""
    kind, a, b = play
    if kind == PLACE:
        return a == card
    if kind == PLACE_JOKER_LOW:
        return card == JOKER
    rules = state.rules
    return card in template_index(rules.ace_high, rules.max_jokers).physical_cards(a, state.hands[state.current])


def _has_home(card: int, held_cards: int, jokers: int, table_jokers: list[int], table: list[list],
              ace_high: bool, hand) -> bool:
    """Whether natural ``card`` could still reach the table this turn, as far as a quick test can
    tell (the search decides): a meld with other cards held (``held_cards``: bit c for each card
    type held, ``card`` among them) and the jokers that could be had (``jokers`` held, and table
    jokers the hand could swap), or a table meld it could reach."""
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    held = held_cards >> (suit * NUM_RANKS) & 0x1FFF
    if ace_high and held & 1:
        held |= 1 << 13  # the ace also stands after the king (as ``suit_masks``)
    at_rank = held_cards >> rank  # bits 0, 13, 26, 39: the rank in each suit
    suits = at_rank & 1 | (at_rank >> 12 & 2) | (at_rank >> 24 & 4) | (at_rank >> 36 & 8)
    jokers = min(2, jokers)
    if jokers < 2 and table_jokers:  # swappable jokers (``_swappable_jokers``), the card's own swap too
        jokers = min(2, jokers + sum(1 for stands_for in table_jokers if stands_for == card or hand[stands_for]))
    if _hand_home(card, suits, held, jokers, ace_high):
        return True
    return bool(table) and _table_home(card, held, jokers, table, ace_high)


def _cards_used(state: GameState, play: Move) -> list[int] | None:
    """The cards a play takes from the hand, or None for a joker swap (it brings one back)."""
    kind, a, b = play
    if kind == MELD:
        rules = state.rules
        return template_index(rules.ace_high, rules.max_jokers).physical_cards(a, state.hands[state.current])
    if kind == PLACE_JOKER_LOW or a == JOKER:
        return [JOKER]
    meld = state.table[b]
    for stands_for, physical in table_meld_cards(meld):
        if physical == JOKER and stands_for == a:
            return None
    return [a]


def _independent(hand, left: int, taken: int, uses: dict, p: Move, q: Move) -> bool:
    """Whether plays p and q (``uses``: the cards each takes, ``_cards_used``) can both be made,
    in either order, leaving a card to discard: neither is a swap, they play onto different table
    melds, the hand holds the cards of both, and a card other than the one taken (``taken``) is
    left (``left``: the hand's size)."""
    cards_p, cards_q = uses[p], uses[q]
    if cards_p is None or cards_q is None or p == q:
        return False
    kind_p, kind_q = p[0], q[0]
    if kind_p != MELD and kind_q != MELD:  # two cards onto one meld may change where each goes
        if (p[2] if kind_p == PLACE else p[1]) == (q[2] if kind_q == PLACE else q[1]):
            return False
    for card in cards_q:  # each play alone is possible: only cards both take can run short
        if card in cards_p and cards_p.count(card) + cards_q.count(card) > hand[card]:
            return False
    left -= len(cards_p) + len(cards_q)
    return left > (hand[taken] - cards_p.count(taken) - cards_q.count(taken) if taken != -1 else 0)
