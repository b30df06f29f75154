"""RLlib modules for the rummy games: the policy network that learns (our MLP or card network),
the rule agent as an opponent, and the conversion of a learned module to our policy checkpoint.

``PolicyModule`` holds the network ``agents.policy.build_network`` makes from a checkpoint's
model config (kind ``mlp``: ``agents.policy.MaskedActorCritic``; kind ``card``:
``agents.networks.CardActorCritic``), so its weights are a checkpoint's weights as they stand:
``network_weights`` turns a checkpoint's ``state_dict`` into the module's state (what ``--init``
loads), and ``to_checkpoint`` writes the module back with ``agents.policy.save_checkpoint`` for
``python -m agents.arena --agents ppo:FILE``. The network cuts the logits of the actions the
observation's mask forbids to the lowest float (probability 0) in every forward pass: sampling,
greedy play and the PPO loss alike.
"""

from __future__ import annotations

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from agents.policy import ACTIVATIONS, build_network, save_checkpoint
from rummy_env.encoding import num_actions, observation_size
from rummy_env.ruleset import make_ruleset

NETWORK_KEYS = {"mlp": ("hidden", "activation"), "card": ("channels", "global_size", "layout", "rank")}
"""The model-config keys each network kind takes (``agents.policy.build_network``)."""

NET_PREFIX = "net."
"""Where the network's parameters sit in a ``PolicyModule``'s state."""


class ModelConfigError(ValueError):
    """A model config that cannot be built for the game; the message names the field."""


def check_model_config(game: str, num_players: int, model: dict | None) -> dict:
    """The network config ``model`` asks for, checked against the game, with ``game`` and
    ``num_players`` added (what ``PolicyModule`` builds from).

    Kind ``mlp`` (the default) takes ``hidden`` and ``activation``; kind ``card`` takes
    ``channels``, ``global_size``, ``layout`` and ``rank`` (``agents.networks``).
    ``observation_size`` and ``num_actions`` may be given; they must be the game's
    (``rummy_env.encoding``), else a ``ModelConfigError`` names both.
    """
    model = dict(model or {})
    kind = model.pop("kind", "mlp")
    if kind not in NETWORK_KEYS:
        raise ModelConfigError(f"model config: kind {kind!r}: expected one of {', '.join(NETWORK_KEYS)} "
                               "(agents.policy.build_network)")
    sizes = {"observation_size": observation_size(game, num_players), "num_actions": num_actions(game)}
    for key in ("game", "num_players"):
        model.pop(key, None)  # what this function adds itself
    unknown = sorted(set(model) - set(NETWORK_KEYS[kind]) - set(sizes))
    if unknown:
        raise ModelConfigError(f"model config: unknown key {unknown[0]!r} for kind {kind!r}: expected "
                               f"{', '.join(NETWORK_KEYS[kind] + tuple(sizes))}")
    for key, size in sizes.items():
        given = model.pop(key, size)
        if given != size:
            raise ModelConfigError(f"model config: {key}={given!r} does not fit {game!r} with {num_players} "
                                   f"players, whose {key.replace('_', ' ')} is {size}")
    if kind == "mlp":
        hidden = model.get("hidden", [256, 256])
        if (not isinstance(hidden, (list, tuple)) or not hidden
                or not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hidden)):
            raise ModelConfigError(f"model config: hidden={hidden!r}: expected a list of layer widths, ints >= 1")
        activation = model.get("activation", "tanh")
        if activation not in ACTIVATIONS:
            raise ModelConfigError(f"model config: activation={activation!r}: expected one of {sorted(ACTIVATIONS)}")
        network = {"kind": "mlp", "hidden": [int(h) for h in hidden], "activation": activation}
    else:
        for key, value in model.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelConfigError(f"model config: {key}={value!r}: expected an int >= 1")
        network = {"kind": "card", **model}
        try:
            build_network(game, num_players, network)
        except (TypeError, ValueError) as error:
            raise ModelConfigError(f"model config: {error}") from None
    return {**network, "game": game, "num_players": int(num_players)}


