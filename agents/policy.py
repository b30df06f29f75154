"""A small masked actor-critic MLP, its checkpoint format, and the agent that plays it.

Checkpoint format (one ``torch.save`` file, loadable with ``torch.load(..., weights_only=True)``)::

    {
        "format": "rummy-env-policy",     # CHECKPOINT_FORMAT
        "version": 2,                     # CHECKPOINT_VERSION (version 1, MLP only, is still read)
        "game": "indian",                 # the game it was trained for
        "num_players": 2,
        "observation_size": 488,          # rummy_env.encoding.observation_size(game, num_players)
        "num_actions": 108,               # rummy_env.encoding.num_actions(game)
        "model": {"kind": "mlp", "hidden": [256, 256], "activation": "tanh"},  # rebuilds the network:
                                          # kind "mlp" (MaskedActorCritic) or "card"
                                          # (agents.networks.CardActorCritic)
        "config": {...},                  # the trainer's settings: plain JSON-like values only
        "state_dict": {...},              # the network's state_dict()
        "training_state": {...},          # optional: what resumes training (agents.training)
    }

``save_checkpoint`` writes a temporary file beside the target and renames it over the target
(``os.replace``), so a reader never sees half a checkpoint. ``load_checkpoint`` raises
``CheckpointError`` naming the file when it is missing, corrupt (its zip checksums fail), is not
such a checkpoint, holds weights that are not finite or do not fit the network it describes, or
was trained for another game or player count than the one asked for.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

from rummy_env.encoding import num_actions, observation_size
from rummy_env.ruleset import RuleSet

from .base import Agent, AgentError, legal_actions

CHECKPOINT_FORMAT = "rummy-env-policy"
CHECKPOINT_VERSION = 2
READABLE_VERSIONS = (1, 2)
NETWORK_KINDS = ("mlp", "card")
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


class CheckpointError(AgentError):
    """A checkpoint file that cannot be used; the message names the file."""


class MaskedActorCritic(nn.Module):
    """An MLP body with a policy head (logits over the game's actions) and a value head.

    Masked-out actions get the lowest float logit, so they have probability 0 and are never the
    greedy choice while any action is allowed.
    """

    def __init__(self, observation_size: int, num_actions: int, hidden: tuple[int, ...] | list[int] = (256, 256),
                 activation: str = "tanh"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r}: expected one of {sorted(ACTIVATIONS)}")
        self.observation_size = int(observation_size)
        self.num_actions = int(num_actions)
        self.hidden = [int(h) for h in hidden]
        self.activation = activation
        layers: list[nn.Module] = []
        width = self.observation_size
        for size in self.hidden:
            layers += [nn.Linear(width, size), ACTIVATIONS[activation]()]
            width = size
        self.body = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, self.num_actions)
        self.value_head = nn.Linear(width, 1)
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)

    kind = "mlp"

    @property
    def model_config(self) -> dict:
        """What rebuilds this network (stored in checkpoints)."""
        return {"kind": self.kind, "hidden": list(self.hidden), "activation": self.activation}

    def value_parameters(self) -> list[nn.Parameter]:
        """The value head's own parameters (what a value warm-up trains, leaving the policy as it is)."""
        return list(self.value_head.parameters())

    def forward(self, observations: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits, values) for a batch of observations and their action masks."""
        features = self.body(observations)
        logits = self.policy_head(features)
        logits = logits.masked_fill(masks == 0, torch.finfo(logits.dtype).min)
        return logits, self.value_head(features).squeeze(-1)

    def distribution(self, observations: torch.Tensor, masks: torch.Tensor) -> torch.distributions.Categorical:
        """The policy's action distribution (zero probability on masked actions)."""
        logits, _ = self(observations, masks)
        return torch.distributions.Categorical(logits=logits)


def _plain(value, where: str):
    """``value`` if it is made of JSON-like types only (what ``weights_only`` loading accepts)."""
    try:
        json.dumps(value, allow_nan=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: only plain values (numbers, strings, lists, dicts, None) may be stored: "
                         f"{error}") from None
    return value


def build_network(game: str, num_players: int, model_config: dict | None = None) -> nn.Module:
    """The network ``model_config`` describes (a checkpoint's ``"model"``; kind "mlp" when absent)."""
    settings = dict(model_config or {})
    kind = settings.pop("kind", "mlp")
    if kind == "mlp":
        return MaskedActorCritic(observation_size(game, num_players), num_actions(game), **settings)
    if kind == "card":
        from .networks import CardActorCritic

        return CardActorCritic(game, num_players, **{"layout": 1, **settings})  # no layout: layout 1's config
    raise ValueError(f"network kind {kind!r}: expected one of {', '.join(NETWORK_KINDS)}")


def save_checkpoint(path: str | os.PathLike, model: nn.Module, game: str, num_players: int,
                    config: dict | None = None, training_state: dict | None = None) -> Path:
    """Write ``model``, the trainer's ``config`` and (optionally) its ``training_state`` to
    ``path`` atomically; returns the path."""
    expected = (observation_size(game, num_players), num_actions(game))
    if (model.observation_size, model.num_actions) != expected:
        raise ValueError(f"model has observation size {model.observation_size} and {model.num_actions} actions; "
                         f"{game!r} with {num_players} players needs {expected[0]} and {expected[1]}")
    payload = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "game": game,
        "num_players": int(num_players),
        "observation_size": model.observation_size,
        "num_actions": model.num_actions,
        "model": model.model_config,
        "config": _plain(dict(config or {}), "checkpoint config"),
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
    }
    if training_state is not None:
        payload["training_state"] = training_state
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600; a checkpoint is an ordinary file
        with os.fdopen(handle, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def load_checkpoint(path: str | os.PathLike, game: str | None = None,
                    num_players: int | None = None) -> tuple[nn.Module, dict]:
    """(model in eval mode, the checkpoint's metadata) from ``path``; checks the game and players if given."""
    source = Path(path)
    if not source.exists():
        raise CheckpointError(f"checkpoint {str(source)!r}: no such file")
    if not source.is_file():
        raise CheckpointError(f"checkpoint {str(source)!r}: not a file")
    _check_archive(source)
    try:
        payload = torch.load(source, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - any garbage may be handed to the unpickler
        raise CheckpointError(f"checkpoint {str(source)!r}: not a rummy-env policy checkpoint "
                              f"(torch.load with weights_only failed: {type(error).__name__})") from None
    name = repr(str(source))
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"checkpoint {name}: not a rummy-env policy checkpoint (no format {CHECKPOINT_FORMAT!r})")
    if payload.get("version") not in READABLE_VERSIONS:
        raise CheckpointError(f"checkpoint {name}: format version {payload.get('version')!r}, "
                              f"this code reads versions {', '.join(map(str, READABLE_VERSIONS))}")
    required = ("game", "num_players", "observation_size", "num_actions", "model", "state_dict")
    missing = [k for k in required if k not in payload]
    if missing:
        raise CheckpointError(f"checkpoint {str(source)!r}: incomplete, lacks {', '.join(missing)}")
    trained = (payload["game"], payload["num_players"])
    if not isinstance(trained[0], str) or isinstance(trained[1], bool) or not isinstance(trained[1], int):
        raise CheckpointError(f"checkpoint {name}: game {trained[0]!r} and num_players {trained[1]!r} "
                              "should be a string and an int")
    if (game is not None and game != trained[0]) or (num_players is not None and num_players != trained[1]):
        asked_game = game if game is not None else trained[0]
        asked_players = num_players if num_players is not None else trained[1]
        raise CheckpointError(f"checkpoint {name} was trained for {trained[0]!r} with {trained[1]} players, "
                              f"not {asked_game!r} with {asked_players} players")
    expected = (observation_size(trained[0], trained[1]), num_actions(trained[0]))
    if (payload["observation_size"], payload["num_actions"]) != expected:
        raise CheckpointError(f"checkpoint {str(source)!r}: observation size {payload['observation_size']} and "
                              f"{payload['num_actions']} actions do not match {trained[0]!r} with {trained[1]} players "
                              f"({expected[0]}, {expected[1]}): the encoding changed since it was written")
    state_dict = payload["state_dict"]
    if not isinstance(state_dict, dict) or not all(isinstance(v, torch.Tensor) for v in state_dict.values()):
        raise CheckpointError(f"checkpoint {name}: its state_dict is not a mapping of tensors")
    bad = [k for k, v in state_dict.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise CheckpointError(f"checkpoint {name}: weights that are not finite (NaN or infinity) in "
                              f"{', '.join(bad[:5])}{' …' if len(bad) > 5 else ''}")
    try:
        model = build_network(trained[0], trained[1], payload["model"])
        model.load_state_dict(state_dict)
    except (TypeError, ValueError, RuntimeError) as error:
        detail = " ".join(str(error).split()) if str(error) else type(error).__name__
        raise CheckpointError(f"checkpoint {name}: its weights do not fit the network it describes "
                              f"({detail})") from None
    model.eval()
    meta = {k: v for k, v in payload.items() if k not in ("state_dict", "training_state")}
    return model, meta


def load_training_state(path: str | os.PathLike) -> tuple[nn.Module, dict, dict]:
    """(model, metadata, training state) of a trainer checkpoint; an error names the file if it has none."""
    model, meta = load_checkpoint(path)
    payload = torch.load(Path(path), map_location="cpu", weights_only=True)
    state = payload.get("training_state")
    if not isinstance(state, dict):
        raise CheckpointError(f"checkpoint {str(path)!r}: holds a policy but no training state to resume from")
    return model, meta, state


def _check_archive(source: Path) -> None:
    """A torch zip archive whose checksums fail is corrupt: refuse it rather than load changed weights."""
    if not zipfile.is_zipfile(source):
        return  # not a zip at all: torch.load says what it is
    try:
        with zipfile.ZipFile(source) as archive:
            broken = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise CheckpointError(f"checkpoint {str(source)!r}: corrupt archive ({error})") from None
    if broken is not None:
        raise CheckpointError(f"checkpoint {str(source)!r}: corrupt, the checksum of {broken!r} fails")


def sample_actions(probabilities: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row of ``probabilities`` (rows of a masked softmax), drawn with
    ``generator`` by inverting the cumulative sum: one uniform number a row. A row's zero
    entries are never drawn. Much faster than ``torch.multinomial`` on wide rows (römi's 2,319
    actions), and the same law."""
    cdf = probabilities.double().cumsum(dim=-1)
    u = torch.rand(cdf.shape[0], 1, dtype=torch.float64, generator=generator) * cdf[:, -1:]
    actions = torch.searchsorted(cdf, u, right=True).squeeze(1)
    # u < the row's total, so the entry found has a positive probability; rounding could put u
    # on the total itself, past the last legal entry: step back to it
    last_legal = probabilities.shape[1] - 1 - (probabilities > 0).flip(1).to(torch.int8).argmax(dim=1)
    return torch.minimum(actions, last_legal)


def policy_inputs(observations: np.ndarray, masks: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch as a network reads it: (float32 observations, int8 masks); an ``AgentError`` when a
    row has no legal action."""
    obs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
    mask = torch.as_tensor(np.asarray(masks)).to(torch.int8)
    if bool((mask.sum(dim=-1) == 0).any()):
        raise AgentError("asked to act with an all-zero action mask: this seat has no legal action now")
    return obs, mask


class PolicyAgent(Agent):
    """Plays a ``MaskedActorCritic``: the most likely allowed action (greedy) or a sample."""

    name = "ppo"

    def __init__(self, model: nn.Module, rules: RuleSet, greedy: bool = True, seed: int | None = 0):
        super().__init__(rules)
        self.model = model.eval()
        self.greedy = greedy
        self.generator = torch.Generator()
        self.generator.manual_seed(seed or 0)

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike, rules: RuleSet, greedy: bool = True,
                        seed: int | None = 0) -> PolicyAgent:
        """The agent of checkpoint ``path``, which must have been trained for the game and player count of ``rules``."""
        model, _ = load_checkpoint(path, rules.game, rules.num_players)
        return cls(model, rules, greedy, seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.generator.manual_seed(seed)

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, mask = policy_inputs(observations, masks)
        logits, _ = self.model(obs, mask)
        if self.greedy:
            actions = logits.argmax(dim=-1)
        else:
            actions = sample_actions(torch.softmax(logits, dim=-1), self.generator)
        return actions.numpy().astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal_actions(action_mask)
        return int(self.act_batch(observation[None, :], action_mask[None, :])[0])
