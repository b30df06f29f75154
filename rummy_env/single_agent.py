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
  new hand. The wrapper plays one hand through the PettingZoo env (``rummy_env.env``, which
  ``rummy_env.vector`` matches step for step), since the learner's rewards, infos, illegal-action
  handling and rendering are that env's.
  A hand the opponents end before the learner's first move is dealt again.
* ``seat``: the learner's seat, or None (default) for a seeded random seat each episode.
* Rewards, termination and truncation are the learner's in the PettingZoo env (points at the end
  of the hand or match, see ``rummy_env.env``). ``illegal_action`` defaults to ``"terminate"``
  here: an illegal learner action ends the episode with ``illegal_reward`` and
  ``terminated=True`` (``"raise"`` is available too). An illegal opponent action always raises.
* An opponent that raises (or chooses an illegal action) inside ``step()`` or ``reset()`` leaves the
  episode unusable: every later ``step()`` raises ``RuntimeError`` naming the failure until
  ``reset()``, so the learner's action is never played in another seat.
* ``reset(seed=...)`` takes an int >= 0 (numpy ints too) or None; ``step()`` before ``reset()`` is a
  ``RuntimeError``.
* Every other keyword is an option of ``rummy_env.env`` (``match``, ``reward_scale``, rule options).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from .aec_env import ENV_NAMES, check_seed, raw_env, warn_reset_options

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


def _policy(opponent) -> Callable[[np.ndarray, np.ndarray], int]:
    """How the wrapper asks ``opponent`` for a move: through ``act_batch`` (a batch of one row) when
    it has one, as every ``agents.base.Agent`` does, else ``act``, else the callable itself."""
    act_batch = getattr(opponent, "act_batch", None)
    if callable(act_batch):
        def act(observation: np.ndarray, action_mask: np.ndarray):
            actions = np.asarray(act_batch(observation[None, :], action_mask[None, :]))
            if actions.shape != (1,):
                raise ValueError(f"opponent {opponent!r}: act_batch returned actions of shape {actions.shape} "
                                 "for one row: expected (1,)")
            return actions[0]
        return act
    if hasattr(opponent, "act") and callable(opponent.act):
        return opponent.act
    if callable(opponent):
        return opponent
    raise TypeError(f"opponent {opponent!r} is neither callable nor has an act(observation, action_mask) method")


