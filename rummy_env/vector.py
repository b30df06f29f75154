"""Many hands of one game stepped together: arrays in, arrays out.

``VectorGame`` holds ``num_envs`` independent hands (or matches) of one game and steps them all
at once, which is how the trainer, the arena and the benchmarks play in bulk. Each call writes
into preallocated buffers:

==================  ====================  =====================================================
attribute           shape, dtype          contents
==================  ====================  =====================================================
``observations``    (N, obs) float32      the observation of the seat to act in each hand
``action_masks``    (N, actions) int8     its legal actions (1 = legal)
``to_act``          (N,) int64            the seat to act
``rewards``         (N, players) float32  at a hand's (or match's) end, each seat's reward
``terminated``      (N,) bool             the hand (match) ended this step (win or stalemate)
``truncated``       (N,) bool             it was cut off (turn cap G9; ``max_hands`` in a match)
==================  ====================  =====================================================

The observations, masks and rewards are those of the PettingZoo environment
(``rummy_env.env``) for the same seeds and actions: slot ``i`` deals as ``env.reset(seed=seed +
i)`` followed by resets without a seed, and a test steps both in lockstep. A hand that ends is
replaced at once by the next deal (automatic reset, in the same step): after ``step`` the row of
a finished hand already shows the new hand, and ``results[i]`` holds what the old one ended with
(outcome, winner, payments, points, turns), else None.

Rewards are zero-sum points times ``reward_scale`` (docs/rules.md, "Rewards for learning"): the winner
receives what the others pay; stalemate (G8) and cut-off (G9) hands give 0. With ``match=True``
hands are dealt until the match target (I8, B6, R8) and rewards come at the match's end, as in
the environment.

``step`` checks every action against its row's mask before changing anything: an action of the
wrong shape or dtype, or an illegal action in any row, raises ``IllegalActionError`` naming the
row, the action and why, and no row changes.

``load(i, state)`` puts a chosen ``GameState`` (a duplicate deal, a guess of the hidden cards)
into slot ``i``, and ``step_rows(rows, actions)`` steps only some slots, leaving the others as
they are: the arena and the search agent's rollouts play fixed sets of hands this way, and a
slot whose hand is done waits instead of playing one nobody wants.

Backends: ``backend="python"`` is the reference engine (``rummy_env.game``), for every game.
``backend="numba"`` (every game: Indian Rummy, 2 to 6 players; Basic Rummy and römi, 2 to 4
players; hand and match mode) steps all slots in compiled kernels (``rummy_env.compiled.indian``,
``rummy_env.compiled.basic``, ``rummy_env.compiled.romi``) with the same deals, observations, masks,
rewards and results for the same seeds and actions (``tests/test_vector_compiled.py``,
``tests/test_vector_compiled_basic.py`` and ``tests/test_vector_compiled_romi.py`` step both in
lockstep); its ``state(i)`` is a new ``GameState`` rebuilt from the arrays, and ``load`` copies the
state it is given. The first process compiles a game's kernels (Indian about 7 CPU seconds, römi
about 20; Basic's few own kernels call römi's) and caches them on disk; later processes load them
in well under a second (``docs/env.md``, "Backends").
"""

from __future__ import annotations

import operator
import random
from dataclasses import dataclass

import numpy as np

from .aec_env import ENV_NAMES, MATCH_REWARDS, IllegalActionError, check_episode_options, max_hand_payment
from .encoding import ObservationEncoder, ObservationTracker, action_layout, layout_for, move_ids
from .game import DRAW, PHASE_OVER, GameState, IllegalMoveError
from .match import Match
from .ruleset import GAMES, make_ruleset

BACKENDS = ("python", "numba")

__all__ = ["VectorGame", "HandEnd", "IllegalActionError", "BACKENDS"]


@dataclass(frozen=True)
class HandEnd:
    """How one hand (or, in match mode, one match) in a slot ended."""

    outcome: str
    """``"win"``, ``"stalemate"`` (G8), ``"cut_off"`` (G9) or, in match mode, ``"match"``."""
    winner: int | None
    """The winning seat of a hand; None for a stalemate, a cut-off or a match."""
    payments: tuple[int, ...]
    """What each seat paid (a hand) or its match total (a match)."""
    points: tuple[float, ...]
    """Each seat's reward before ``reward_scale`` (zero-sum points, or the match reward)."""
    turns: int
    """Turns played in the hand (a match: hands played)."""


