"""Search at play time with a trained policy: determinised worlds, policy rollouts, many rows at once.

    agent = make_agent("search:policy=pretrained:indian,worlds=8", make_ruleset("indian", 2))   # agents.registry
    actions = agent.act_batch(observations, masks)          # every row searched together
    result = agent.search_batch(observations, masks)        # and each candidate's mean value

At a decision the policy is asked once for all rows. A row is searched unless one move is legal or
the policy's top probability reaches ``confidence``. Its candidates are the policy's ``candidates``
most likely legal actions (its own choice first). ``worlds`` guesses of the hidden cards are dealt
from the observation alone (``agents.search_agent.determinise``: the G2 card counts, the cards each
opponent took from the pile and still holds, the cards each discarded, the table, the cut or wild
card), and every candidate is played in every guess (common random numbers), then the policy plays
greedily in every seat: to the hand's end, or, with ``depth=D``, until our D-th turn from now
begins, where the policy's value of our observation stands in for the rest (the value head counts
reward units of the trainer's shaped return: ``PointsFromValue`` turns it back into points). A
rollout is worth what the policy was trained to win: the hand's points plus the trainer's win bonus
in points (``win_points``: all of it to the winner, its share taken from every other seat, as the
trainer pays it), so hands played out and hands cut at the value count alike.

A candidate replaces the policy's choice when its mean gain over it, paired world by world, exceeds
``z`` standard errors (``z=0``: any positive mean gain); the candidate with the largest such lower
bound wins. Every rollout of every searched row is a slot of one ``rummy_env.vector.VectorGame``
(the numba core): each tick the policy is asked once for every unfinished rollout of every row.

The worlds of a row are dealt from a generator seeded by (the agent's seed, the row's observation
and mask): a row's choice depends on nothing else, not on the other rows of the batch nor on the
order of the calls, and the same seed gives the same choices.

Settings of ``search:policy=SPEC,KEY=VALUE,...`` (``SETTINGS``; the policy spec may not contain a
comma):

==============  ========  ==================================================================
setting         default   meaning
==============  ========  ==================================================================
``policy``      required  the policy: ``ppo:PATH``, ``onnx:PATH`` or ``pretrained:GAME``
``worlds``      16        guesses of the hidden cards per searched decision (int >= 1)
``candidates``  3         most likely legal actions searched (int >= 2)
``depth``       2         our own turns played before the value cut; 0: to the hand's end
``confidence``  0.95      no search when the policy's top probability is at least this (0 < c <= 1)
``z``           0         standard errors of paired gain needed to leave the policy's choice (>= 0)
``win_points``  policy's  points a won hand is worth on top of its points (>= 0); default the
                          policy's own training bonus (``win_bonus / reward_scale``), 0 for a
                          policy whose file names none; 0 searches for points alone
==============  ========  ==================================================================

The rollouts play single hands: in match mode the policy in a rollout sees match scores of 0.
``ppo:`` policies need torch; ``onnx:`` and ``pretrained:`` ones run on onnxruntime alone.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from rummy_env.encoding import num_actions, observation_layout
from rummy_env.ruleset import RuleSet
from rummy_env.vector import VectorGame

from .base import Agent, AgentError, legal_actions
from .search_agent import determinise
from .view import ObservationReader

OUR_SEAT = 0
"""Our seat in every world (``determinise`` seats the observer first)."""

FORWARD_ROWS = 128
"""Rows per policy call in the rollouts: larger batches cost more per row on one core (cache)."""

MAX_ROLLOUTS = 4096
"""Rollouts played together at most (the rows of a larger batch are searched in groups): bounds the
rollout vector's memory, and more rows at once gain almost nothing per row."""


