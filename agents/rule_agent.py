"""The rule-based agent of each game: the exact solver plus a few plain heuristics.

It reads only its observation (``agents.view``) and the mask. Every decision starts from the
solver's best arrangement of the hand (``rummy_env.solver.best_arrangement``: melds and
deadwood, lowest deadwood value). For Indian Rummy the arrangement is the free one (no lives
rule), found with römi's meld rules and every wild-rank card counted as a joker; the lives rule
(I5) enters as a preference for runs, below.

Draw
    * römi: take the cut card whenever the mask offers it (it goes out at once, R4).
    * Take the discard top when the best arrangement with it, after the best discard, is lower
      than the hand's current deadwood minus its worst loose card (what a useless stock card
      would leave), i.e. the top completes a meld; always take a joker (Indian: also a wild card).
      A top with no partner in the hand (no card of its rank, none of its suit within two ranks,
      no joker) is refused without calling the solver.
    * Basic and römi: also take it when it can be laid off on the table (take, lay off, discard:
      one card fewer in hand).

Play (Basic, römi), one action at a time, re-planned after each
    0. Holding (off by default, weights ``hold_until`` and ``hold_loose``): while every other
       player holds more than ``hold_until`` cards and more than ``hold_loose`` loose cards of
       the best arrangement could not be laid off on the table, lay nothing and discard. Melds
       kept in hand give the others nothing to lay off on (B3, R5) and go down together when the
       hand is nearly out. The price is a bigger payment when caught (römi's unopened 80, R7).
    1. A card that must be placed (R4, R5): the placement that leaves the least deadwood.
    2. A play that goes out at once (Basic: empties the hand; römi: leaves one card to discard).
    3. Melds of the best arrangement, largest first (laying them lowers what the hand pays).
    4. römi: a joker swap that lowers the deadwood (the joker then goes into a meld or a lay-off).
    5. Lay off loose (deadwood) cards.
    6. Discard, as below.

Indian: declare as soon as the mask offers a declaration; else discard.

Discard
    Among the loose cards (deadwood of the best arrangement; never a joker or a wild card), drop
    the one with the highest ``value * late - keep - danger``:
    * ``keep``: near-melds. For each other loose card that makes a pair with it (same rank, or
      same suit within two ranks), the cards that would complete the pair and are still unseen
      (not in our hand, the discard pile, on the table, the cut or wild card, or known in another
      hand), plus the unseen jokers in joker games, at most ``max_outs``; worth ``near_weight``
      points per live out. In Indian, run pairs count ``1 + lives_boost`` times while the hand
      has no pure run (I5), ``1 + lives_boost / 2`` times while it lacks the second run.
    * ``danger``: cards the next player has shown they collect (known in their hand from the
      discard pile): a card that melds with two of them (25 points) or pairs with one (6); in
      Basic and römi, a card that fits a table meld (8: the next player could take it and lay
      it off). Scaled by ``danger_weight``.
    * ``late``: ``1 + late_weight * turns / 50``: a card's value weighs more as the hand goes on.
    When the hand has no loose card, the card whose removal leaves the least deadwood.
    The weights per game are ``default_weights(rules)``.
"""

from __future__ import annotations

import math

import numpy as np

from rummy_env import solver
from rummy_env.cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_TYPES
from rummy_env.encoding import DISCARD_BASE, action_layout
from rummy_env.ruleset import RuleSet
from rummy_env.game import DECLARE, DRAW, MELD, PLACE, PLACE_JOKER_LOW, TAKE_CUT, TAKE_DISCARD
from rummy_env.table import template_index

from .base import Agent, AgentError, legal_actions
from .view import ObservationReader, View

_CACHE_LIMIT = 50_000
_ALL_LIVE = [1] * NUM_TYPES

