"""``VectorGame`` on the Python engine: the batched loop's buffers, checks and bookkeeping.

The public module is ``rummy_env.vector`` (its docstring has the buffers' table); this one holds
the class so that the compiled backend (``rummy_env.compiled.vector``) can build on it without an
import circle: ``rummy_env.vector`` imports both and registers the compiled class in
``BACKEND_CLASSES``.

Each slot plays through the one play loop of ``rummy_env.episode``: a ``HandPlay`` per slot
(apply, observe, mask), and ``settle`` when a hand ends. A subclass that plays the slots another
way (the numba backend) overrides the per-slot hooks ``_init_slots``, ``_start_hand``,
``_new_episode``, ``_has_hand``, ``observe``, ``state``, ``step`` and ``step_rows``, and reports
each finished hand to ``_end_hand``.
"""

from __future__ import annotations

import operator
import random

import numpy as np

from .encoding import ObservationEncoder, action_layout, layout_for
from .episode import EpisodeOptions, HandEnd, HandPlay, IllegalActionError, Settlement, settle
from .game import PHASE_OVER, GameState
from .match import Match
from .ruleset import make_ruleset

BACKENDS = ("python", "numba")

BACKEND_CLASSES: dict[str, type] = {}
"""Backend name -> the ``VectorGame`` subclass that plays it (``rummy_env.vector`` registers the
numba one)."""

__all__ = ["BACKENDS", "BACKEND_CLASSES", "HandEnd", "IllegalActionError", "VectorGame"]