class SingleAgentRummyEnv(gymnasium.Env):
    """One seat of a PettingZoo rummy env as a Gymnasium env; opponents play the other seats."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(self, game: str = "indian", num_players: int | None = None, opponents=None,
                 seat: int | None = None, render_mode: str | None = None, **options):
        if opponents is not None and isinstance(opponents, Sequence) and not isinstance(opponents, str):
            opponent_list = list(opponents)
            if num_players is None:
                num_players = len(opponent_list) + 1
            if len(opponent_list) != num_players - 1:
                raise ValueError(f"opponents: {len(opponent_list)} given for {num_players} players: expected {num_players - 1}")
        else:
            num_players = 2 if num_players is None else num_players
            opponent_list = None if opponents is None else [opponents] * (num_players - 1)
        options.setdefault("illegal_action", "terminate")
        self.aec = raw_env(game, num_players, render_mode=None, **options)
        n = num_players
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n):
            raise ValueError(f"seat={seat!r} is out of range: expected None or an int 0..{n - 1}")
        self.game = game
        self.num_players = n
        self.fixed_seat = seat
        self.render_mode = render_mode
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not supported: expected None, 'human' or 'ansi'")
        self.metadata = dict(self.metadata, name=ENV_NAMES[game])
        if opponent_list is None:
            self._random = [RandomOpponent() for _ in range(n - 1)]
            opponent_list = self._random
        else:
            self._random = [o for o in opponent_list if isinstance(o, RandomOpponent)]
        self.opponents = opponent_list
        self._policies = [_policy(o) for o in opponent_list]
        inner = self.aec.observation_space("player_0")["observation"]
        self.observation_space = spaces.Box(inner.low, inner.high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.aec.action_space("player_0").n)
        self.learner = "player_0"
        self._mask = np.zeros(self.action_space.n, np.int8)
        self._opponent_of: dict[str, Callable] = {}
        self._hands_seen = -1
        self._failure: str | None = "call reset() before step()"

    # ------------------------------------------------------------------ API

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = check_seed(seed)
        warn_reset_options(options)
        super().reset(seed=seed)
        self._failure = "the last reset() failed: call reset() again"
        rng = self.np_random
        seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(self.num_players))
        self.learner = f"player_{seat}"
        others = [f"player_{(seat + i) % self.num_players}" for i in range(1, self.num_players)]
        self._opponent_of = dict(zip(others, self._policies))
        for opponent in self._random:
            opponent.seed(int(rng.integers(2**63)))
        aec = self.aec
        for _ in range(1000):
            aec.reset(seed=int(rng.integers(2**63)))
            self._hands_seen = -1
            self._new_hand_check()
            self._play_opponents()
            if not (aec.terminations[self.learner] or aec.truncations[self.learner]):
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
        aec = self.aec
        if aec.terminations.get(self.learner, True) or aec.truncations.get(self.learner, True):
            raise RuntimeError("the episode is over: call reset()")
        aec.step(action)
        reward = aec.rewards[self.learner]
        illegal = "illegal_action" in aec.infos[self.learner]
        reward += self._play_opponents()
        obs, info = self._observation()
        terminated = bool(aec.terminations[self.learner])
        truncated = bool(aec.truncations[self.learner]) and not illegal
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (sb3-contrib MaskablePPO); none before ``reset()``."""
        if self._failure is not None and self.aec.state_ is not None:
            raise RuntimeError(f"action_masks(): {self._failure}")
        return self._mask.astype(bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        from .render import render_text, terminal_has_color

        aec = self.aec
        totals = aec.match.totals if aec.match is not None else None
        seat = int(self.learner.split("_")[1])
        text = render_text(aec.game_state, seat=seat, match_totals=totals, color=self.render_mode == "human" and terminal_has_color())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        self.aec.close()

    # ------------------------------------------------------------------ helpers

    def _new_hand_check(self) -> None:
        """Call ``reset()`` on opponents that have one when a new hand is dealt."""
        match = self.aec.match
        key = 0 if match is None else match.hands_played
        if key != self._hands_seen:
            self._hands_seen = key
            for opponent in self.opponents:
                reset = getattr(opponent, "reset", None)
                if callable(reset) and not isinstance(opponent, RandomOpponent):
                    reset()

    def _play_opponents(self) -> float:
        """Let opponents act until the learner is to act or the episode is over; the learner's reward.

        If an opponent fails, the episode is marked unusable until ``reset()`` and the error goes on.
        """
        try:
            return self._opponents_move()
        except BaseException as error:
            self._failure = (f"an opponent failed ({type(error).__name__}: {error}); the game is stopped "
                             "in its seat: call reset()")
            raise

    def _opponents_move(self) -> float:
        aec = self.aec
        learner = self.learner
        reward = 0.0
        while True:
            agent = aec.agent_selection
            if aec.terminations[agent] or aec.truncations[agent]:
                return reward
            if agent == learner:
                self._new_hand_check()
                return reward
            self._new_hand_check()
            observed = aec.observe(agent)
            mask = observed["action_mask"]
            action = self._opponent_of[agent](observed["observation"], mask)
            try:
                index = operator.index(action)
            except TypeError:
                index = -1
            if not 0 <= index < mask.size or not mask[index]:
                what = aec.describe_action(index) if 0 <= index < mask.size else f"action {action!r}"
                raise ValueError(f"opponent {agent} chose an illegal action: {what}")
            aec.step(index)
            reward += aec.rewards[learner]

    def _observation(self):
        observed = self.aec.observe(self.learner)
        self._mask = observed["action_mask"]
        info = {"action_mask": self._mask.copy(), "seat": self.learner}
        extra = self.aec.infos.get(self.learner)
        if extra:
            info.update(extra)
        return observed["observation"].copy(), info


def make_single_agent(game: str = "indian", opponents=None, **options) -> SingleAgentRummyEnv:
    """A Gymnasium env of ``game`` where ``opponents`` play the other seats (see the module doc)."""
    return SingleAgentRummyEnv(game, opponents=opponents, **options)
