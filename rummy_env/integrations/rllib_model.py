"""RLlib modules for the rummy games: the masked MLP that learns, the rule agent as an opponent,
and the conversion of a learned module to our policy checkpoint.

``MaskedMLPModule`` holds an ``agents.policy.MaskedActorCritic`` (kind "mlp") as its network, so
its weights are a checkpoint's weights as they stand: ``to_checkpoint`` writes them with
``agents.policy.save_checkpoint`` and ``python -m agents.arena --agents ppo:FILE`` plays them.
The action mask in the observation sets the logits of forbidden actions to the lowest float
(probability 0) in every forward pass: sampling, greedy play and the PPO loss alike.
"""

from __future__ import annotations

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from agents.policy import ACTIVATIONS, MaskedActorCritic, save_checkpoint
from rummy_env.encoding import num_actions, observation_size


class ModelConfigError(ValueError):
    """A model config that cannot be built for the game; the message names the field."""


def check_model_config(game: str, num_players: int, model: dict | None) -> dict:
    """The MLP config ``model`` asks for, checked against the game: ``{"hidden", "activation"}``.

    ``observation_size`` and ``num_actions`` may be given; they must be the game's
    (``rummy_env.encoding``), else a ``ModelConfigError`` names both.
    """
    model = dict(model or {})
    sizes = {"observation_size": observation_size(game, num_players), "num_actions": num_actions(game)}
    unknown = sorted(set(model) - {"kind", "hidden", "activation", *sizes})
    if unknown:
        raise ModelConfigError(f"model config: unknown key {unknown[0]!r}: expected kind, hidden, activation, "
                               "observation_size, num_actions")
    if model.get("kind", "mlp") != "mlp":
        raise ModelConfigError(f"model config: kind {model['kind']!r}: only 'mlp' (agents.policy.MaskedActorCritic) "
                               "trains on RLlib")
    for key, size in sizes.items():
        if key in model and model[key] != size:
            raise ModelConfigError(f"model config: {key}={model[key]!r} does not fit {game!r} with {num_players} "
                                   f"players, whose {key.replace('_', ' ')} is {size}")
    hidden = model.get("hidden", [256, 256])
    if (not isinstance(hidden, (list, tuple)) or not hidden
            or not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hidden)):
        raise ModelConfigError(f"model config: hidden={hidden!r}: expected a list of layer widths, ints >= 1")
    activation = model.get("activation", "tanh")
    if activation not in ACTIVATIONS:
        raise ModelConfigError(f"model config: activation={activation!r}: expected one of {sorted(ACTIVATIONS)}")
    return {"kind": "mlp", "hidden": [int(h) for h in hidden], "activation": activation}


def _inputs(batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    observed = batch[Columns.OBS]
    return observed["observation"].float(), observed["action_mask"]


class MaskedMLPModule(TorchRLModule, ValueFunctionAPI):
    """PPO's module: ``MaskedActorCritic`` on our observation dict; ``model_config``: hidden, activation."""

    def setup(self):
        config = dict(self.model_config or {})
        space = self.observation_space["observation"]
        self.net = MaskedActorCritic(space.shape[0], self.action_space.n, config.get("hidden", [256, 256]),
                                     config.get("activation", "tanh"))

    def _forward(self, batch, **kwargs):
        logits, _ = self.net(*_inputs(batch))
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch, **kwargs):
        logits, values = self.net(*_inputs(batch))
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.VF_PREDS: values}

    def compute_values(self, batch, embeddings=None):
        _, values = self.net(*_inputs(batch))
        return values


class RuleAgentModule(TorchRLModule, ValueFunctionAPI):
    """``agents.rule_agent.RuleAgent`` as a fixed opponent: all its probability on the rule agent's move.

    ``model_config``: game, num_players, options (rule options). It has one unused parameter
    because RLlib's learner gives every module an optimizer; it is never trained.
    """

    def setup(self):
        from agents.rule_agent import RuleAgent

        config = dict(self.model_config or {})
        self.agent = RuleAgent(config["game"], config["num_players"], seed=0, options=config.get("options"))
        self.unused = nn.Parameter(torch.zeros(1))

    def _forward(self, batch, **kwargs):
        observations, masks = _inputs(batch)
        logits = torch.full(masks.shape, torch.finfo(torch.float32).min)
        obs, mask = observations.cpu().numpy(), masks.cpu().numpy().astype(np.int8)
        for row in range(obs.shape[0]):
            logits[row, self.agent.act(obs[row], mask[row])] = 0.0
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch, embeddings=None):
        return torch.zeros(batch[Columns.OBS]["action_mask"].shape[0])


def policy_network(module) -> MaskedActorCritic:
    """The ``MaskedActorCritic`` inside an RLlib ``MaskedMLPModule`` (or a checkpoint directory of one)."""
    if isinstance(module, (str, bytes)) or hasattr(module, "__fspath__"):
        from ray.rllib.core.rl_module.rl_module import RLModule

        module = RLModule.from_checkpoint(module)
    net = getattr(module, "net", None)
    if not isinstance(net, MaskedActorCritic):
        raise ValueError(f"{type(module).__name__} is not a MaskedMLPModule: only those convert to a checkpoint")
    return net


def to_checkpoint(module, path, game: str, num_players: int, config: dict | None = None):
    """Write ``module``'s network as our policy checkpoint (``agents.policy``); returns the path."""
    net = policy_network(module)
    copy = MaskedActorCritic(net.observation_size, net.num_actions, net.hidden, net.activation)
    copy.load_state_dict({k: v.detach().cpu() for k, v in net.state_dict().items()})
    return save_checkpoint(path, copy, game, num_players, {"trainer": "rllib", **dict(config or {})})