class VectorGame:
    """``num_envs`` hands of ``game`` stepped together; see the module docstring."""

    def __new__(cls, *args, backend: str = "python", **kwargs):
        if backend == "numba" and cls is VectorGame:
            from .compiled.vector import CompiledVectorGame  # imports numba only when asked for

            return super().__new__(CompiledVectorGame)
        return super().__new__(cls)

    def __init__(self, game: str = "indian", num_envs: int = 64, num_players: int = 2, *, seed: int = 0,
                 match: bool = False, match_reward: str = "points", max_hands: int = 100,
                 reward_scale: float = 1.0, backend: str = "python", **rule_options):
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}: expected one of {', '.join(map(repr, GAMES))}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r}: expected an int >= 1")
        if backend not in BACKENDS:
            raise ValueError(f"backend={backend!r}: expected one of {', '.join(map(repr, BACKENDS))}")
        check_episode_options(match, match_reward, max_hands, reward_scale)
        self.rules = make_ruleset(game, num_players, **rule_options)
        self.game = game
        self.name = ENV_NAMES[game]
        self.num_envs = num_envs
        self.num_players = num_players
        self.backend = backend
        self.match_mode = match
        self.match_reward = match_reward
        self.max_hands = max_hands
        self.reward_scale = float(reward_scale)
        self.max_payment = max_hand_payment(self.rules)

        layout = action_layout(game)
        self._moves = layout.moves
        self._ids = move_ids(game)
        self.num_actions = layout.num_actions
        self.observation_size = layout_for(self.rules).size
        self._encoder = ObservationEncoder(self.rules)

        n = num_envs
        self.observations = np.zeros((n, self.observation_size), np.float32)
        self.action_masks = np.zeros((n, self.num_actions), np.int8)
        self.to_act = np.zeros(n, np.int64)
        self.rewards = np.zeros((n, num_players), np.float32)
        self.terminated = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.results: list[HandEnd | None] = [None] * n
        self._mask_bytes = memoryview(self.action_masks).cast("B")  # the mask rows as bytes, to write whole rows
        self._init_slots()

    def _init_slots(self) -> None:
        """The per-slot engine: a ``GameState``, tracker and match per slot (the numba backend
        replaces this with its arrays)."""
        n, num_players = self.num_envs, self.num_players
        self._states: list[GameState | None] = [None] * n
        self._trackers = [ObservationTracker(self._encoder) for _ in range(n)]
        self._matches: list[Match | None] = [None] * n
        self._match_points: list[list[float]] = [[0.0] * num_players for _ in range(n)]
        self._legal: list[list | None] = [None] * n
        self._rngs: list[random.Random] = []
        self.seed = None

    # ------------------------------------------------------------------ reset

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal a new hand in every slot; slot ``i`` deals as the environment's ``reset(seed=seed + i)``.

        Returns ``(observations, action_masks, to_act)`` (the buffers themselves).
        """
        if seed is None:
            seed = random.randrange(2**31) if self.seed is None else self.seed + self.num_envs
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed={seed!r}: expected an int >= 0")
        self.seed = int(seed)
        self._rngs = [random.Random(self.seed + i) for i in range(self.num_envs)]
        for i in range(self.num_envs):
            self._new_episode(i)
        self.rewards.fill(0.0)
        self.terminated.fill(False)
        self.truncated.fill(False)
        self.results = [None] * self.num_envs
        return self.observations, self.action_masks, self.to_act

    def _new_episode(self, i: int) -> None:
        deal_seed = self._rngs[i].getrandbits(64)
        if self.match_mode:
            match = self._matches[i] = Match(self.rules, deal_seed)
            self._match_points[i] = [0.0] * self.num_players
            self._start_hand(i, match.deal())
        else:
            self._start_hand(i, GameState(self.rules, deal_seed))

    def _start_hand(self, i: int, state: GameState) -> None:
        self._states[i] = state
        self._trackers[i].start(state)
        self._write_row(i)

    def _write_row(self, i: int) -> None:
        state = self._states[i]
        seat = state.current
        match = self._matches[i]
        self.observations[i] = self._trackers[i].observe(state, seat, None if match is None else match.totals)
        moves = state.legal_moves()
        ids = self._ids
        mask = bytearray(self.num_actions)
        for move in moves:
            mask[ids[move]] = 1
        self._mask_bytes[i * self.num_actions:(i + 1) * self.num_actions] = mask
        self._legal[i] = moves
        self.to_act[i] = seat

    # ------------------------------------------------------------------ step

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play one action in every slot (for its seat to act).

        Returns ``(observations, action_masks, to_act, rewards, terminated, truncated)``: the
        buffers themselves, valid until the next call. ``rewards`` is zero except in rows whose
        hand (match) ended this step.
        """
        actions = self._checked(actions)
        self.rewards.fill(0.0)
        self.terminated.fill(False)
        self.truncated.fill(False)
        self.results[:] = [None] * self.num_envs
        for i, action in enumerate(actions):
            self._play_row(i, action)
        return self.observations, self.action_masks, self.to_act, self.rewards, self.terminated, self.truncated

    def _checked(self, actions) -> list[int]:
        """``actions`` as a list of ints, every one allowed by its row's mask; else an error naming the row."""
        array = np.asarray(actions)
        if array.shape != (self.num_envs,):
            raise IllegalActionError(f"actions of shape {array.shape}: expected ({self.num_envs},), one per hand")
        if array.dtype.kind not in "iu":
            raise IllegalActionError(f"actions of dtype {array.dtype}: expected integer action ids")
        values = array.tolist()
        self._refuse_illegal(range(self.num_envs), values)
        return values

    def _refuse_illegal(self, rows, values: list[int]) -> None:
        """Raise ``IllegalActionError`` for the first row whose action is out of range or masked out."""
        masks = self.action_masks
        for i, action in zip(rows, values):
            if not 0 <= action < self.num_actions:
                raise IllegalActionError(f"row {i}: action {action} is out of range: expected 0..{self.num_actions - 1}")
            if not masks[i, action]:
                state = self._states[i]
                try:
                    reason = state.why_illegal(self._moves[action])
                except Exception:  # noqa: BLE001 - the reason is a courtesy; the refusal stands
                    reason = "its mask forbids it"
                raise IllegalActionError(f"row {i}: illegal action {action} for seat {state.current}: {reason}")

    def _end_hand(self, i: int, state: GameState) -> None:
        result = state.result
        points = result.rewards
        scale = self.reward_scale
        match = self._matches[i]
        if match is None:
            self.rewards[i] = [p * scale for p in points]
            if result.outcome == "cut_off":
                self.truncated[i] = True
            else:
                self.terminated[i] = True
            self.results[i] = HandEnd(result.outcome, result.winner, tuple(result.payments),
                                      tuple(float(p) for p in points), state.turn)
            self._new_episode(i)
            return
        match.record(result)
        totals = self._match_points[i]
        for p in range(self.num_players):
            totals[p] += points[p]
        if match.is_over or match.hands_played >= self.max_hands:
            if match.is_over:
                reward = self._match_rewards(totals, match.winners)
                self.rewards[i] = [r * scale for r in reward]
                self.terminated[i] = True
            else:
                reward = [0.0] * self.num_players
                self.truncated[i] = True
            self.results[i] = HandEnd("match" if match.is_over else "cut_off", None, tuple(match.totals),
                                      tuple(reward), match.hands_played)
            self._new_episode(i)
        else:
            self._start_hand(i, match.deal())

    def _match_rewards(self, points: list[float], winners: list[int]) -> list[float]:
        n = self.num_players
        if self.match_reward == "points":
            return [float(p) for p in points]
        if len(winners) == n:
            return [0.0] * n
        return [1.0 / len(winners) if p in winners else -1.0 / (n - len(winners)) for p in range(n)]

    # ------------------------------------------------------------------ chosen hands, some rows

    def load(self, i: int, state: GameState, match: Match | None = None) -> None:
        """Play ``state`` (a hand of this game, at any point before its end) in slot ``i`` from now on.

        The slot plays the object itself, not a copy (pass ``state.clone()`` to keep yours), and
        its row shows ``state`` at once. In match mode give the ``Match`` whose current hand
        ``state`` is: its next hands are dealt from it, and the points of the match reward count
        from the load. When the hand (match) ends, the slot deals its next one as after ``reset``
        (a slot loaded before any ``reset`` deals as ``reset(seed=0)`` would).
        """
        index = self._slot(i)
        if not isinstance(state, GameState):
            raise TypeError(f"state of type {type(state).__name__}: expected a rummy_env.game.GameState")
        if state.rules != self.rules:
            raise ValueError(f"state of {state.rules.game} for {state.rules.num_players} players (its rule "
                             f"set): expected one of this VectorGame's rule set ({self.game}, {self.num_players} players)")
        if state.phase == PHASE_OVER:
            raise ValueError("state: the hand is over; load a hand that still has a move to play")
        if self.match_mode != (match is not None):
            raise ValueError("match: expected the Match of the hand in match mode (match=True) and None otherwise"
                             if self.match_mode else "match: given, but this VectorGame plays single hands (match=False)")
        if match is not None and (not isinstance(match, Match) or match.is_over):
            raise ValueError("match: expected a rummy_env.match.Match that is not over")
        if not self._rngs:
            self.seed = 0
            self._rngs = [random.Random(s) for s in range(self.num_envs)]
        self._matches[index] = match
        self._match_points[index] = [0.0] * self.num_players
        self.rewards[index] = 0.0
        self.terminated[index] = False
        self.truncated[index] = False
        self.results[index] = None
        self._start_hand(index, state)

    def step_rows(self, rows, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions[k]`` in slot ``rows[k]`` and leave every other slot as it is.

        ``rows``: distinct slot indices (any order); ``actions``: one integer action per row. The
        checks, automatic reset and returned buffers are those of ``step``: ``rewards``,
        ``terminated``, ``truncated`` and ``results`` describe this call (zero, False and None in
        rows not stepped). A bad row or action raises before any slot changes.
        """
        rows = self._checked_rows(rows)
        values = self._checked_actions(rows, actions)
        self.rewards.fill(0.0)
        self.terminated.fill(False)
        self.truncated.fill(False)
        self.results = [None] * self.num_envs
        for i, action in zip(rows, values):
            self._play_row(i, action)
        return self.observations, self.action_masks, self.to_act, self.rewards, self.terminated, self.truncated

    def _slot(self, i) -> int:
        try:
            index = operator.index(i)
        except TypeError:
            raise TypeError(f"slot {i!r}: expected an int") from None
        if not 0 <= index < self.num_envs:
            raise IndexError(f"slot {i!r}: expected 0..{self.num_envs - 1}")
        return index

    def _has_hand(self, i: int) -> bool:
        return self._states[i] is not None

    def _checked_rows(self, rows) -> list[int]:
        array = np.asarray(rows)
        if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
            raise IllegalActionError(f"rows of shape {array.shape} and dtype {array.dtype}: expected a 1-d "
                                     "sequence of slot indices")
        values = array.tolist()
        for i in values:
            if not 0 <= i < self.num_envs:
                raise IllegalActionError(f"row {i} is out of range: expected 0..{self.num_envs - 1}")
            if not self._has_hand(i):
                raise IllegalActionError(f"row {i} holds no hand yet: call reset() or load() first")
        if len(set(values)) != len(values):
            raise IllegalActionError(f"rows {values}: a slot is listed twice")
        return values

    def _checked_actions(self, rows: list[int], actions) -> list[int]:
        """``actions`` as ints, each allowed by its row's mask; else an error naming the row."""
        array = np.asarray(actions)
        if array.shape != (len(rows),):
            raise IllegalActionError(f"actions of shape {array.shape}: expected ({len(rows)},), one per row")
        if array.size and array.dtype.kind not in "iu":
            raise IllegalActionError(f"actions of dtype {array.dtype}: expected integer action ids")
        values = array.tolist()
        self._refuse_illegal(rows, values)
        return values

    def _play_row(self, i: int, action: int) -> None:
        """One checked action in slot ``i`` (``step`` and ``step_rows`` both play through it)."""
        state = self._states[i]
        move = self._moves[action]
        seat = state.current
        drawn = state.stock[-1] if move[0] == DRAW and state.stock else -1
        if state._legal is not None and state._legal is self._legal[i]:
            state._apply_unchecked(move)  # the row's mask, built from this very list, allows it
        else:
            state.apply(move)
        self._trackers[i].moved(seat, move, state, drawn)
        if state.phase == PHASE_OVER:
            self._end_hand(i, state)
        else:
            self._write_row(i)

    def match_of(self, i: int) -> Match | None:
        """The match slot ``i`` is playing (match mode), else None."""
        return self._matches[self._slot(i)]

    # ------------------------------------------------------------------ looking in

    def observe(self, i: int, seat: int) -> np.ndarray:
        """The observation of ``seat`` in slot ``i`` now (any seat, not only the one to act)."""
        index = self._observed_slot(i, seat)
        state = self._states[index]
        match = self._matches[index]
        return self._trackers[index].observe(state, seat, None if match is None else match.totals)

    def _observed_slot(self, i: int, seat: int) -> int:
        """Slot ``i`` as an index, checked with ``seat`` for ``observe``; else an error naming which."""
        index = operator.index(i)
        if not 0 <= index < self.num_envs:
            raise IndexError(f"slot {i!r}: expected 0..{self.num_envs - 1}")
        if not 0 <= seat < self.num_players:
            raise IndexError(f"seat {seat!r}: expected 0..{self.num_players - 1}")
        if not self._has_hand(index):
            raise RuntimeError("call reset() before observe()")
        return index

    def state(self, i: int) -> GameState:
        """The engine state of slot ``i`` (every hidden card: for tests and tools, not for agents)."""
        state = self._states[operator.index(i)]
        if state is None:
            raise RuntimeError("call reset() first")
        return state
