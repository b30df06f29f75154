"""
# Rummy (Indian Rummy, Basic Rummy, Indiai römi)

PettingZoo AEC environments for the three games of the rule book, ``docs/rules.md``.

| Import             | `from rummy_env import env; env(game="indian", num_players=2)` |
|--------------------|------------------------------------------------------------------|
| Names              | `indian_rummy_v0`, `basic_rummy_v0`, `indian_romi_v1`            |
| Actions            | Discrete                                                         |
| Parallel API       | No (turn based)                                                  |
| Manual Control     | No                                                               |
| Agents             | `['player_0', …, 'player_{n-1}']`                                |
| Players            | Indian 2–6, Basic 2–4, römi 2–4 (default 2)                      |
| Action Shape       | (1,)                                                             |
| Action Values      | Discrete(108) Indian, Discrete(1285) Basic, Discrete(2319) römi  |
| Observation Shape  | Indian 2p (488,), Basic 2p (1391,), römi 2p (2451,)              |
| Observation Values | [-1, 2] (table melds −1 for a joker; counts 0..2; scalars 0..2)  |

One hand is one episode (``match=True`` plays a whole match). Seat 0 starts the first hand
(G6); players act in seat order and the player to act keeps acting until their turn ends (draw,
then any melds and lay-offs, then a discard), so ``agent_selection`` may stay on one agent for
several steps.

### Observation Space

``observe(agent)`` returns ``{"observation": float32 vector, "action_mask": int8 vector}``. The
vector is laid out by ``rummy_env.encoding`` (its docstring has the table);
``rummy_env.encoding.observation_layout(game, num_players)`` names its slices and
``split_observation`` cuts it up. It holds the agent's own hand, the discard top and the rest
of the pile, the just-taken card, the cut card (römi) or wild joker (Indian), the table melds
(Basic, römi), per player in seat order from the observer the cards known to be in their hand and
the cards they discarded, and the scalars phase, player to act, stock size, stock rebuilt, hand
sizes, who has opened, match scores and turn. Nothing another player could not see enters it.

#### Legal Actions Mask

``action_mask`` has one entry per action: 1 for the legal moves of the agent to act, computed
from the rules engine's ``legal_moves()``; all zeros for every other agent and once the hand is
over.

### Action Space

| ids (Indian) | ids (Basic) | ids (römi)  | action                                                    |
|--------------|-------------|-------------|-----------------------------------------------------------|
| 0            | 0           | 0           | draw the stock top                                        |
| 1            | 1           | 1           | take the discard top                                      |
| 2 + c        | 2 + c       | 2 + c       | discard card type c (0..52, ``suit*13 + rank``, 52 joker) |
| 55 + c       | –           | –           | discard c and declare (the solver arranges the rest, I5)  |
| –            | –           | 55          | take the cut card and go out (R4)                         |
| –            | 55 + t      | 56 + t      | lay meld template t (329 Basic, 373 römi)                 |
| –            | 384 + 53s+c | 429 + 53s+c | lay off c on table meld s, or swap c for its joker (R5)   |
| –            | –           | 2284 + s    | lay a joker at the low end of table meld s (R5)           |

An action the mask forbids raises ``IllegalActionError`` naming the action and the rule that
refuses it, and leaves the game as it was; ``illegal_action="terminate"`` instead ends the episode
the way PettingZoo's ``TerminateIllegalWrapper`` does: the offender gets ``illegal_reward``, the
others 0, every agent is terminated and truncated, and the offender's info has ``illegal_action``.

### Rewards

At the end of a hand (``docs/rules.md`` "Rewards for learning"), zero-sum and in points times
``reward_scale`` (default 1.0, so rewards are points): the winner receives what the others pay,
each other player minus what they pay (Indian: the I7 penalty; Basic: their hand value, doubled
with ``rummy_bonus``; römi: their hand value or 80). A stalemate (G8) ends with ``terminations``
and 0 for all; the turn cap (G9, ``max_turns``) ends with ``truncations`` and 0 for all. Every
agent's info then holds ``hand_result``: ``outcome``, ``winner`` (agent or None), ``payments``
and ``points`` per agent.

With ``match=True`` (I8, B6, R8) hands are dealt until the match target is reached, the starting
seat moving each hand, and rewards come only at the match's end: ``match_reward="points"``
(default) gives each agent the sum of its hand rewards; ``match_reward="win"`` splits +1 among
the winners and −1 among the others (all 0 when everyone ties), times ``reward_scale``. After each
hand the infos carry that hand's ``hand_result`` and the ``match_totals``; at the end also
``match_winners``. A match longer than ``max_hands`` hands is truncated with 0 rewards.

### Arguments

``env(game="indian", num_players=2, render_mode=None, *, match=False, match_reward="points",
max_hands=100, reward_scale=1.0, illegal_action="raise", illegal_reward=None, **rule_options)``

* ``rule_options``: the game's options in ``docs/rules.md`` (``wild_joker``, ``printed_jokers``,
  ``penalty_cap``, ``rummy_bonus``, ``match_target``, ``max_turns``); a bad one is an error naming it.
* ``illegal_reward``: default minus the most a player can pay in one hand, times
  ``reward_scale`` (Indian 130 or ``penalty_cap``; Basic 10 × hand size, doubled with
  ``rummy_bonus``; römi 130), or −1 with ``match_reward="win"``.
* ``render_mode``: ``"ansi"`` (``render()`` returns the text) or ``"human"`` (prints it after
  every step).

``reset(seed=s)`` deals the same hands for the same ``s`` (an int >= 0, numpy ints too); later
resets without a seed continue from it. ``reset`` uses no ``options`` and warns when given some
(rule options go to ``env``).

### Errors

Bad arguments raise ``ValueError`` naming them (an illegal action raises its subclass
``IllegalActionError``) and change nothing: a bad option, seed, action (also
``True``/``False``) or agent name. Calls out of order raise ``RuntimeError``: ``observe``,
``last``, ``step`` or ``render`` before ``reset()``, and ``step``/``last`` once every agent is
done. ``observe`` hands out read-only arrays: copy one to change it.

### Version History

* v0: first release.
* römi v1 (``indian_romi_v1``): rule book R4 and R5 revised. The discard top taken after the
  first turn, and a joker taken by a swap, may reach the table by any play of that turn, not
  only the next; a joker laid off on a run open at both ends may stand at either end, so the
  action space gains 35 "lay a joker at the low end of table meld s" actions (Discrete(2319));
  the ``must_place`` plane counts the cards owed to the table (jokers up to 2).
"""