class VectorGame:
    """``num_envs`` hands of ``game`` stepped together; see ``rummy_env.vector``."""

    def __new__(cls, *args, backend: str = "python", **kwargs):
        if cls is VectorGame and backend != "python" and backend in BACKEND_CLASSES:
            return super().__new__(BACKEND_CLASSES[backend])
        return super().__new__(cls)

    def __init__(self, game: str = "indian", num_envs: int = 64, num_players: int = 2, *, seed: int = 0,
                 match: bool = False, match_reward: str = "points", max_hands: int = 100,
                 reward_scale: float = 1.0, backend: str = "python", **rule_options):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r}: expected an int >= 1")
        if backend not in BACKENDS:
            raise ValueError(f"backend={backend!r}: expected one of {', '.join(map(repr, BACKENDS))}")
        if backend != "python" and type(self) is VectorGame:
            raise ValueError(f"backend={backend!r}: import rummy_env.vector, which registers it")
        self.options = EpisodeOptions(match, match_reward, max_hands, reward_scale)
        self.rules = make_ruleset(game, num_players, **rule_options)  # an unknown game is an error naming it
        self.game = game
        self.name = self.rules.spec.env_name
        self.num_envs = num_envs
        self.num_players = num_players
        self.backend = backend
        self.match_mode = match
        self.match_reward = match_reward
        self.max_hands = max_hands
        self.reward_scale = self.options.reward_scale
        self.max_payment = self.rules.max_hand_payment

        self._layout = layout = action_layout(game)
        self._moves = layout.moves
        self._ids = layout.ids
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
        self.settlements: list[Settlement | None] = [None] * n
        """Per slot, how the hand that ended in the last call ended (``episode.Settlement``: its
        result, rewards and infos), else None."""
        self._mask_bytes = memoryview(self.action_masks).cast("B")  # the mask rows as bytes, to write whole rows
        self._init_slots()

    def _init_slots(self) -> None:
        """The per-slot engine: a ``HandPlay`` and a match per slot (the numba backend replaces
        this with its arrays)."""
        n, num_players = self.num_envs, self.num_players
        self._hands = [HandPlay(self._layout, self._encoder) for _ in range(n)]
        self._matches: list[Match | None] = [None] * n
        self._match_points: list[list[float]] = [[0.0] * num_players for _ in range(n)]
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
        self._clear()
        self.results = [None] * self.num_envs
        self.settlements = [None] * self.num_envs
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
        self._hands[i].start(state)
        self._write_row(i)

    def _write_row(self, i: int) -> None:
        hand = self._hands[i]
        seat = hand.state.current
        match = self._matches[i]
        self.observations[i] = hand.observe(seat, None if match is None else match.totals)
        self._mask_bytes[i * self.num_actions:(i + 1) * self.num_actions] = hand.mask()
        self.to_act[i] = seat

    def _clear(self) -> None:
        self.rewards.fill(0.0)
        self.terminated.fill(False)
        self.truncated.fill(False)

    # ------------------------------------------------------------------ step

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play one action in every slot (for its seat to act).

        Returns ``(observations, action_masks, to_act, rewards, terminated, truncated)``: the
        buffers themselves, valid until the next call. ``rewards`` is zero except in rows whose
        hand (match) ended this step.
        """
        actions = self._checked(actions)
        self._clear()
        self.results[:] = [None] * self.num_envs
        self.settlements[:] = [None] * self.num_envs
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
                raise IllegalActionError(f"row {i}: action {action} is out of range: "
                                         f"expected 0..{self.num_actions - 1}")
            if not masks[i, action]:
                self._refuse(i, action)

    def _refuse(self, i: int, action: int) -> None:
        """Raise ``IllegalActionError`` for the masked-out ``action`` in row ``i``, with the rule's reason."""
        state = self.state(i)
        try:
            reason = state.why_illegal(self._moves[action])
        except Exception:  # noqa: BLE001 - the reason is a courtesy; the refusal stands
            reason = "its mask forbids it"
        raise IllegalActionError(f"row {i}: illegal action {action} for seat {state.current}: {reason}")

    def _end_hand(self, i: int, ended) -> None:
        """The hand in slot ``i`` ended (``ended``: it, or anything with its ``result`` and ``turn``):
        its rewards and results (``episode.settle``), then the slot's next hand or episode."""
        settled = settle(ended.result, ended.turn, self._matches[i], self._match_points[i], self.options)
        self.settlements[i] = settled
        if settled.episode_over or settled.match is None:
            self.rewards[i] = settled.rewards
            self.terminated[i] = settled.terminated
            self.truncated[i] = settled.truncated
            self.results[i] = settled.end
            self._new_episode(i)
        else:
            self._start_hand(i, settled.match.deal())

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
                             f"set): expected one of this VectorGame's rule set ({self.game}, "
                             f"{self.num_players} players)")
        if state.phase == PHASE_OVER:
            raise ValueError("state: the hand is over; load a hand that still has a move to play")
        if self.match_mode != (match is not None):
            raise ValueError("match: expected the Match of the hand in match mode (match=True) and None otherwise"
                             if self.match_mode
                             else "match: given, but this VectorGame plays single hands (match=False)")
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
        self.settlements[index] = None
        self._start_hand(index, state)

    def step_rows(self, rows, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions[k]`` in slot ``rows[k]`` and leave every other slot as it is.

        ``rows``: distinct slot indices (any order); ``actions``: one integer action per row. The
        checks, automatic reset and returned buffers are those of ``step``: ``rewards``,
        ``terminated``, ``truncated``, ``results`` and ``settlements`` describe this call (zero,
        False and None in rows not stepped). A bad row or action raises before any slot changes.
        """
        rows = self._checked_rows(rows)
        values = self._checked_actions(rows, actions)
        self._clear()
        self.results = [None] * self.num_envs
        self.settlements = [None] * self.num_envs
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
        return self._hands[i].state is not None

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
        hand = self._hands[i]
        hand.play(action)
        if hand.state.phase == PHASE_OVER:
            self._end_hand(i, hand.state)
        else:
            self._write_row(i)

    def match_of(self, i: int) -> Match | None:
        """The match slot ``i`` is playing (match mode), else None."""
        return self._matches[self._slot(i)]

    # ------------------------------------------------------------------ looking in

    def observe(self, i: int, seat: int) -> np.ndarray:
        """The observation of ``seat`` in slot ``i`` now (any seat, not only the one to act)."""
        index = self._observed_slot(i, seat)
        match = self._matches[index]
        return self._hands[index].observe(seat, None if match is None else match.totals)

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
        state = self._hands[operator.index(i)].state
        if state is None:
            raise RuntimeError("call reset() first")
        return state