@dataclass(frozen=True)
class SearchBudget:
    """How much a searched decision may spend (see the module docstring's table)."""

    worlds: int = 16
    candidates: int = 3
    depth: int = 2
    confidence: float = 0.95
    z: float = 0.0

    def __post_init__(self):
        for key, low in (("worlds", 1), ("candidates", 2), ("depth", 0)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise AgentError(f"search setting {key}={value!r}: expected an int >= {low}")
        for key in ("confidence", "z"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(value):
                raise AgentError(f"search setting {key}={value!r}: expected a finite number")
        if not 0 < self.confidence <= 1:
            raise AgentError(f"search setting confidence={self.confidence!r}: expected 0 < confidence <= 1")
        if self.z < 0:
            raise AgentError(f"search setting z={self.z!r}: expected a number >= 0")


BUDGET_SETTINGS = tuple(SearchBudget.__dataclass_fields__)
"""The settings of a search's budget (``SearchBudget``)."""
SETTINGS = ("policy", "win_points") + BUDGET_SETTINGS
"""The settings a ``search:policy=SPEC,...`` spec may give."""


class PolicyNet(Protocol):
    """A policy as the search asks it: a batch of observations and masks in, numpy arrays out."""

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities (batch, actions), 0 on masked actions; values (batch,))."""


class TorchPolicy:
    """A torch actor-critic (``agents.policy``) called as a ``PolicyNet``: softmax of its masked logits."""

    def __init__(self, model):
        import torch

        self._torch = torch
        self.model = model.eval()

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        torch = self._torch
        with torch.no_grad():
            logits, values = self.model(torch.as_tensor(np.asarray(observations, np.float32)),
                                        torch.as_tensor(np.asarray(masks)).to(torch.int8))
            return torch.softmax(logits, dim=-1).numpy(), values.numpy()


def win_share(bonus: float, winner: int | None, seat: int, num_players: int) -> float:
    """What ``seat`` gets of a hand's win ``bonus`` (the trainer's ``win_bonus``): all of it when it
    won, minus an equal share of it when another seat won (zero-sum), nothing without a winner."""
    if not bonus or winner is None or winner < 0:
        return 0.0
    return bonus if winner == seat else -bonus / (num_players - 1)


class PointsFromValue:
    """The policy's value of our observation at the start of our turn, in points of the hand.

    The trainer's value head estimates the shaped return in reward units: points × ``reward_scale``
    plus potential-based shaping, whose terms add up to minus the potential Φ at the start (Φ is
    minus the seat's hand penalty at the start of its turn, times ``shaping_coef × reward_scale``;
    docs/training.md). So points = value / ``reward_scale`` − ``shaping_coef`` × penalty, the
    penalty counted as the trainer's ``shaping_potential`` counts it.
    """

    def __init__(self, rules, reward_scale: float, shaping_coef: float = 0.0, potential: str = "deadwood",
                 win_bonus: float = 0.0):
        if not reward_scale > 0:
            raise ValueError(f"reward_scale={reward_scale!r}: expected a number > 0")
        if potential not in ("deadwood", "payment"):
            raise ValueError(f"shaping_potential={potential!r}: expected 'deadwood' or 'payment'")
        self.rules = rules
        self.game = rules.game
        self.reward_scale = float(reward_scale)
        self.shaping_coef = float(shaping_coef)
        self.potential = potential
        self.win_points = float(win_bonus) / self.reward_scale
        """The trainer's win bonus in points: what the value carries for a won hand (``win_share``)."""
        self.unopened_penalty = rules.unopened_penalty or 0
        parts = observation_layout(rules.game, rules.num_players, rules.printed_jokers)
        self._hand = parts["hand"]
        self._opened = parts["opened"].start if "opened" in parts else None
        self._values = np.asarray(rules.values, np.int64)

    @classmethod
    def from_config(cls, rules, config: dict | None) -> PointsFromValue | None:
        """From a trainer config (a checkpoint's ``config``); None when it gives no ``reward_scale``."""
        if not isinstance(config, dict):
            return None
        scale = config.get("reward_scale")
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
            return None
        coef = float(config.get("shaping_coef", 1.0)) if config.get("shaping", False) else 0.0
        bonus = config.get("win_bonus", 0.0)
        bonus = float(bonus) if isinstance(bonus, (int, float)) and not isinstance(bonus, bool) and bonus >= 0 else 0.0
        return cls(rules, float(scale), coef, config.get("shaping_potential") or "deadwood", bonus)

    def __call__(self, observations: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Points for a batch of our observations (at the start of our turn) and their values."""
        points = np.asarray(values, np.float64) / self.reward_scale
        if self.shaping_coef:
            hands = np.rint(observations[:, self._hand]).astype(np.int64)
            opened = None if self._opened is None else observations[:, self._opened] > 0.5
            penalties = [self.penalty(hand, None if opened is None else bool(opened[k]))
                         for k, hand in enumerate(hands.tolist())]
            points -= self.shaping_coef * np.asarray(penalties, np.float64)
        return points

    def penalty(self, hand: list[int], opened: bool | None = None) -> float:
        """The hand penalty the trainer's potential counts (Indian: I7; else B5, R7 deadwood, or
        with ``payment`` the value of the hand, an unopened hand's fixed penalty where the game has one)."""
        if self.potential == "payment" and not self.rules.spec.lives:
            return float(self.rules.payment(hand, opened is not False))
        return float(self.rules.deadwood(hand))


def load_policy(spec: str, rules: RuleSet) -> tuple[PolicyNet, PointsFromValue | None]:
    """The network a policy spec names (``ppo:PATH``, ``onnx:PATH``, ``pretrained:GAME``) and its
    value scale; an ``AgentError`` naming the spec when it is no trained policy of this game."""
    game, num_players = rules.game, rules.num_players
    name, _, path = spec.partition(":")
    if name in ("ppo", "ppo-sample"):
        if not path:
            raise AgentError(f"policy={spec!r}: expected {name}:PATH, the path of a policy checkpoint")
        from .policy import load_checkpoint

        model, meta = load_checkpoint(path, game, num_players)
        return TorchPolicy(model), PointsFromValue.from_config(rules, meta.get("config"))
    if name not in ("onnx", "onnx-sample", "pretrained"):
        raise AgentError(f"policy={spec!r}: expected a trained policy with a value head: "
                         "ppo:PATH, onnx:PATH or pretrained:GAME")
    from .onnx_agent import OnnxPolicy
    from .pretrained import pretrained_agent

    if name == "pretrained":
        policy = pretrained_agent(path, rules).policy
    elif not path:
        raise AgentError(f"policy={spec!r}: expected {name}:PATH, the path of an exported ONNX policy")
    else:
        policy = OnnxPolicy(path, game, num_players)
    config = policy.metadata.get("checkpoint", {}).get("config")
    return policy, PointsFromValue.from_config(rules, config)


@dataclass
class SearchResult:
    """What ``search_batch`` found, one row per observation (K = the budget's ``candidates``).

    Columns beyond a row's candidates hold action -1 and NaN; a row not searched holds only the
    policy's choice, with NaN values.
    """

    actions: np.ndarray
    """(N,) int64: the action chosen."""
    policy_actions: np.ndarray
    """(N,) int64: the policy's own (greedy) choice."""
    searched: np.ndarray
    """(N,) bool: whether the row was searched."""
    candidates: np.ndarray
    """(N, K) int64: the candidates, the policy's choice first."""
    probabilities: np.ndarray
    """(N, K) float32: the policy's probability of each candidate."""
    values: np.ndarray
    """(N, K) float64: each candidate's mean points for our seat over the worlds."""
    errors: np.ndarray
    """(N, K) float64: the standard error of each candidate's mean gain over the policy's choice."""


@dataclass(frozen=True)
class Actors:
    """Who plays a rollout's seats besides the policy: ``opponent`` (an agent with ``act_batch``)
    in ``seats``; the policy (greedy) in every other seat."""

    opponent: object
    seats: tuple[int, ...]


def true_worlds(state, count: int, seed: int) -> list:
    """``count`` worlds of ``state`` as it truly is, but for the order of its stock, which is
    shuffled anew in each (and the seed of a G8 rebuild's shuffle drawn anew): every hand, the
    pile and the table as they are. Given everything any seat has seen, the stock's order is
    uniform, so these are exact samples of what is hidden from all seats; the other hands are the
    true ones. For training only (``PolicySearch.search_states``): a player never sees them."""
    rng = random.Random(seed)
    worlds = []
    for _ in range(count):
        world = state.clone()
        rng.shuffle(world.stock)
        world.seed = rng.getrandbits(63)
        world.changed()
        worlds.append(world)
    return worlds


class PolicySearch:
    """The batched search itself, on any ``PolicyNet`` (the trainer may pass its live network).

    ``points_from_value`` is needed only with a ``depth``; ``backend="python"`` runs the rollouts
    on the reference engine (tests compare it with the numba core).
    """

    def __init__(self, rules: RuleSet, policy: PolicyNet, budget: SearchBudget = SearchBudget(),
                 points_from_value: PointsFromValue | None = None, backend: str = "numba",
                 win_points: float = 0.0):
        if budget.depth and points_from_value is None:
            raise AgentError(f"search setting depth={budget.depth}: the policy carries no trainer config "
                             "(reward_scale, shaping) to read its value head in points; use depth=0")
        self.game = game = rules.game
        self.num_players = num_players = rules.num_players
        self.policy = policy
        self.budget = budget
        self.points_from_value = points_from_value
        self.backend = backend
        if not (math.isfinite(win_points) and win_points >= 0):
            raise AgentError(f"search setting win_points={win_points!r}: expected a finite number >= 0")
        self.win_points = float(win_points)
        """The win bonus in points each rollout's result carries (``win_share``; the trainer's ``win_bonus``)."""
        self.rules = rules
        self.reader = ObservationReader(rules)
        self.num_actions = num_actions(game)
        parts = observation_layout(game, num_players, self.rules.printed_jokers)
        self._draw_phase = parts["phase"].start  # the plane's first entry: 1 in the draw phase
        self._vector: VectorGame | None = None
        self.rollouts_played = 0
        self.ticks = 0

    # ------------------------------------------------------------------ the decision

    def search(self, observations: np.ndarray, masks: np.ndarray, seeds: list[int]) -> SearchResult:
        """Search every row that needs it, all rollouts together; ``seeds[r]`` deals row r's worlds
        (guessed from the observation alone, ``worlds``)."""
        observations = np.asarray(observations, np.float32)
        return self._search(observations, masks, lambda r: self.worlds(observations[r], seeds[r]))

    def search_states(self, observations: np.ndarray, masks: np.ndarray, states: list, seats: list[int],
                      actors: list, seeds: list[int]) -> SearchResult:
        """The search of ``search`` with the worlds of ``true_worlds`` (training only: it reads the
        hidden hands). Row r is seat ``seats[r]`` of ``states[r]``; the other seats play as
        ``actors[r]`` says (``Actors``; None: the policy in every seat)."""
        return self._search(np.asarray(observations, np.float32), masks,
                            lambda r: true_worlds(states[r], self.budget.worlds, seeds[r]), seats, actors)

    def _search(self, observations: np.ndarray, masks: np.ndarray, worlds_of: Callable[[int], list],
                seats: list[int] | None = None, actors: list | None = None) -> SearchResult:
        masks = np.asarray(masks)
        if masks.ndim != 2 or observations.ndim != 2 or len(masks) != len(observations):
            raise AgentError(f"observations of shape {observations.shape} and masks of shape {masks.shape}: "
                             "expected one row of each per decision")
        if observations.shape[1] != self.reader.size or masks.shape[1] != self.num_actions:
            raise AgentError(f"observations of shape {observations.shape} and masks of shape {masks.shape}: "
                             f"{self.game!r} with {self.num_players} players has rows of {self.reader.size} "
                             f"and {self.num_actions}")
        rows = len(masks)
        for mask in masks:
            legal_actions(mask)
        probabilities, _ = self.policy(observations, masks)
        probabilities = np.where(masks != 0, probabilities, -1.0)
        order = np.argsort(-probabilities, axis=1, kind="stable")
        width = self.budget.candidates
        legal_count = (masks != 0).sum(axis=1)
        policy_actions = order[:, 0].astype(np.int64)
        top = probabilities[np.arange(rows), policy_actions]
        searched = (legal_count > 1) & (top < self.budget.confidence)
        candidates = np.full((rows, width), -1, np.int64)
        candidates[:, 0] = policy_actions
        chosen_probabilities = np.full((rows, width), np.nan, np.float32)
        values = np.full((rows, width), np.nan)
        errors = np.full((rows, width), np.nan)
        for r in np.flatnonzero(searched):
            count = min(width, int(legal_count[r]))
            candidates[r, :count] = order[r, :count]
        for r in range(rows):
            count = int((candidates[r] >= 0).sum())
            chosen_probabilities[r, :count] = probabilities[r, candidates[r, :count]]
        actions = policy_actions.copy()
        for jobs in self._groups(np.flatnonzero(searched).tolist(), candidates):
            outcome = self._rollouts(candidates, jobs, worlds_of, seats, actors)
            for r, per_world in zip(jobs, outcome):  # per_world: (worlds, count) points
                gains = per_world - per_world[:, :1]
                values[r, :per_world.shape[1]] = per_world.mean(axis=0)
                errors[r, :per_world.shape[1]] = _standard_error(gains)
                actions[r] = candidates[r, self._pick(gains)]
        return SearchResult(actions, policy_actions, searched, candidates, chosen_probabilities, values, errors)

    def _groups(self, jobs: list[int], candidates: np.ndarray) -> list[list[int]]:
        """The searched rows in order, in groups of at most ``MAX_ROLLOUTS`` rollouts (one row at least)."""
        groups, group, size = [], [], 0
        for r in jobs:
            rollouts = self.budget.worlds * int((candidates[r] >= 0).sum())
            if group and size + rollouts > MAX_ROLLOUTS:
                groups.append(group)
                group, size = [], 0
            group.append(r)
            size += rollouts
        return groups + [group] if group else groups

    def _pick(self, gains: np.ndarray) -> int:
        """The column to play: the largest lower bound of paired gain above 0, else the policy's (0)."""
        means = gains.mean(axis=0)
        lower = means - self.budget.z * _standard_error(gains)
        lower[0] = 0.0
        best = int(np.argmax(lower))
        return best if lower[best] > 0 else 0

    # ------------------------------------------------------------------ rollouts

    def worlds(self, observation: np.ndarray, seed: int) -> list:
        """The budget's guesses of the hidden cards behind ``observation`` (game states, our seat 0),
        dealt uniformly from the unseen cards."""
        view = self.reader.read(observation)
        rng = random.Random(seed)
        return [determinise(view, self.rules, rng, seed=rng.getrandbits(32))
                for _ in range(self.budget.worlds)]

    def _rollouts(self, candidates: np.ndarray, jobs: list[int], worlds_of: Callable[[int], list],
                  seats: list[int] | None, actors: list | None) -> list[np.ndarray]:
        """Per searched row, a (worlds, candidates) array of our points, every rollout in one vector."""
        starts, first_actions, shapes, start_seats, start_actors = [], [], [], [], []
        for r in jobs:
            row_candidates = [int(a) for a in candidates[r] if a >= 0]
            for world in worlds_of(r):
                for action in row_candidates:
                    starts.append(world)
                    first_actions.append(action)
                    start_seats.append(OUR_SEAT if seats is None else int(seats[r]))
                    start_actors.append(None if actors is None else actors[r])
            shapes.append((self.budget.worlds, len(row_candidates)))
        points = self.play(starts, np.asarray(first_actions, np.int64), start_seats, start_actors)
        out, at = [], 0
        for shape in shapes:
            size = shape[0] * shape[1]
            out.append(points[at:at + size].reshape(shape))
            at += size
        return out

    def play(self, starts: list, first_actions: np.ndarray, seats: list[int] | None = None,
             actors: list | None = None) -> np.ndarray:
        """Our seat's points when each state ``starts[k]`` plays ``first_actions[k]`` and then the
        policy plays greedily, to the hand's end or the value cut (``depth``); plus ``win_points``
        when our seat wins. Our seat is ``seats[k]`` (default ``OUR_SEAT``); the other seats of
        rollout k play as ``actors[k]`` says (an ``Actors``; None, the default: the policy)."""
        n = len(starts)
        vector = self._rollout_vector(n)
        for slot, state in enumerate(starts):
            vector.load(slot, state.clone())
        our_seat = np.full(n, OUR_SEAT, np.int64) if seats is None else np.asarray(seats, np.int64)
        policy_seat = np.ones((n, self.num_players), bool)  # [rollout, seat]: the policy plays it
        opponent_of = np.full(n, -1, np.int64)
        opponents: list = []
        for slot, actor in enumerate(actors or ()):
            if actor is not None:
                if not any(actor.opponent is known for known in opponents):
                    opponents.append(actor.opponent)
                opponent_of[slot] = next(k for k, known in enumerate(opponents) if known is actor.opponent)
                policy_seat[slot, list(actor.seats)] = False
        points = np.zeros(n)
        turns_begun = np.zeros(n, np.int64)
        depth = self.budget.depth
        active = np.arange(n, dtype=np.int64)
        actions = first_actions
        self.rollouts_played += n
        while active.size:
            vector.step_rows(active, actions)
            self.ticks += 1
            ended = vector.terminated[active] | vector.truncated[active]
            for slot in active[ended].tolist():
                result = vector.results[slot]
                points[slot] = result.points[our_seat[slot]] + win_share(self.win_points, result.winner,
                                                                         our_seat[slot], self.num_players)
            active = active[~ended]
            if not active.size:
                break
            observations = vector.observations[active]
            masks = vector.action_masks[active]
            to_act = vector.to_act[active]
            by_policy = policy_seat[active, to_act]
            asked = by_policy.copy()
            if depth:
                ours = (to_act == our_seat[active]) & (observations[:, self._draw_phase] > 0.5)
                turns_begun[active[ours]] += 1
                cut = ours & (turns_begun[active] >= depth)
                asked |= cut
            probabilities = values = None
            if asked.all():
                probabilities, values = self._forward(observations, masks)
            elif asked.any():
                probabilities = np.zeros(masks.shape, np.float32)
                values = np.zeros(len(masks), np.float32)
                probabilities[asked], values[asked] = self._forward(observations[asked], masks[asked])
            actions = np.zeros(active.size, np.int64)
            if by_policy.any():
                actions[by_policy] = np.where(masks[by_policy] != 0, probabilities[by_policy], -1.0).argmax(axis=1)
            for k, opponent in enumerate(opponents):
                rows = np.flatnonzero(~by_policy & (opponent_of[active] == k))
                if rows.size:
                    actions[rows] = opponent.act_batch(observations[rows], masks[rows])
            if depth and cut.any():
                points[active[cut]] = self.points_from_value(observations[cut], values[cut])
                active, actions = active[~cut], actions[~cut]
        return points

    def _forward(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The policy on the rows, ``FORWARD_ROWS`` at a time."""
        if len(masks) <= FORWARD_ROWS:
            return self.policy(observations, masks)
        parts = [self.policy(observations[at:at + FORWARD_ROWS], masks[at:at + FORWARD_ROWS])
                 for at in range(0, len(masks), FORWARD_ROWS)]
        return np.concatenate([p for p, _ in parts]), np.concatenate([v for _, v in parts])

    def _rollout_vector(self, slots: int) -> VectorGame:
        if self._vector is None or self._vector.num_envs < slots:
            size = 1 << max(6, (slots - 1).bit_length())
            self._vector = VectorGame(self.game, size, self.num_players, backend=self.backend, **self.rules.options)
        return self._vector


def _standard_error(gains: np.ndarray) -> np.ndarray:
    """Per column, the standard error of the mean of ``gains`` (worlds in rows); 0 with one world."""
    if len(gains) < 2:
        return np.zeros(gains.shape[1])
    return gains.std(axis=0, ddof=1) / math.sqrt(len(gains))


class PolicySearchAgent(Agent):
    """A trained policy that searches where it is unsure; see the module docstring."""

    name = "search"

    def __init__(self, rules: RuleSet, policy: PolicyNet, budget: SearchBudget = SearchBudget(),
                 points_from_value: PointsFromValue | None = None, seed: int | None = 0,
                 win_points: float | None = None):
        super().__init__(rules)
        if win_points is None:  # the policy's own objective, which its value head carries
            win_points = points_from_value.win_points if points_from_value is not None else 0.0
        self.engine = PolicySearch(rules, policy, budget, points_from_value, win_points=win_points)
        self.seed = 0 if seed is None else int(seed)
        self.decisions = 0
        self.searched = 0
        self.deviated = 0

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.seed = int(seed)

    def row_seed(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The seed of a row's worlds: a digest of the agent's seed, the observation and the mask."""
        digest = hashlib.blake2b(digest_size=8)
        digest.update(self.seed.to_bytes(8, "little", signed=True))
        digest.update(np.ascontiguousarray(observation, np.float32).tobytes())
        digest.update(np.ascontiguousarray(mask != 0).tobytes())
        return int.from_bytes(digest.digest(), "little")

    def search_batch(self, observations: np.ndarray, masks: np.ndarray) -> SearchResult:
        """Every row searched together: the choices and each candidate's mean value (``SearchResult``)."""
        observations, masks = np.asarray(observations), np.asarray(masks)
        seeds = [self.row_seed(o, m) for o, m in zip(observations, masks)]
        result = self.engine.search(observations, masks, seeds)
        self.decisions += len(masks)
        self.searched += int(result.searched.sum())
        self.deviated += int((result.actions != result.policy_actions).sum())
        return result

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.search_batch(observations, masks).actions

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None, :], np.asarray(action_mask)[None, :])[0])


