"""The search agent: determinised rollouts of the rule agent (perfect-information Monte Carlo).

At a draw choice where the discard top could join a meld, and at every discard, the agent takes
the rule agent's choice and its next best discards (``candidates``), deals guesses of the hidden
cards, and plays each candidate to the end of the hand in every guess with the rule agent in
every seat. All candidates are played on the same guesses (common random numbers), so their
differences are measured with far less noise than their values. An alternative replaces the rule
agent's choice only when its mean advantage, paired guess by guess, exceeds ``z`` standard
errors; guessing stops after ``min_worlds`` guesses once every alternative is clearly worse, and
after ``worlds`` guesses at most. Declaring, going out, the cut card, melds, lay-offs and swaps
are the rule agent's calls.

A guess (``determinise``) is built from the observation only: the unseen cards (the full deck
less our hand, the discard pile, the table, the cut card or wild card, and the cards known to be
in other hands) are shuffled and dealt to fill each other hand (after its known cards) to the
size the observation shows, and the stock to its size. Nothing of the true hidden state is used.
"""

from __future__ import annotations

import math
import random

import numpy as np

from rummy_env.cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_SUITS, NUM_TYPES
from rummy_env.encoding import action_layout
from rummy_env.game import DISCARD, DRAW, PHASE_DRAW, PHASE_PLAY, STATE_FIELDS, TAKE_DISCARD, GameState
from rummy_env.melds import RUN, SET
from rummy_env.ruleset import RuleSet
from rummy_env.vector import VectorGame

from .base import Agent, AgentError, legal_actions
from .rule_agent import RuleAgent
from .view import ObservationReader, View