from __future__ import annotations

import operator
import random

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .encoding import ObservationEncoder, action_layout, layout_for
from .episode import (
    ILLEGAL_ACTION_MODES, MATCH_REWARDS, EpisodeOptions, HandPlay, IllegalActionError, check_illegal_options,
    check_seed, illegal_action_message, settle,
)
from .game import PHASE_OVER, GameState, IllegalMoveError
from .games import by_game
from .match import Match
from .ruleset import make_ruleset

__all__ = ["ENV_NAMES", "ILLEGAL_ACTION_MODES", "MATCH_REWARDS", "IllegalActionError", "check_seed", "env",
           "raw_env", "warn_reset_options"]

_frombuffer = np.frombuffer
_INT8 = np.dtype(np.int8)

ENV_NAMES = by_game("env_name")
"""``metadata["name"]`` per game (``GameSpec.env_name``); the suffix goes up with any change that
affects learning."""

_NO_MASK_BYTES: dict[int, bytes] = {}


def env(game: str = "indian", num_players: int = 2, render_mode: str | None = None, **options) -> raw_env:
    """The environment of ``game``: order and legality are checked inside, with no wrappers."""
    return raw_env(game, num_players, render_mode, **options)


def warn_reset_options(options) -> None:
    """``reset(options=...)`` uses none; warn, naming them, rather than ignore them silently.

    A warning, not an error: PettingZoo's ``api_test`` passes options that an env may ignore.
    """
    if options is None or (isinstance(options, dict) and not options):
        return
    names = ", ".join(map(repr, options)) if isinstance(options, dict) else repr(options)
    gymnasium.logger.warn(f"reset(options=...) uses no options and ignored {names}: rule and env options "
                          "are keywords of env(...)")