def parse_spec(spec: str) -> tuple[str, dict]:
    """(the policy spec, the budget's settings) of ``search:policy=SPEC,KEY=VALUE,...``."""
    _, _, text = spec.partition(":")
    settings = _parse_settings(text, f"agent spec {spec!r}", SETTINGS)
    policy = settings.pop("policy", None)
    if policy is None:
        raise AgentError(f"agent spec {spec!r}: no policy=SPEC (ppo:PATH, onnx:PATH or pretrained:GAME)")
    return policy, settings


_TEXT_SETTINGS = {"policy": ("policy", "policy=SPEC (ppo:PATH, onnx:PATH or pretrained:GAME)")}
"""The settings kept as text: what each names and what is expected when it is empty."""


def _parse_settings(text: str, where: str, known: tuple[str, ...]) -> dict:
    """``KEY=VALUE,...`` as a dict of typed values (``policy`` kept as text); errors name ``where``."""
    settings: dict = {}
    for item in filter(None, text.split(",")):
        key, equals, value = item.partition("=")
        if not equals or key not in known:
            raise AgentError(f"{where}: unknown setting {item!r}: expected KEY=VALUE with KEY one of {list(known)}")
        if key in settings:
            raise AgentError(f"{where}: setting {key!r} is given twice")
        if key in _TEXT_SETTINGS:
            if not value:
                noun, expected = _TEXT_SETTINGS[key]
                raise AgentError(f"{where}: {key}= names no {noun}: expected {expected}")
            settings[key] = value
            continue
        kind: Callable = int if key in ("worlds", "candidates", "depth") else float
        try:
            settings[key] = kind(value)
        except ValueError:
            raise AgentError(f"{where}: setting {key}={value!r} is not "
                             f"{'a whole number' if kind is int else 'a number'}") from None
    return settings


def budget_from_settings(text: str) -> SearchBudget:
    """The budget of ``KEY=VALUE,...`` settings (those of ``search:policy=...`` but the policy)."""
    return SearchBudget(**_parse_settings(text, f"search settings {text!r}", BUDGET_SETTINGS))


def policy_search_agent(spec: str, rules: RuleSet, seed: int | None = 0) -> PolicySearchAgent:
    """The agent of ``search:policy=SPEC,...`` (the registry's entry); every check before any hand."""
    policy_spec, settings = parse_spec(spec)
    try:
        win_points = settings.pop("win_points", None)
        budget = SearchBudget(**settings)
        policy, points = load_policy(policy_spec, rules)
        agent = PolicySearchAgent(rules, policy, budget, points, seed, win_points=win_points)
    except AgentError as error:
        raise AgentError(f"agent spec {spec!r}: {error}") from None
    agent.name = spec
    return agent
