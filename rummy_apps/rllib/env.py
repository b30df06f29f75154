"""Our AEC environment as an RLlib ``MultiAgentEnv`` (turn based), registered per game.

Each ``step`` takes the action of the one agent to act and returns the observation of the next
one (the same agent while its turn lasts, ``rummy_env.aec_env``); when the hand ends, every agent
gets its last observation and its reward. Observations keep our ``{"observation",
"action_mask"}`` dict, so a masked model reads the mask from them (``rummy_apps.rllib.model``).

**Shaping** (``shaping_coef`` > 0 in the config, with ``gamma`` and ``shaping_potential``): the
potential-based shaping of our trainer (``rummy_env.shaping``, whose ``Potential`` it
uses). Each agent's decision gets ``γ Φ(s') − Φ(s)`` between its own successive decisions, where
``Φ`` is minus the agent's hand penalty by the exact solver at the start of its current turn
(Indian: I7; Basic and römi: the least deadwood, B5, R7) times ``shaping_coef × reward_scale``,
and ``Φ`` = 0 once the hand is over. The shaping terms of a hand add up to ``γ``-discounted
differences of potentials, so the best policy of the game is unchanged (Ng, Harada & Russell
1999); the reward is what RLlib's returns show, the arena gives the true results.

An action the mask forbids never reaches the rules engine: the episode ends, the offender gets
the environment's ``illegal_reward``, and every agent's last info holds ``illegal_actions`` (1)
and the message. Each env counts the actions it was given, legal and illegal;
``LegalityCallback`` reports the counts as the env runners' ``legal_actions`` and
``illegal_actions`` metrics.
"""

from __future__ import annotations

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from rummy_env.aec_env import env as make_aec_env
from rummy_env.ruleset import GAMES

ENV_IDS = {game: f"rummy_{game}" for game in GAMES}
"""The name each game is registered under with ``ray.tune.registry.register_env``."""


class RummyMultiAgentEnv(MultiAgentEnv):
    """One game of ``rummy_env.env`` for RLlib; ``config``: game, num_players, the shaping
    (``shaping_coef``, ``shaping_potential``, ``gamma``) and env options."""

    def __init__(self, config: dict | None = None):
        super().__init__()
        options = dict(config or {})
        self.game = options.pop("game", "indian")
        self.num_players = options.pop("num_players", 2)
        for key in ("illegal_action", "render_mode"):
            if key in options:
                raise ValueError(f"env option {key!r} is set by RummyMultiAgentEnv, not by the config")
        shaping_coef = float(options.pop("shaping_coef", 0.0))
        potential = options.pop("shaping_potential", "deadwood")
        self.gamma = float(options.pop("gamma", 1.0))
        self.aec = make_aec_env(self.game, self.num_players, illegal_action="terminate", **options)
        self.shaping_scale = shaping_coef * self.aec.unwrapped.reward_scale
        self.potential = None
        if self.shaping_scale:
            from rummy_env.shaping import Potential

            self.potential = Potential(self.game, self.num_players, potential)
        self.turn_potential: dict[str, float] = {}
        self.last_potential: dict[str, float] = {}
        self.agents = self.possible_agents = list(self.aec.possible_agents)
        self.observation_spaces = {a: self.aec.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self.aec.action_space(a) for a in self.possible_agents}
        self.illegal_actions = 0
        self.legal_actions = 0

    def _observe(self, agent: str) -> dict:
        seen = self.aec.observe(agent)
        return {"observation": np.array(seen["observation"]), "action_mask": np.array(seen["action_mask"])}

    def reset(self, *, seed=None, options=None):
        self.aec.reset(seed=seed)
        self.turn_potential.clear()
        self.last_potential.clear()
        agent = self.aec.agent_selection
        seen = self._observe(agent)
        self._shaping(agent, seen["observation"])
        return {agent: seen}, {}

    def _shaping(self, agent: str, observation) -> float:
        """``γ Φ(s') − Φ(s)`` for ``agent``, about to decide at ``observation`` (0 at its first decision)."""
        if self.potential is None:
            return 0.0
        if self.potential.is_draw_phase(observation):  # a new turn: the potential of the hand it starts with
            self.turn_potential[agent] = -self.potential.penalty_of(observation) * self.shaping_scale
        phi = self.turn_potential.get(agent, 0.0)
        previous = self.last_potential.get(agent)
        self.last_potential[agent] = phi
        return 0.0 if previous is None else self.gamma * phi - previous

    def step(self, action_dict):
        aec = self.aec
        agent = aec.agent_selection
        if agent not in action_dict:
            raise ValueError(f"step(): no action for {agent}, the agent to act (got {sorted(action_dict)})")
        action = int(action_dict[agent])
        mask = aec.observe(agent)["action_mask"]
        legal = 0 <= action < mask.shape[0] and mask[action] == 1
        if legal:
            self.legal_actions += 1
        else:
            self.illegal_actions += 1
        aec.step(action)  # illegal_action="terminate": the engine refuses it and ends the episode
        rewards = {a: float(r) for a, r in aec.rewards.items() if r}
        if all(aec.terminations[a] or aec.truncations[a] for a in self.possible_agents):
            truncated = legal and all(aec.truncations.values())  # the turn cap (G9); an illegal action sets both
            observations = {a: self._observe(a) for a in self.possible_agents}
            rewards = {a: float(aec.rewards.get(a, 0.0)) - self.last_potential.get(a, 0.0)  # Φ = 0 at the end
                       for a in self.possible_agents}
            done = {"illegal_actions": int(not legal)}
            if not legal:
                done["illegal_action"] = aec.infos[agent].get("illegal_action", f"action {action}")
            infos = {a: dict(done) for a in self.possible_agents}
            return observations, rewards, {"__all__": not truncated}, {"__all__": truncated}, infos
        nxt = aec.agent_selection
        seen = self._observe(nxt)
        rewards[nxt] = rewards.get(nxt, 0.0) + self._shaping(nxt, seen["observation"])
        return {nxt: seen}, rewards, {"__all__": False}, {"__all__": False}, {}


def register_games() -> dict[str, str]:
    """Register every game with RLlib (``ENV_IDS``); returns the ids."""
    for game, env_id in ENV_IDS.items():
        register_env(env_id, lambda config, game=game: RummyMultiAgentEnv({"game": game, **dict(config or {})}))
    return dict(ENV_IDS)


class LegalityCallback(RLlibCallback):
    """Reports the actions each env runner's games were given: ``legal_actions``, ``illegal_actions``."""

    def on_sample_end(self, *, env_runner=None, metrics_logger=None, **kwargs):
        legal = illegal = 0
        for sub in env_runner.env.envs:
            game = sub.unwrapped
            legal, illegal = legal + game.legal_actions, illegal + game.illegal_actions
            game.legal_actions = game.illegal_actions = 0
        metrics_logger.log_value("legal_actions", legal, reduce="lifetime_sum")
        metrics_logger.log_value("illegal_actions", illegal, reduce="lifetime_sum")
