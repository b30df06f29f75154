"""A Gymnasium single-agent view of a rummy game: the other seats are played by opponents.

    from rummy_env import make_single_agent
    env = make_single_agent("basic", opponents=[my_agent], seat=None)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))

* Observation: the learner's float32 vector of ``rummy_env.encoding`` (a ``Box``); action: the
  ``Discrete`` of the PettingZoo env. ``action_masks()`` returns the legal actions as booleans
  (sb3-contrib ``MaskablePPO``'s convention) and ``info["action_mask"]`` holds the same as int8.
* Opponents: ``None`` (uniformly random legal moves, seeded from ``reset(seed=...)``), one
  opponent for every other seat (the same object plays them all), or a list with one per other
  seat in playing order from the learner (the first plays right after the learner). An opponent
  is an agent with ``act_batch(observations, masks)`` (every ``agents.base.Agent``; it is asked
  for one row at a time), an object with ``act(observation, action_mask)``, or a callable
  ``(observation, action_mask) -> action``; if it also has ``reset()``, that is called at every
  new hand. Opponents get read-only copies of their observation and mask.
* Play: every move, the learner's and the opponents', is played through one slot of
  ``rummy_env.vector.VectorGame`` (``num_envs=1``), the batched core the arena, the search
  agent's rollouts and the trainer play through. The learner's observations, masks, rewards,
  termination, truncation and infos are those of the PettingZoo env (``rummy_env.env``) for the
  same seeds and actions: ``tests/test_single_agent_lockstep.py`` steps this wrapper and a
  reference loop over the PettingZoo env side by side in all three games, hand and match mode.
  A hand the opponents end before the learner's first move is dealt again.
* ``seat``: the learner's seat, or None (default) for a seeded random seat each episode.
* Rewards, termination and truncation are the learner's in the PettingZoo env: zero-sum points
  times ``reward_scale`` at the end of the hand (``docs/rules.md``, "Rewards for learning"), or
  with ``match=True`` at the end of the match (I8, B6, R8). A stalemate hand (G8) terminates and a
  cut-off one (G9) truncates, both with 0; a match truncates with 0 after ``max_hands`` hands.
  When a hand ends the info holds its ``hand_result`` (``outcome``, ``winner``, ``payments``,
  ``points``); in a match every later step holds the last ended hand's ``hand_result`` with
  ``match_totals`` and ``hands_played``, and the match's end also ``match_winners``
  (``docs/env.md``, "Rewards"). The observation of the step that ends the episode shows the last
  position of its last hand, as the PettingZoo env's does.
* ``illegal_action`` defaults to ``"terminate"`` here: an illegal learner action (masked out, out
  of range, not an int, or a bool) ends the episode with ``illegal_reward`` (default minus the
  most a player can pay in one hand, times ``reward_scale``; -1 with ``match_reward="win"``),
  ``terminated=True``, ``truncated=False`` and the reason in ``info["illegal_action"]``.
  ``"raise"`` raises ``IllegalActionError`` instead and plays nothing. An illegal opponent action
  always raises ``ValueError``.
* An opponent that raises (or chooses an illegal action) inside ``step()`` or ``reset()`` leaves the
  episode unusable: every later ``step()`` raises ``RuntimeError`` naming the failure until
  ``reset()``, so the learner's action is never played in another seat; ``game_state`` shows the
  hand stopped in the opponent's seat.
* ``reset(seed=...)`` takes an int >= 0 (numpy ints too) or None; ``step()`` before ``reset()`` is a
  ``RuntimeError``.
* ``render_mode``: ``"ansi"`` (``render()`` returns the learner's view as text) or ``"human"``
  (prints it after every ``step()``).
* Every other keyword is an option of ``rummy_env.env`` (``match``, ``match_reward``,
  ``max_hands``, ``reward_scale``, ``illegal_reward``, rule options); a bad one is a
  ``ValueError`` naming it. ``backend=`` is refused: the wrapper keeps the ``GameState`` object
  its slot played for the final observation and ``render()``, which only the python core hands
  out (the numba core's ``state(i)`` is a copy, and its slot holds the next hand by then).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from .aec_env import warn_reset_options
from .encoding import ObservationEncoder, action_layout, layout_for
from .episode import IllegalActionError, check_illegal_options, check_seed, illegal_action_message
from .game import PHASE_OVER, GameState
from .games import GAME_SPECS
from .ruleset import make_ruleset
from .vector import VectorGame


class RandomOpponent:
    """Plays a uniformly random legal action, from its own seeded generator."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the generator from ``seed``."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomOpponent was asked to act with an all-zero action mask")
        return int(legal[self.rng.integers(legal.size)])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, drawn row after row as ``act`` would draw them."""
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)


def _policy(opponent) -> Callable[[np.ndarray, np.ndarray], object]:
    """How the wrapper asks ``opponent`` for a move, given one row of observations and masks (two
    arrays of shape (1, n)): through ``act_batch`` when it has one, as every ``agents.base.Agent``
    does, else ``act``, else the callable itself (both with the row as 1-d arrays)."""
    act_batch = getattr(opponent, "act_batch", None)
    if callable(act_batch):
        def act(observations: np.ndarray, masks: np.ndarray):
            actions = np.asarray(act_batch(observations, masks))
            if actions.shape != (1,):
                raise ValueError(f"opponent {opponent!r}: act_batch returned actions of shape {actions.shape} "
                                 "for one row: expected (1,)")
            return actions[0]
        return act
    if hasattr(opponent, "act") and callable(opponent.act):
        method = opponent.act
    elif callable(opponent):
        method = opponent
    else:
        raise TypeError(f"opponent {opponent!r} is neither callable nor has an act(observation, action_mask) method")

    def act_one(observations: np.ndarray, masks: np.ndarray):
        return method(observations[0], masks[0])
    return act_one


class SingleAgentRummyEnv(gymnasium.Env):
    """One seat of a rummy game as a Gymnasium env; opponents play the other seats (module doc)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(self, game: str = "indian", num_players: int | None = None, opponents=None,
                 seat: int | None = None, render_mode: str | None = None, *, illegal_action: str = "terminate",
                 illegal_reward: float | None = None, **options):
        if opponents is not None and isinstance(opponents, Sequence) and not isinstance(opponents, str):
            opponent_list = list(opponents)
            if num_players is None:
                num_players = len(opponent_list) + 1
            if len(opponent_list) != num_players - 1:
                raise ValueError(f"opponents: {len(opponent_list)} given for {num_players} players: "
                                 f"expected {num_players - 1}")
        else:
            num_players = 2 if num_players is None else num_players
            opponent_list = None if opponents is None else [opponents] * (num_players - 1)
        # a keyword of VectorGame, but no option of rummy_env.env
        if "seed" in options and isinstance(game, str) and game in GAME_SPECS:
            make_ruleset(game, num_players, **options)  # refuses it, naming it, as rummy_env.env does
        if "backend" in options:
            raise ValueError(f"option backend={options['backend']!r}: the single-agent wrapper plays on the "
                             "python core only (docs/env.md, \"Single-agent (Gymnasium)\")")
        # the game, rule and episode options are checked (and named when bad) by the core itself
        self.vector = VectorGame(game, 1, num_players, **options)
        check_illegal_options(illegal_action, illegal_reward)
        vector = self.vector
        if illegal_reward is None:  # as rummy_env.env's default
            illegal_reward = vector.options.default_illegal_reward(vector.max_payment)
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        n = num_players
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n):
            raise ValueError(f"seat={seat!r} is out of range: expected None or an int 0..{n - 1}")
        self.game = game
        self.num_players = n
        self.fixed_seat = seat
        self.render_mode = render_mode
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not supported: expected None, 'human' or 'ansi'")
        self.metadata = dict(self.metadata, name=vector.name)
        if opponent_list is None:
            self._random = [RandomOpponent() for _ in range(n - 1)]
            opponent_list = self._random
        else:
            self._random = [o for o in opponent_list if isinstance(o, RandomOpponent)]
        self.opponents = opponent_list
        self._policies = [_policy(o) for o in opponent_list]
        layout = layout_for(vector.rules)
        self.observation_space = spaces.Box(layout.low, layout.high, dtype=np.float32)
        self.action_space = spaces.Discrete(vector.num_actions)
        self._moves = action_layout(game).moves
        self._encoder = ObservationEncoder(vector.rules)  # the observation of a hand that has ended
        self._action = np.zeros(1, np.int64)
        self.learner = "player_0"
        self._agents = [f"player_{p}" for p in range(n)]
        self._seat = 0
        self._opponent_at: list[Callable | None] = [None] * n
        self._mask = np.zeros(self.action_space.n, np.int8)
        self._state: GameState | None = None  # the hand being played, or the last one of an ended episode
        self._match = None
        self._info: dict = {}  # the learner's info of the PettingZoo env (hand_result, match_totals, ...)
        self._over = True
        self._hands_seen = -1
        self._failure: str | None = "call reset() before step()"

    # ------------------------------------------------------------------ API

    @property
    def game_state(self) -> GameState:
        """The engine state of the hand being played, or of the last hand of an ended episode (all
        hidden cards: for tests and tools, not for agents)."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = check_seed(seed)
        warn_reset_options(options)
        super().reset(seed=seed)
        self._failure = "the last reset() failed: call reset() again"
        rng = self.np_random
        n = self.num_players
        seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(n))
        self._seat = seat
        self.learner = f"player_{seat}"
        self._opponent_at = [None] * n
        for i, policy in enumerate(self._policies, start=1):
            self._opponent_at[(seat + i) % n] = policy
        for opponent in self._random:
            opponent.seed(int(rng.integers(2**63)))
        for _ in range(1000):
            self._deal(int(rng.integers(2**63)))
            self._new_hand_check()
            self._play_opponents()
            if not self._over:
                break
            # The opponents ended the hand before the learner's first move (Basic allows going out
            # on the first turn): deal again, so that every episode has a decision in it.
        else:
            raise RuntimeError("1000 deals in a row ended before the learner could act")
        self._failure = None
        return self._observation()

    def step(self, action):
        if self._failure is not None:
            raise RuntimeError(f"step(): {self._failure}")
        if self._over:
            raise RuntimeError("the episode is over: call reset()")
        message = self._refusal(action)
        if message is not None:
            if self.illegal_action == "raise":
                raise IllegalActionError(message)
            # as rummy_env.env's illegal_action="terminate" (PettingZoo's TerminateIllegalWrapper)
            gymnasium.logger.warn(message)
            self._over = True
            self._info = dict(self._info, illegal_action=message)
            reward, terminated, truncated = self.illegal_reward, True, False
        else:
            reward, terminated, truncated = self._play(operator.index(action))
            if not self._over:
                reward, terminated, truncated = self._play_opponents()
        obs, info = self._observation()
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (sb3-contrib MaskablePPO); none before ``reset()``."""
        if self._failure is not None and self._state is not None:
            raise RuntimeError(f"action_masks(): {self._failure}")
        return self._mask.astype(bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        from .render import render_text, terminal_has_color

        totals = self._match.totals if self._match is not None else None
        text = render_text(self.game_state, seat=self._seat, match_totals=totals,
                           color=self.render_mode == "human" and terminal_has_color())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

    # ------------------------------------------------------------------ helpers

    def _deal(self, seed: int) -> None:
        """A new episode in the core's slot, dealt as ``rummy_env.env``'s ``reset(seed=seed)``."""
        vector = self.vector
        vector.reset(seed=seed)
        self._state = vector.state(0)  # the python core plays this very object
        self._match = vector.match_of(0)
        self._info = {}
        self._over = False
        self._hands_seen = -1

    def _new_hand_check(self) -> None:
        """Call ``reset()`` on opponents that have one when a new hand is dealt."""
        match = self._match
        key = 0 if match is None else match.hands_played
        if key != self._hands_seen:
            self._hands_seen = key
            for opponent in self.opponents:
                reset = getattr(opponent, "reset", None)
                if callable(reset) and not isinstance(opponent, RandomOpponent):
                    reset()

    def _refusal(self, action) -> str | None:
        """Why the learner may not play ``action`` now (the PettingZoo env's message), or None."""
        n = self.vector.num_actions
        try:
            index = -1 if isinstance(action, (bool, np.bool_)) else operator.index(action)
        except TypeError:
            index = -1
        if not 0 <= index < n:
            return (f"illegal action {action!r} for {self.learner}: expected an int in 0..{n - 1} "
                    f"({self.metadata['name']})")
        if self._mask[index]:
            return None
        return illegal_action_message(index, self.learner, self._state.why_illegal(self._moves[index]))

    def _play(self, index: int) -> tuple[float, bool, bool]:
        """Play the checked action ``index`` for the seat to act; (the learner's reward, terminated,
        truncated). Keeps ``_state``, ``_match``, ``_info`` and ``_over`` as the PettingZoo env would."""
        state, vector = self._state, self.vector
        self._action[0] = index
        vector.step(self._action)
        if state.phase != PHASE_OVER:
            return 0.0, False, False
        # The hand ended: the core has already dealt the next hand (or episode) in the slot; keep
        # the ended one, as the PettingZoo env shows it, and its result in the infos.
        settled = vector.settlements[0]
        self._info = settled.info(self._agents)
        if settled.episode_over:
            self._over = True
            return settled.rewards[self._seat], settled.terminated, settled.truncated
        self._state = vector.state(0)  # the match's next hand
        return 0.0, False, False

    def _play_opponents(self) -> tuple[float, bool, bool]:
        """Let opponents act until the learner is to act or the episode is over; (the learner's
        reward, terminated, truncated) from those moves.

        If an opponent fails, the episode is marked unusable until ``reset()`` and the error goes on.
        """
        try:
            return self._opponents_move()
        except BaseException as error:
            self._failure = (f"an opponent failed ({type(error).__name__}: {error}); the game is stopped "
                             "in its seat: call reset()")
            raise

    def _opponents_move(self) -> tuple[float, bool, bool]:
        vector = self.vector
        outcome = (0.0, False, False)
        learner = self._seat
        n = vector.num_actions
        while not self._over:
            self._new_hand_check()
            seat = int(vector.to_act[0])
            if seat == learner:
                break
            observations = vector.observations[0:1].copy()
            masks = vector.action_masks[0:1].copy()
            observations.flags.writeable = False
            masks.flags.writeable = False
            action = self._opponent_at[seat](observations, masks)
            try:
                index = operator.index(action)
            except TypeError:
                index = -1
            if not 0 <= index < n or not masks[0, index]:
                what = (f"action {index} {self._state.describe_move(self._moves[index])}" if 0 <= index < n
                        else f"action {action!r}")
                raise ValueError(f"opponent player_{seat} chose an illegal action: {what}")
            outcome = self._play(index)
        return outcome

    def _observation(self):
        vector = self.vector
        if not self._over:
            observation = vector.observations[0].copy()
            self._mask = vector.action_masks[0].copy()
        else:
            if self._state.phase == PHASE_OVER:  # the hand ended: its last position, as the learner sees it
                match = self._match
                observation = self._encoder.encode(self._state, self._seat, None if match is None else match.totals)
            else:  # an illegal action ended the episode where it stands: the core's row still shows it
                observation = vector.observations[0].copy()
            self._mask = np.zeros(self.action_space.n, np.int8)
        info = {"action_mask": self._mask.copy(), "seat": self.learner}
        info.update(self._info)
        return observation, info


def make_single_agent(game: str = "indian", opponents=None, **options) -> SingleAgentRummyEnv:
    """A Gymnasium env of ``game`` where ``opponents`` play the other seats (see the module doc)."""
    return SingleAgentRummyEnv(game, opponents=opponents, **options)