DECLARING_WEIGHTS = {"near_weight": 3.0, "danger_weight": 1.0, "max_outs": 4, "lives_boost": 2.0, "late_weight": 1.0}
"""The weights for a game that declares from the hand (Indian Rummy, I5)."""
TABLE_WEIGHTS = {"near_weight": 2.0, "danger_weight": 1.0, "max_outs": 4, "lives_boost": 0.0, "late_weight": 0.0,
                 "hold_until": 13, "hold_loose": 2}
"""The weights for a game with melds on the table (Basic Rummy, römi: B3, R5)."""


def default_weights(rules: RuleSet) -> dict:
    """The heuristic's weights for the game of ``rules`` (a copy), chosen by arena duels of variants (docs/agents.md):
    ``DECLARING_WEIGHTS`` where the game declares from the hand, else ``TABLE_WEIGHTS``.

    * ``near_weight``: points per live out of a near-meld (keep value);
    * ``danger_weight``: scale of the feeding penalty;
    * ``max_outs``: outs counted per near-meld at most;
    * ``lives_boost``: Indian, how much more run pairs count while the pure run (I5) is missing
      (half of it while the second run is missing);
    * ``late_weight``: how much more a card's value counts per 50 turns played (risk grows late);
    * ``hold_until`` (Basic, römi): keep melds in hand while every other player holds more cards
      than this (play step 0); 13 or more, the default, never holds, since no other hand is larger
      at one's turn. ``rule:hold_until=3`` wins more hands than the default (docs/agents.md);
    * ``hold_loose`` (Basic, römi): while holding, go down once at most this many loose cards could
      not be laid off.
    """
    return dict(DECLARING_WEIGHTS if rules.declares else TABLE_WEIGHTS)


_COUNT_WEIGHTS = ("max_outs", "hold_until", "hold_loose")
"""Weights that count cards: numbers >= 0."""


