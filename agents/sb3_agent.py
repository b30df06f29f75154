"""A Stable-Baselines3 (sb3-contrib) ``MaskablePPO`` model as an arena agent: ``sb3:PATH.zip``.

Train on the Gymnasium wrapper, save, and benchmark against the project's agents::

    from sb3_contrib import MaskablePPO
    from rummy_env import make_single_agent
    model = MaskablePPO("MlpPolicy", make_single_agent("indian"), seed=0).learn(100_000)
    model.save("indian_ppo.zip")
    # python -m agents.arena --game indian --agents sb3:indian_ppo.zip rule

Loading checks the saved observation space (a ``Box`` of the game's observation size for the
player count, ``rummy_env.encoding.observation_size``) and action space (``Discrete`` of the
game's action count) and fails with an ``AgentError`` naming the file and the mismatch (and, when
the shapes fit another game or player count, which one). The agent plays
``model.predict(observation, action_masks=mask, deterministic=True)``.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from rummy_env.encoding import num_actions, observation_size
from rummy_env.games import GAMES, game_spec
from rummy_env.ruleset import RuleSet

from .base import Agent, AgentError, legal_actions


def fitting_games(obs_size: int | None, actions: int | None) -> list[str]:
    """``"game with n players"`` for each game and player count whose spaces have these sizes."""
    return [f"{game!r} with {n} players" for game in GAMES for n in game_spec(game).player_counts
            if observation_size(game, n) == obs_size and num_actions(game) == actions]


class Sb3Agent(Agent):
    """Plays a loaded ``MaskablePPO`` model deterministically on the legal actions."""

    name = "sb3"

    def __init__(self, model, rules: RuleSet):
        super().__init__(rules)
        self.model = model

    @classmethod
    def from_zip(cls, path: str | os.PathLike, rules: RuleSet) -> Sb3Agent:
        """Load ``path`` (a ``MaskablePPO.save`` zip) and check it fits the table ``rules``."""
        game, num_players = rules.game, rules.num_players
        source = Path(path)
        name = f"SB3 model {str(source)!r}"
        if not source.exists():
            raise AgentError(f"{name}: no such file")
        if not source.is_file() or not zipfile.is_zipfile(source):
            raise AgentError(f"{name}: not a zip file (MaskablePPO.save writes one)")
        try:
            from sb3_contrib import MaskablePPO
        except ImportError:
            raise AgentError(f"{name}: playing SB3 models needs sb3-contrib (pip install sb3-contrib)") from None
        try:
            model = MaskablePPO.load(source, device="cpu")
        except Exception as error:  # noqa: BLE001 - SB3 raises many types for foreign or damaged zips
            first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            raise AgentError(f"{name}: not a loadable MaskablePPO model ({type(error).__name__}: {first})") from None
        obs_shape = getattr(model.observation_space, "shape", None)
        actions = getattr(model.action_space, "n", None)
        obs_size = obs_shape[0] if obs_shape is not None and len(obs_shape) == 1 else None
        expected = (observation_size(game, num_players), num_actions(game))
        if (obs_size, None if actions is None else int(actions)) != expected:
            fits = fitting_games(obs_size, None if actions is None else int(actions))
            hint = f"; it fits {' or '.join(fits)}" if fits else ""
            raise AgentError(f"{name}: observation space {obs_shape} and {actions} actions; {game!r} with "
                             f"{num_players} players needs ({expected[0]},) and {expected[1]}{hint}")
        return cls(model, rules)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        action, _ = self.model.predict(np.asarray(observation, dtype=np.float32),
                                       action_masks=np.asarray(action_mask) != 0, deterministic=True)
        action = int(np.asarray(action).reshape(-1)[0])
        return action if 0 <= action < action_mask.size and action_mask[action] else int(legal[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks)
        if not masks.any(axis=1).all():
            raise AgentError("asked to act with an all-zero action mask: this seat has no legal action now")
        actions, _ = self.model.predict(np.asarray(observations, dtype=np.float32), action_masks=masks != 0,
                                        deterministic=True)
        return np.asarray(actions, dtype=np.int64).reshape(len(masks))