def table_from_planes(view: View, ace_high: bool) -> list[list]:
    """The table melds ``[kind, key, low, slots]`` (as ``rummy_env.melds`` keeps them) read from the planes."""
    table = []
    for slot in range(view.num_table_melds):
        row = view.table_melds[slot]
        stands = [c for c in range(NUM_NATURAL) if row[c]]
        ranks = {c % NUM_RANKS for c in stands}
        if len(ranks) == 1:
            rank = stands[0] % NUM_RANKS
            slots = [-1] * NUM_SUITS
            for card in stands:
                slots[card // NUM_RANKS] = card if row[card] > 0 else JOKER
            table.append([SET, rank, 0, slots])
            continue
        suit = stands[0] // NUM_RANKS
        high_ace = ace_high and 0 in ranks and 12 in ranks
        positions = sorted((13 if (high_ace and c % NUM_RANKS == 0) else c % NUM_RANKS, c) for c in stands)
        low = positions[0][0]
        table.append([RUN, suit, low, [card if row[card] > 0 else JOKER for _, card in positions]])
    return table


def unseen_pool(view: View, copies: list[int]) -> list[int]:
    """The cards that could be anywhere hidden (other hands beyond their known cards, the stock)."""
    seen = view.seen_counts()
    for row in view.known[1:]:
        for card, count in enumerate(row):
            seen[card] += count
    pool = []
    for card in range(NUM_TYPES):
        pool.extend([card] * max(0, copies[card] - seen[card]))
    return pool


def determinise(view: View, rules, rng: random.Random, seed: int = 0) -> GameState:
    """A full game state consistent with the observation; we sit in seat 0, the others in turn order.

    The unseen cards are shuffled and dealt to fill the other hands and the stock."""
    n = rules.num_players
    copies = [rules.decks] * NUM_NATURAL + [rules.printed_jokers]
    pool = unseen_pool(view, copies)
    rng.shuffle(pool)
    state = GameState.__new__(GameState)
    state.rules = rules
    state.seed = seed
    state.rebuilt_stock = None  # a rebuild (G8) shuffles with the world's seed
    state.first_player = 0
    hands = [view.hand[:]]
    for seat in range(1, n):
        hand = view.known[seat][:]
        missing = max(0, view.hand_sizes[seat] - sum(hand))
        for card in pool[:missing]:
            hand[card] += 1
        del pool[:missing]
        hands.append(hand)
    state.hands = hands
    state.stock = pool[:view.stock_size]
    discard = [c for c in range(NUM_TYPES) for _ in range(view.discard_rest[c])]
    rng.shuffle(discard)
    if view.discard_top >= 0:
        discard.append(view.discard_top)
    state.discard = discard
    state.table = table_from_planes(view, rules.ace_high) if rules.table_melds else []
    state.cut_card = view.cut_card
    state.wild_card = view.wild_card
    state.wild_rank = view.wild_rank
    state.current = 0
    state.phase = PHASE_DRAW if view.phase == 0 else PHASE_PLAY
    steps = int(round(view.turn_fraction * 127))  # the observation keeps turns in steps of max_turns / 127
    state.turn = min(rules.max_turns - 1, -(-steps * rules.max_turns // 127))
    state.turns_taken = [sum(row) for row in view.discarded]
    state.taken_card = view.just_taken
    # cards owed to the table this turn (R4, R5): a natural card, and jokers counted apart
    state.owed_card = view.must_place
    state.owed_jokers = view.owed_jokers
    state.opened = view.opened[:]
    state.has_laid = view.opened[:]
    state.laid_this_turn = False
    state.rebuilds = 1 if view.stock_rebuilt else 0
    state.known = [row[:] for row in view.known]
    state.discarded = [row[:] for row in view.discarded]
    state.result = None
    state.history = []
    state.changed()
    unset = [field.name for field in STATE_FIELDS if not hasattr(state, field.name)]
    if unset:  # a field added to GameState that this guess does not fill yet: fail here, not later
        raise RuntimeError(f"determinise: GameState fields not set: {', '.join(unset)}")
    return state


SEARCH_SETTINGS = ("worlds", "min_worlds", "candidates", "z", "max_rollout_turns")
"""The settings a ``search:KEY=VALUE,...`` spec may give."""


class SearchAgent(Agent):
    """Rule agent plus determinised rollouts at draw and discard choices.

    Deviation is guarded: an alternative replaces the rule agent's choice only when its mean
    advantage over the guesses (paired, same guess for both) exceeds ``z`` standard errors.
    Guessing stops early once every alternative is clearly worse.
    """

    name = "search"

    def __init__(self, rules: RuleSet, seed: int | None = 0, worlds: int = 12, min_worlds: int = 4,
                 candidates: int = 3, z: float = 1.5, max_rollout_turns: int = 200):
        super().__init__(rules)
        for key, value in (("worlds", worlds), ("min_worlds", min_worlds), ("candidates", candidates),
                           ("max_rollout_turns", max_rollout_turns)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise AgentError(f"search agent setting {key}={value!r}: expected an int >= 1")
        if isinstance(z, bool) or not isinstance(z, (int, float, np.integer, np.floating)) or not math.isfinite(z):
            raise AgentError(f"search agent setting z={z!r}: expected a finite number")
        self.reader = ObservationReader(rules)
        self.rule = RuleAgent(rules, seed)
        self.layout = action_layout(rules.game)
        self.moves = self.layout.moves
        self.worlds = worlds
        self.min_worlds = min(min_worlds, worlds)
        self.candidates = candidates
        self.z = z
        self.max_rollout_turns = max_rollout_turns
        self.rng = random.Random(seed)
        self._vector: VectorGame | None = None  # the rollouts' slots, built at the first search
        self.searched = 0
        self.deviated = 0

    def reset(self, seed: int | None = None) -> None:
        self.rule.reset(seed)
        if seed is not None:
            self.rng = random.Random(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        choice = self.rule.act(observation, action_mask)
        view = self.reader.read(observation)
        options = self.options(view, legal, choice)
        if len(options) < 2:
            return choice
        return self.search(view, options)

    def options(self, view: View, legal: np.ndarray, choice: int) -> list[int]:
        """The actions worth searching, the rule agent's choice first; one means no search."""
        kind = self.moves[choice][0]
        if kind in (DRAW, TAKE_DISCARD):
            top = view.discard_top
            if top < 0 or (kind == DRAW and not self.rule.could_meld(top, view.hand, view.wild_rank)):
                return [choice]  # the top can join no meld: nothing to weigh
            other = [int(a) for a in legal if self.moves[a][0] in (DRAW, TAKE_DISCARD) and a != choice]
            return [choice] + other
        if kind != DISCARD:
            return [choice]  # declare, cut card, melds, lay-offs and swaps: the rule agent's call
        discardable = [self.moves[a][1] for a in legal if self.moves[a][0] == DISCARD]
        ranked = self.rule.rank_discards(view, discardable)
        base = self.moves[choice][1]
        order = [base] + [c for c in ranked if c != base and not self.rule.is_jokerlike(c, view.wild_rank)]
        return [self.layout.action((DISCARD, c, 0)) for c in order[:self.candidates]]

    def search(self, view: View, options: list[int]) -> int:
        """The rule agent's choice (``options[0]``) unless an alternative is clearly better in rollouts.

        The first ``min_worlds`` guesses are dealt (in order, from ``self.rng``) and all their
        rollouts played together; after that one guess at a time, until guessing may stop.
        """
        self.searched += 1
        gains: list[list[float]] = [[] for _ in options]
        width = len(options)
        world_index = 0
        while world_index < self.worlds:
            count = self.min_worlds if world_index == 0 else 1
            worlds = [determinise(view, self.rules, self.rng, seed=self.rng.getrandbits(32)) for _ in range(count)]
            values = self.rollouts([(world, action) for world in worlds for action in options])
            stop = False
            for k in range(count):
                base = values[k * width]
                for i in range(1, width):
                    gains[i].append(values[k * width + i] - base)
                world_index += 1
                if world_index >= self.min_worlds and all(_upper(g, self.z) <= 0 for g in gains[1:]):
                    stop = True
                    break
            if stop:
                break
        best, best_low = 0, 0.0
        for i in range(1, len(options)):
            low = _lower(gains[i], self.z)
            if low > best_low:
                best, best_low = i, low
        self.deviated += best != 0
        return options[best]

    def rollouts(self, starts: list[tuple[GameState, int]]) -> list[float]:
        """For each (state, action): our reward after playing ``action`` in a copy of the state and
        then the rule agent in every seat to the hand's end (0 when ``max_rollout_turns`` turns
        pass first). All are played together in one ``VectorGame``, the rule agent asked once per
        step for every row."""
        vector = self._rollout_vector(len(starts))
        rows = list(range(len(starts)))
        for i, (state, _) in enumerate(starts):
            vector.load(i, state.clone())
        vector.step_rows(rows, [action for _, action in starts])
        values = [0.0] * len(starts)
        limits = [0] * len(starts)
        active = []
        for i in rows:
            if vector.results[i] is not None:
                values[i] = vector.results[i].points[0]
            else:
                limits[i] = vector.state(i).turn + self.max_rollout_turns
                active.append(i)
        while active:
            active = [i for i in active if vector.state(i).turn < limits[i]]
            if not active:
                break
            vector.step_rows(active, self.rule.act_batch(vector.observations[active], vector.action_masks[active]))
            results = vector.results
            still = []
            for i in active:
                if results[i] is None:
                    still.append(i)
                else:
                    values[i] = results[i].points[0]
            active = still
        return values

    def _rollout_vector(self, slots: int) -> VectorGame:
        if self._vector is None or self._vector.num_envs < slots:
            size = max(slots, self.min_worlds * max(self.candidates, 2))
            self._vector = VectorGame(self.game, size, self.num_players, **self.rules.options)
        return self._vector


def _mean_and_error(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("inf")
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, (variance / n) ** 0.5


def _upper(values: list[float], z: float) -> float:
    mean, error = _mean_and_error(values)
    return mean + z * error if error != float("inf") else float("inf")


def _lower(values: list[float], z: float) -> float:
    mean, error = _mean_and_error(values)
    if error == 0.0:
        return mean
    return mean - z * error if error != float("inf") else float("-inf")