class RuleAgent(Agent):
    """Heuristic player of Indian Rummy, Basic Rummy or römi built on the exact solver."""

    name = "rule"

    def __init__(self, rules: RuleSet, seed: int | None = 0, **weights):
        """``rules``: the table's rules (RULES); ``weights``: see ``default_weights``."""
        super().__init__(rules)
        defaults = default_weights(rules)
        unknown = sorted(set(weights) - set(defaults))
        if unknown:
            raise TypeError(f"RuleAgent: unknown weight {unknown[0]!r}: "
                            f"expected one of {sorted(defaults)}")
        for key, value in weights.items():
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(value) or (key in _COUNT_WEIGHTS and value < 0):
                expected = "a number >= 0" if key in _COUNT_WEIGHTS else "a finite number"
                raise AgentError(f"rule agent weight {key}={value!r}: expected {expected}")
        weights = defaults | weights
        self.weights = weights
        self.reader = ObservationReader(rules)
        self.layout = action_layout(rules.game)
        self.moves = self.layout.moves
        self.kind_base = self.layout.kind_base
        self.values = rules.values
        self.copies = [rules.decks] * NUM_NATURAL + [rules.printed_jokers]
        self.ace_high = rules.ace_high
        self.has_jokers = rules.printed_jokers > 0 or rules.wild_joker
        self.solver_game = rules.spec.arrangement_game  # the meld rules of a free arrangement
        self.near_weight = weights["near_weight"]
        self.danger_weight = weights["danger_weight"]
        self.max_outs = weights["max_outs"]
        self.lives_boost = weights["lives_boost"]
        self.late_weight = weights["late_weight"]
        self.hold_until = weights.get("hold_until", NUM_TYPES)
        self.hold_loose = weights.get("hold_loose", 0)
        self.table_game = rules.table_melds
        if self.table_game:
            index = template_index(rules.ace_high, rules.max_jokers)
            self.templates = index.templates
        self._arrangements: dict[bytes, tuple] = {}
        self._deadwood: dict[bytes, int] = {}

    # ------------------------------------------------------------------ protocol

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        view = self.reader.read(observation)
        if view.phase == 0:
            return self._draw(view, legal)
        if self.rules.declares:
            return self._play_declaring(view, legal)
        return self._play_table(view, legal)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, the same as ``act`` row by row.

        While the solver's compiled search is on (``rummy_env.solver.use_compiled``) the rows are
        decided by a compiled kernel in one call: ``agents.rule_compiled`` for Indian,
        ``agents.rule_compiled_table`` for Basic and römi; a row the kernel hands back (a hand too
        large for its scratch arrays) goes through ``act``.
        """
        observations = np.asarray(observations)
        masks = np.asarray(masks)
        size = self.reader.size
        if observations.ndim != 2 or observations.shape[1] != size:
            raise AgentError(f"observations of shape {observations.shape}: {self.game!r} with {self.num_players} "
                             f"players takes (rows, {size})")
        width = len(self.moves)
        if masks.shape != (observations.shape[0], width):
            raise AgentError(f"action masks of shape {masks.shape}: expected ({observations.shape[0]}, {width}), "
                             "one mask per observation")
        empty = ~masks.any(axis=1)
        if empty.any():
            raise AgentError(f"row {int(np.flatnonzero(empty)[0])} has an all-zero action mask: "
                             "that seat has no legal action now")
        if not solver.compiled_in_use():
            return super().act_batch(observations, masks)
        actions = np.empty(len(masks), np.int64)
        self._kernel()(observations, masks, actions)
        for row in np.flatnonzero(actions < 0):  # hands too large for the kernel's scratch arrays
            actions[row] = self.act(observations[row], masks[row])
        return actions

    def _kernel(self):
        """The compiled decision of this game with this agent's layout, weights and rules bound."""
        if getattr(self, "_bound", None) is None:
            from rummy_env.compiled import solver as fast

            from . import rule_compiled as kernel

            s = self.reader.slices

            def start(name: str) -> int:
                return s[name].start if name in s else -1

            offsets = np.array([start("hand"), start("discard_top"), start("discard_rest"), start("wild_card"),
                                start("known"), start("phase"), start("turn"), start("table_cards"),
                                start("cut_card"), start("table_melds"), start("hand_sizes"), start("opened"),
                                start("must_place")], np.int64)
            base = self.kind_base
            ids = np.array([base[DRAW], base[TAKE_DISCARD], DISCARD_BASE, base[DECLARE], base[TAKE_CUT], base[MELD],
                            base[PLACE], base[PLACE_JOKER_LOW]], np.int64)
            ids[ids < 0] = -1  # kinds the game lacks
            weights = np.array([self.near_weight, self.danger_weight, self.max_outs, self.lives_boost,
                                self.late_weight, self.rules.max_turns, self.hold_until, self.hold_loose], np.float64)
            values = np.asarray(self.values, np.int64)
            copies = np.asarray(self.copies, np.int64)
            rules = fast.rules(self.solver_game, None)
            work = fast.workspace()
            common = (offsets, ids, weights, values, copies, self.num_players, self.has_jokers, self.ace_high)
            search = (rules.params, rules.rank_values, rules.tables, work.state, work.scratch, work.memo, work.pmemo,
                      work.out)
            if self.rules.declares:
                def run(observations, masks, actions):
                    kernel.indian_decisions(observations, masks, *common, *search, actions)
            else:
                from . import rule_compiled_table as table

                r = self.rules
                table_rules = np.array([self.reader.max_table_melds, r.hand_size, r.out_without_discard,
                                        r.layoff_needs_own_meld, r.cut_card], np.int64)
                t_len = np.array([len(t.cards) for t in self.templates], np.int64)
                t_cards = np.zeros((len(self.templates), max(t_len)), np.int64)
                for i, t in enumerate(self.templates):
                    t_cards[i, :len(t.cards)] = t.cards

                def run(observations, masks, actions):
                    table.table_decisions(observations, masks, *common, table_rules, t_cards, t_len, *search, actions)

            self._bound = run
        return self._bound

    # ------------------------------------------------------------------ the solver, memoised

    def _solver_counts(self, hand, wild_rank: int | None) -> bytes:
        """The hand as the solver sees it: Indian wild-rank cards become jokers (I2)."""
        if wild_rank is None:
            return bytes(hand)
        counts = list(hand)
        for suit in range(4):
            card = suit * NUM_RANKS + wild_rank
            counts[JOKER] += counts[card]
            counts[card] = 0
        return bytes(counts)

    def arrangement(self, hand, wild_rank: int | None = None) -> tuple[int, tuple, list[int]]:
        """(deadwood value, melds, deadwood cards) of the hand's best free arrangement."""
        key = self._solver_counts(hand, wild_rank)
        hit = self._arrangements.get(key)
        if hit is None:
            if len(self._arrangements) >= _CACHE_LIMIT:
                self._arrangements.clear()
            best = solver.best_arrangement(key, self.solver_game)
            hit = self._arrangements[key] = (best.penalty, best.melds, list(best.deadwood))
        return hit

    def deadwood(self, hand, wild_rank: int | None = None) -> int:
        """The least deadwood value of the hand (free arrangement)."""
        key = self._solver_counts(hand, wild_rank)
        hit = self._deadwood.get(key)
        if hit is None:
            if len(self._deadwood) >= _CACHE_LIMIT:
                self._deadwood.clear()
            hit = self._deadwood[key] = solver.min_deadwood(key, self.solver_game)
        return hit

    # ------------------------------------------------------------------ card facts

    def is_jokerlike(self, card: int, wild_rank: int | None) -> bool:
        return card == JOKER or (wild_rank is not None and card % NUM_RANKS == wild_rank)

    def unseen(self, view: View) -> list[int]:
        """Copies of each card type that could still come to us: not seen anywhere, not known in another hand."""
        seen = view.seen_counts()
        for row in view.known[1:]:
            for card, count in enumerate(row):
                if count:
                    seen[card] += count
        return [max(0, total - s) for total, s in zip(self.copies, seen)]

    def _unseen_jokers(self, view: View, unseen: list[int]) -> int:
        jokers = unseen[JOKER]
        if view.wild_rank is not None:
            jokers += sum(unseen[s * NUM_RANKS + view.wild_rank] for s in range(4))
        return jokers

    def _positions(self, rank: int) -> tuple[int, ...]:
        return (0, 13) if (rank == 0 and self.ace_high) else (rank,)

    def _run_outs(self, a: int, b: int, unseen: list[int]) -> int | None:
        """Unseen cards that complete the run pair a, b (same suit), or None if they make no run pair."""
        suit = a // NUM_RANKS
        top = 13 if self.ace_high else 12
        best = None
        for pa in self._positions(a % NUM_RANKS):
            for pb in self._positions(b % NUM_RANKS):
                low, high = min(pa, pb), max(pa, pb)
                gap = high - low
                if gap == 1:
                    needs = [p for p in (low - 1, high + 1) if 0 <= p <= top]
                elif gap == 2:
                    needs = [low + 1]
                else:
                    continue
                outs = sum(unseen[suit * NUM_RANKS + p % NUM_RANKS] for p in needs)
                best = outs if best is None else max(best, outs)
        return best

    def keep_value(self, card: int, loose: list[int], unseen: list[int], jokers: int, run_factor: float) -> float:
        """Points for keeping ``card``: the live outs of the near-melds it makes with other loose cards."""
        rank, suit = card % NUM_RANKS, card // NUM_RANKS
        best = 0.0
        for other in loose:
            if other == card or other == JOKER:
                continue
            if other % NUM_RANKS == rank:
                if other // NUM_RANKS == suit:
                    continue  # identical cards never share a set (G3)
                used = (1 << suit) | (1 << (other // NUM_RANKS))
                outs = sum(unseen[s * NUM_RANKS + rank] for s in range(4) if not used >> s & 1)
                score = min(outs + jokers, self.max_outs)
            elif other // NUM_RANKS == suit:
                outs = self._run_outs(card, other, unseen)
                if outs is None:
                    continue
                score = min(outs + jokers, self.max_outs) * run_factor
            else:
                continue
            best = max(best, score)
        return self.near_weight * best

    def table_fits(self, view: View) -> set[int]:
        """Cards that could be laid off on some table meld now (read from the table planes)."""
        fits: set[int] = set()
        top = 13 if self.ace_high else 12
        used = view.num_table_melds
        if not used:
            return fits
        by_slot: list[list[int]] = [[] for _ in range(used)]
        slots, cards = np.nonzero(view.table_melds[:used, :NUM_NATURAL])  # row by row, cards ascending
        for slot, card in zip(slots.tolist(), cards.tolist()):
            by_slot[slot].append(card)
        for stands in by_slot:
            if len(stands) < 2:
                continue
            ranks = {c % NUM_RANKS for c in stands}
            if len(ranks) == 1:
                if len(stands) < 4:
                    rank = stands[0] % NUM_RANKS
                    fits.update(s * NUM_RANKS + rank for s in range(4) if s * NUM_RANKS + rank not in stands)
                continue
            suit = stands[0] // NUM_RANKS
            positions = sorted(r for r in ranks)
            if 0 in ranks and self.ace_high and 12 in ranks:
                positions = sorted(13 if r == 0 else r for r in ranks)
            low, high = positions[0], positions[-1]
            if high - low + 1 >= 13:
                continue
            if low > 0:
                fits.add(suit * NUM_RANKS + (low - 1))
            if high < top:
                fits.add(suit * NUM_RANKS + (high + 1) % NUM_RANKS)
        return fits

    def danger(self, card: int, view: View, fits: set[int]) -> float:
        """How much discarding ``card`` helps the next player, in points."""
        if self.num_players < 2:
            return 0.0
        known = view.known[1]
        rank, suit = card % NUM_RANKS, card // NUM_RANKS
        partners = 0
        for other in range(NUM_NATURAL):
            if not known[other] or other == card:
                continue
            same_rank = other % NUM_RANKS == rank
            if same_rank or (other // NUM_RANKS == suit and self._run_outs(card, other, _ALL_LIVE) is not None):
                partners += 1
        score = 0.0
        if partners >= 2:
            score += 25.0
        elif partners == 1:
            score += 6.0
        if card in fits:
            score += 8.0
        return self.danger_weight * score

    # ------------------------------------------------------------------ draw

    def _draw(self, view: View, legal: np.ndarray) -> int:
        base = self.kind_base
        legal_set = set(legal.tolist())
        if self.rules.cut_card and base[TAKE_CUT] in legal_set:
            return base[TAKE_CUT]
        take = base[TAKE_DISCARD]
        if take not in legal_set:
            return base[DRAW]
        return take if self.wants_top(view) else base[DRAW]

    def wants_top(self, view: View) -> bool:
        """Whether taking the discard top beats a stock card that turns out useless."""
        top = view.discard_top
        if top < 0:
            return False
        if self.is_jokerlike(top, view.wild_rank) and self.has_jokers:
            return True
        hand = view.hand
        fits_table = self.table_game and top in self.table_fits(view)
        if not fits_table and not self.could_meld(top, hand, view.wild_rank):
            return False  # no meld can hold it: skip the solver
        dead_now, _, loose_now = self.arrangement(hand, view.wild_rank)
        worst_now = max((self.values[c] for c in loose_now), default=0)
        with_top = hand[:]
        with_top[top] += 1
        dead_new, _, loose_new = self.arrangement(with_top, view.wild_rank)
        worst_new = max((self.values[c] for c in loose_new if c != top), default=0)
        if dead_new - worst_new < dead_now - worst_now:
            return True
        if fits_table:
            return not self.rules.layoff_needs_own_meld or view.opened[0]
        return False

    def could_meld(self, card: int, hand, wild_rank: int | None) -> bool:
        """Whether ``card`` could join a meld with the hand: the hand holds a joker, a card of its
        rank in another suit, or a card of its suit within two ranks."""
        jokers = hand[JOKER]
        if wild_rank is not None:
            jokers += sum(hand[s * NUM_RANKS + wild_rank] for s in range(4))
        if jokers:
            return True
        rank, suit = card % NUM_RANKS, card // NUM_RANKS
        if any(hand[s * NUM_RANKS + rank] for s in range(4) if s != suit):
            return True
        top = 13 if self.ace_high else 12
        for position in self._positions(rank):
            for other in (position - 2, position - 1, position + 1, position + 2):
                if 0 <= other <= top and other % NUM_RANKS != rank and hand[suit * NUM_RANKS + other % NUM_RANKS]:
                    return True
        return False

    # ------------------------------------------------------------------ Indian play

    def _play_declaring(self, view: View, legal: np.ndarray) -> int:
        declare_base = self.kind_base[DECLARE]
        declares = legal[(legal >= declare_base) & (legal < declare_base + NUM_TYPES)]
        if declares.size:
            return int(declares[0])
        return self._discard(view, legal)

    def _lives_factor(self, melds: tuple) -> float:
        """Indian (I5): how much more run pairs are worth while the hand lacks its lives."""
        if not self.rules.spec.lives:
            return 1.0
        pure = runs = 0
        for meld in melds:
            naturals = [c for c in meld if c != JOKER]
            one_suit = len({c // NUM_RANKS for c in naturals}) == 1
            if one_suit and len(naturals) > 1 and len({c % NUM_RANKS for c in naturals}) == len(naturals):
                runs += 1
                if len(naturals) == len(meld):
                    pure += 1
        if not pure:
            return 1.0 + self.lives_boost
        if runs < 2:
            return 1.0 + 0.5 * self.lives_boost
        return 1.0

    # ------------------------------------------------------------------ discard

    def _discard(self, view: View, legal: np.ndarray) -> int:
        low, high = DISCARD_BASE, DISCARD_BASE + NUM_TYPES
        discardable = [int(a) - DISCARD_BASE for a in legal if low <= a < high]
        if not discardable:
            return int(legal[0])
        return DISCARD_BASE + self.choose_discard(view, discardable)

    def choose_discard(self, view: View, discardable: list[int]) -> int:
        """The card to discard among ``discardable`` (see the module docstring)."""
        return self.rank_discards(view, discardable)[0]

    def rank_discards(self, view: View, discardable: list[int]) -> list[int]:
        """The cards of ``discardable`` from the best discard to the worst, by the rule heuristic."""
        hand = view.hand
        wild = view.wild_rank
        _, melds, loose = self.arrangement(hand, wild)
        allowed = sorted(set(discardable))
        plain = [c for c in allowed if not self.is_jokerlike(c, wild)]
        jokerlike = [c for c in allowed if self.is_jokerlike(c, wild)]
        loose_set = {c for c in loose if c != JOKER}
        candidates = [c for c in plain if c in loose_set]
        rest = [c for c in plain if c not in loose_set]
        if not candidates:
            rest.sort(key=lambda c: (self._deadwood_without(hand, c, wild), -self.values[c], c))
            return rest + jokerlike
        rest.sort(key=lambda c: (-self.values[c], c))  # melded cards come last; no solver calls for them
        unseen = self.unseen(view)
        jokers = self._unseen_jokers(view, unseen) if self.has_jokers else 0
        run_factor = self._lives_factor(melds)
        fits = self.table_fits(view) if self.table_game else set()
        loose_plain = [c for c in loose if c != JOKER]
        late = 1.0 + self.late_weight * view.turn_fraction * self.rules.max_turns / 50.0

        def score(card: int) -> tuple:
            value = self.values[card] * late - self.keep_value(card, loose_plain, unseen, jokers, run_factor)
            return (value - self.danger(card, view, fits), self.values[card], -card)

        candidates.sort(key=score, reverse=True)
        return candidates + rest + jokerlike

    def _deadwood_without(self, hand, card: int, wild: int | None) -> int:
        rest = hand[:]
        rest[card] -= 1
        return self.deadwood(rest, wild)

    # ------------------------------------------------------------------ Basic and römi play

    def _play_table(self, view: View, legal: np.ndarray) -> int:
        base = self.kind_base
        meld_base, place_base = base[MELD], base[PLACE]
        hand = view.hand
        size = sum(hand)
        melds = [int(a) for a in legal if meld_base <= a < place_base]
        places = [int(a) for a in legal if a >= place_base]
        plays = melds + places
        if not plays:
            return self._discard(view, legal)
        if view.must_place >= 0 or view.owed_jokers:  # owed to the table this turn (R4, R5)
            return min(plays, key=lambda a: self._after_play(view, a))
        if self.holds(view):
            return self._discard(view, legal)
        goes_out = 0 if self.rules.out_without_discard else 1  # B4; römi needs a last discard (R6)
        for action in plays:
            if size - self._cards_used(view, action)[1] == goes_out:
                return action
        dead, arranged, loose = self.arrangement(hand)
        wanted = {tuple(sorted(meld)) for meld in arranged}
        best_meld = None
        for action in melds:
            physical = self._physical(action, hand)
            if tuple(sorted(physical)) in wanted and (best_meld is None or len(physical) > best_meld[0]):
                best_meld = (len(physical), action)
        if best_meld is not None:
            return best_meld[1]
        swaps = [a for a in places if self._is_swap(view, a)]
        if swaps:
            best = min(swaps, key=lambda a: self._after_play(view, a))
            if self._after_play(view, best)[0] < dead:
                return best
        loose_set = set(c for c in loose if c != JOKER)
        for action in places:
            card, _ = self._place_parts(action)
            if card in loose_set and not self._is_swap(view, action):
                return action
        return self._discard(view, legal)

    def holds(self, view: View) -> bool:
        """Play step 0: keep every meld in hand this turn (weights ``hold_until``, ``hold_loose``)."""
        if min(view.hand_sizes[1:self.num_players]) <= self.hold_until:
            return False
        fits = self.table_fits(view)
        _, _, loose = self.arrangement(view.hand)
        stuck = sum(1 for c in loose if c != JOKER and c not in fits)
        return stuck > self.hold_loose

    def _physical(self, action: int, hand) -> list[int]:
        template = self.templates[action - self.kind_base[MELD]]
        return [c if hand[c] else JOKER for c in template.cards]

    def _place_parts(self, action: int) -> tuple[int, int]:
        """(card, table slot) of a placement; römi's low-end joker ids come after the others (R5)."""
        low_joker_base = self.kind_base[PLACE_JOKER_LOW]
        if 0 <= low_joker_base <= action:
            return JOKER, action - low_joker_base
        offset = action - self.kind_base[PLACE]
        return offset % NUM_TYPES, offset // NUM_TYPES

    def _is_swap(self, view: View, action: int) -> bool:
        card, slot = self._place_parts(action)
        return card != JOKER and view.table_melds[slot][card] == -1

    def _cards_used(self, view: View, action: int) -> tuple[list[int], int]:
        """The cards a play takes from the hand, and how many fewer cards the hand then holds."""
        if action < self.kind_base[PLACE]:
            physical = self._physical(action, view.hand)
            return physical, len(physical)
        card, _ = self._place_parts(action)
        return [card], 0 if self._is_swap(view, action) else 1

    def _after_play(self, view: View, action: int) -> tuple:
        """(deadwood left, cards left, action): lower is better."""
        rest = view.hand[:]
        used, fewer = self._cards_used(view, action)
        for card in used:
            rest[card] -= 1
        if fewer == 0:
            rest[JOKER] += 1
        return (self.deadwood(rest), sum(rest), action)