class raw_env(AECEnv, EzPickle):
    """PettingZoo AEC environment of one rummy game; see the module docstring for the tables."""

    metadata = {"render_modes": ["human", "ansi"], "name": "rummy_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, game: str = "indian", num_players: int = 2, render_mode: str | None = None, *,
                 match: bool = False, match_reward: str = "points", max_hands: int = 100,
                 reward_scale: float = 1.0, illegal_action: str = "raise", illegal_reward: float | None = None,
                 **rule_options):
        EzPickle.__init__(self, game, num_players, render_mode, match=match, match_reward=match_reward,
                          max_hands=max_hands, reward_scale=reward_scale, illegal_action=illegal_action,
                          illegal_reward=illegal_reward, **rule_options)
        super().__init__()
        self.rules = make_ruleset(game, num_players, **rule_options)  # an unknown game is an error naming it
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not supported: expected None, 'human' or 'ansi'")
        check_illegal_options(illegal_action, illegal_reward)
        self.options = EpisodeOptions(match, match_reward, max_hands, reward_scale)
        self.metadata = dict(self.metadata, name=self.rules.spec.env_name)
        self.game = game
        self.render_mode = render_mode
        self.match_mode = match
        self.match_reward = match_reward
        self.max_hands = max_hands
        self.reward_scale = self.options.reward_scale
        self.illegal_action = illegal_action
        if illegal_reward is None:
            illegal_reward = self.options.default_illegal_reward(self.rules.max_hand_payment)
        self.illegal_reward = float(illegal_reward)

        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agents = self.possible_agents[:]
        self._layout = action_layout(game)
        self._num_actions = self._layout.num_actions
        self._hand = HandPlay(self._layout, ObservationEncoder(self.rules))
        obs_layout = layout_for(self.rules)
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(obs_layout.low, obs_layout.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self._num_actions,), dtype=np.int8),
            })
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(self._num_actions) for agent in self.possible_agents}
        self.state_: GameState | None = None
        self._observed = None
        self._version = 0
        self.match: Match | None = None
        self._points: list[float] = [0.0] * num_players
        self._rng: random.Random | None = None
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new hand (or start a new match); the same ``seed`` deals the same cards (G10)."""
        seed = check_seed(seed)
        warn_reset_options(options)
        if seed is not None or self._rng is None:
            self._rng = random.Random(seed)
        deal_seed = self._rng.getrandbits(64)
        if self.match_mode:
            self.match = Match(self.rules, deal_seed)
            self._points = [0.0] * self.rules.num_players
            state = self.match.deal()
        else:
            self.match = None
            state = GameState(self.rules, deal_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._start_hand(state)
        self._skip_agent_selection = None

    def _start_hand(self, state: GameState) -> None:
        self.state_ = state
        self.agent_selection = self.possible_agents[state.current]
        self._hand.start(state)
        self._observed = None
        self._version += 1

    # ------------------------------------------------------------------ observe

    def observe(self, agent):
        """``{"observation", "action_mask"}`` for ``agent`` (the mask is zero unless it is to act).

        The arrays are read-only (later calls may hand out the same ones): copy one to change it.
        """
        cached = self._observed
        if cached is not None and cached[0] == agent and cached[1] == self._version:
            return dict(cached[2])
        state = self.state_
        if state is None:
            raise RuntimeError("call reset() before observe()")
        seat = self._seat.get(agent)
        if seat is None:
            raise ValueError(f"observe({agent!r}): no such agent: expected one of {', '.join(self.possible_agents)}")
        match = self.match
        obs = self._hand.observe(seat, None if match is None else match.totals)
        obs.flags.writeable = False
        if (seat == state.current and agent in self.terminations
                and not (self.terminations[agent] or self.truncations[agent])):
            mask = self._hand.mask()
        else:
            mask = (_NO_MASK_BYTES.get(self._num_actions)
                    or _NO_MASK_BYTES.setdefault(self._num_actions, bytes(self._num_actions)))
        # numpy arrays over bytes are read-only
        result = {"observation": obs, "action_mask": _frombuffer(mask, _INT8)}
        self._observed = (agent, self._version, result)
        return dict(result)

    def last(self, observe: bool = True):
        """(observation, cumulative reward, terminated, truncated, info) of ``agent_selection``."""
        self._check_playing("last")
        return super().last(observe)

    def _check_playing(self, call: str) -> None:
        if self.state_ is None:
            raise RuntimeError(f"call reset() before {call}()")
        if not self.agents:
            raise RuntimeError(f"{call}(): every agent is done (the hand or match is over): call reset()")

    # ------------------------------------------------------------------ step

    def step(self, action) -> None:
        """Play ``action`` for ``agent_selection`` (None for an agent that is done)."""
        self._check_playing("step")
        state = self.state_
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            index = -1 if isinstance(action, (bool, np.bool_)) else operator.index(action)
        except TypeError:
            index = -1
        if not 0 <= index < self._num_actions:
            self._illegal(agent, action, f"illegal action {action!r} for {agent}: "
                                         f"expected an int in 0..{self._num_actions - 1} ({self.metadata['name']})")
            return
        try:
            self._hand.play(index)
        except IllegalMoveError as error:
            self._illegal(agent, index, illegal_action_message(index, agent, str(error)))
            return
        self._version += 1
        self._cumulative_rewards[agent] = 0.0
        if state.phase == PHASE_OVER:
            self._end_hand(state)
        else:
            self.agent_selection = self.possible_agents[state.current]
        if self.render_mode == "human":
            self.render()

    def _illegal(self, agent: str, action, message: str) -> None:
        if self.illegal_action == "raise":
            raise IllegalActionError(message)
        gymnasium.logger.warn(message)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = self.illegal_reward
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.infos[agent] = dict(self.infos[agent], illegal_action=message)
        self._accumulate_rewards()
        self._version += 1

    def _end_hand(self, state: GameState) -> None:
        agents = self.possible_agents
        settled = settle(state.result, state.turn, self.match, self._points, self.options)
        info = settled.info(agents)
        self.infos = {agent: dict(info) for agent in agents}
        if settled.match is not None and not settled.episode_over:
            self._start_hand(settled.match.deal())
            return
        if settled.terminated or settled.match is None:
            self.rewards = {agent: settled.rewards[p] for p, agent in enumerate(agents)}
        if settled.terminated:
            self.terminations = dict.fromkeys(agents, True)
        else:
            self.truncations = dict.fromkeys(agents, True)
        if settled.terminated or settled.match is None:
            self._accumulate_rewards()

    # ------------------------------------------------------------------ render, close

    def render(self):
        """The acting player's view as text (``"ansi"`` returns it, ``"human"`` prints it)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.state_ is None:
            raise RuntimeError("call reset() before render()")
        from .render import render_text, terminal_has_color

        totals = self.match.totals if self.match is not None else None
        text = render_text(self.state_, seat=self._seat[self.agent_selection], match_totals=totals,
                           color=self.render_mode == "human" and terminal_has_color())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ helpers for users

    @property
    def game_state(self) -> GameState:
        """The engine state of the hand being played (all hidden cards: not for agents)."""
        if self.state_ is None:
            raise RuntimeError("call reset() first")
        return self.state_

    def describe_action(self, action: int) -> str:
        """``action`` in words for the current state, e.g. ``"action 7 (discard 6s)"``."""
        index = -1 if isinstance(action, (bool, np.bool_)) else _index_or_none(action)
        if index is None or not 0 <= index < self._num_actions:
            raise ValueError(f"describe_action({action!r}): expected an action id, "
                             f"an int in 0..{self._num_actions - 1} ({self.metadata['name']})")
        return f"action {index} {self.game_state.describe_move(self._layout.moves[index])}"


def _index_or_none(value) -> int | None:
    try:
        return operator.index(value)
    except TypeError:
        return None