def network_config(model_config: dict) -> dict:
    """The ``build_network`` config inside a model config: its kind and that kind's keys (RLlib adds
    keys of its own default model config, and this drops them, with the game and players)."""
    kind = model_config.get("kind", "mlp")
    return {"kind": kind, **{k: v for k, v in model_config.items() if k in NETWORK_KEYS[kind]}}


def _inputs(batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    observed = batch[Columns.OBS]
    return observed["observation"].float(), observed["action_mask"]


class PolicyModule(TorchRLModule, ValueFunctionAPI):
    """PPO's module: our network on our observation dict; ``model_config``: ``check_model_config``'s."""

    def setup(self):
        config = dict(self.model_config or {})
        self.net = build_network(config["game"], config["num_players"], network_config(config))

    def _forward(self, batch, **kwargs):
        logits, _ = self.net(*_inputs(batch))
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch, **kwargs):
        logits, values = self.net(*_inputs(batch))
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.VF_PREDS: values}

    def compute_values(self, batch, embeddings=None):
        _, values = self.net(*_inputs(batch))
        return values


def network_weights(state_dict: dict) -> dict:
    """A checkpoint's network ``state_dict`` as a ``PolicyModule``'s state (numpy arrays)."""
    return {NET_PREFIX + name: value.detach().cpu().numpy() for name, value in state_dict.items()}


def module_network_state(weights: dict) -> dict:
    """The network's ``state_dict`` (tensors) inside a ``PolicyModule``'s state."""
    return {name[len(NET_PREFIX):]: torch.as_tensor(np.asarray(value)) for name, value in weights.items()
            if name.startswith(NET_PREFIX)}


class RuleAgentModule(TorchRLModule, ValueFunctionAPI):
    """``agents.rule_agent.RuleAgent`` as a fixed opponent: all its probability on the rule agent's move.

    ``model_config``: game, num_players, options (rule options). It has one unused parameter
    because RLlib's learner gives every module an optimizer; it is never trained.
    """

    def setup(self):
        from agents.rule_agent import RuleAgent

        config = dict(self.model_config or {})
        self.agent = RuleAgent(make_ruleset(config["game"], config["num_players"], **(config.get("options") or {})))
        self.unused = nn.Parameter(torch.zeros(1))

    def _forward(self, batch, **kwargs):
        observations, masks = _inputs(batch)
        logits = torch.full(masks.shape, torch.finfo(torch.float32).min)
        obs, mask = observations.cpu().numpy(), masks.cpu().numpy().astype(np.int8)
        chosen = np.asarray(self.agent.act_batch(obs, mask), np.int64)
        logits[torch.arange(len(chosen)), torch.as_tensor(chosen)] = 0.0
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch, embeddings=None):
        return torch.zeros(batch[Columns.OBS]["action_mask"].shape[0])


def policy_network(module) -> nn.Module:
    """The network inside an RLlib ``PolicyModule`` (or a checkpoint directory of one)."""
    if isinstance(module, (str, bytes)) or hasattr(module, "__fspath__"):
        from ray.rllib.core.rl_module.rl_module import RLModule

        module = RLModule.from_checkpoint(module)
    net = getattr(module, "net", None)
    if not isinstance(net, nn.Module) or not hasattr(net, "model_config"):
        raise ValueError(f"{type(module).__name__} is not a PolicyModule: only those convert to a checkpoint")
    return net


def to_checkpoint(module, path, game: str, num_players: int, config: dict | None = None):
    """Write ``module``'s network as our policy checkpoint (``agents.policy``); returns the path."""
    net = policy_network(module)
    copy = build_network(game, num_players, net.model_config)
    copy.load_state_dict({k: v.detach().cpu() for k, v in net.state_dict().items()})
    return save_checkpoint(path, copy, game, num_players, {"trainer": "rllib", **dict(config or {})})
