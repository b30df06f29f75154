"""Beliefs about hidden hands: which unseen cards each other seat is likely to hold.

A search at play time deals guesses of the hidden cards (``agents.search_agent.determinise``).
Dealt uniformly from what is unseen, the guesses ignore what the other players' play has shown
(what they took, what they passed over, what they threw), and a search over them can choose worse
than the policy it searches with (docs/agents.md, "Search with a policy"). A belief is a small
network that reads one seat's observation, the same vector a policy reads, and gives for every
other seat and card type the chance that each unseen copy of the card is in that seat's hand. The
search then deals each other hand by those weights (``determinise(..., weights=...)``):

    search:policy=pretrained:indian,belief=pretrained          # the belief shipped for the game
    search:policy=ppo:runs/NAME/best.pt,belief=beliefs/mine.onnx

``agents.train_belief`` trains one (``python -m agents.train_belief``) by supervised learning on
recorded positions of real play. Nothing hidden reaches play: the network sees only the
observation.

Files: a trained belief is a checkpoint (``.pt``, loaded with ``weights_only=True``) or an ONNX
export (``.onnx``: input ``observations``, output ``probabilities`` of shape (batch, players - 1,
53), its metadata inside the file); ``Belief`` loads either, the ONNX file with onnxruntime alone.
The shipped ones are ``agents/pretrained/GAME-Np-belief.onnx``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from rummy_env.cards import NUM_TYPES
from rummy_env.encoding import observation_size

from .base import AgentError

BELIEF_FORMAT = "rummy-env-belief"
"""The ``format`` entry of a belief's checkpoint and ONNX metadata."""
METADATA_KEY = "rummy_env_belief"
INPUT_NAME, OUTPUT_NAME = "observations", "probabilities"
HIDDEN = (256, 256)
"""The network's hidden layers."""


def belief_network(game: str, num_players: int, hidden: tuple[int, ...] = HIDDEN):
    import torch
    from torch import nn

    class BeliefNet(nn.Module):
        """An MLP from the observation to a logit per (other seat, card type)."""

        def __init__(self):
            super().__init__()
            layers: list[nn.Module] = []
            width = observation_size(game, num_players)
            for size in hidden:
                layers += [nn.Linear(width, size), nn.ReLU()]
                width = size
            self.body = nn.Sequential(*layers, nn.Linear(width, (num_players - 1) * NUM_TYPES))

        def forward(self, observations: torch.Tensor) -> torch.Tensor:
            return self.body(observations).view(-1, num_players - 1, NUM_TYPES)

    return BeliefNet()


def probabilities_of(net, observations: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        return torch.sigmoid(net(torch.from_numpy(np.asarray(observations, np.float32)))).numpy()



class Belief:
    """A trained belief, from a checkpoint (``.pt``, needs torch) or an ONNX export (onnxruntime):
    ``belief(observations)`` is (batch, players - 1, 53), the chance that each unseen copy of a
    card is in the hand of each seat after the observer."""

    def __init__(self, path: str | os.PathLike, game: str, num_players: int):
        self.path = Path(path)
        name = f"belief {str(self.path)!r}"
        if not self.path.is_file():
            raise AgentError(f"{name}: no such file")
        if self.path.suffix == ".onnx":
            self.metadata = self._load_onnx(name)
        else:
            self.metadata = self._load_checkpoint(name)
        made_for = (self.metadata.get("game"), self.metadata.get("num_players"))
        if made_for != (game, num_players):
            raise AgentError(f"{name} was trained for {made_for[0]!r} with {made_for[1]} players, "
                             f"not {game!r} with {num_players} players")
        self.game, self.num_players = game, num_players
        self.size = observation_size(game, num_players)

    def _load_checkpoint(self, name: str) -> dict:
        import torch

        try:
            data = torch.load(self.path, map_location="cpu", weights_only=True)
        except Exception as error:  # noqa: BLE001 - torch raises many kinds for a bad file
            raise AgentError(f"{name}: not a loadable checkpoint ({str(error).splitlines()[0][:200]})") from None
        if not isinstance(data, dict) or data.get("format") != BELIEF_FORMAT:
            raise AgentError(f"{name}: not a rummy-env belief (no format {BELIEF_FORMAT!r})")
        net = belief_network(data["game"], data["num_players"], tuple(data.get("hidden", HIDDEN)))
        try:
            net.load_state_dict(data["state_dict"])
        except (KeyError, RuntimeError) as error:
            raise AgentError(f"{name}: its weights do not fit the belief network ({error})") from None
        self._run = lambda observations: probabilities_of(net.eval(), observations)
        return {k: v for k, v in data.items() if k != "state_dict"}

    def _load_onnx(self, name: str) -> dict:
        try:
            import onnxruntime
        except ImportError:
            raise AgentError(f"{name}: an ONNX belief needs onnxruntime (pip install onnxruntime)") from None
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            session = onnxruntime.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise AgentError(f"{name}: not a loadable ONNX model ({str(error).splitlines()[0][:200]})") from None
        text = session.get_modelmeta().custom_metadata_map.get(METADATA_KEY)
        try:
            metadata = json.loads(text) if text else {}
        except ValueError:
            metadata = {}
        if metadata.get("format") != BELIEF_FORMAT:
            raise AgentError(f"{name}: not a rummy-env belief (no {METADATA_KEY!r} metadata of format "
                             f"{BELIEF_FORMAT!r}; python -m agents.belief writes them)")
        self._run = lambda observations: session.run([OUTPUT_NAME], {INPUT_NAME: observations})[0]
        return metadata

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        observations = np.asarray(observations, np.float32)
        if observations.ndim != 2 or observations.shape[1] != self.size:
            raise AgentError(f"belief {str(self.path)!r}: observations of shape {observations.shape}, expected "
                             f"(batch, {self.size}) for {self.game!r} with {self.num_players} players")
        return np.asarray(self._run(observations), np.float64)


def shipped_path(game: str, num_players: int) -> Path:
    """Where the shipped belief of ``game`` at ``num_players`` seats is (or would be)."""
    from .pretrained import PRETRAINED_DIR, policy_name

    return PRETRAINED_DIR / f"{policy_name(game, num_players)}-belief.onnx"


def belief_from_setting(value: str, game: str, num_players: int) -> Belief | None:
    """The belief a search's ``belief=`` setting names: ``none`` (uniform deals), ``pretrained``
    (the shipped one for the game and table size) or a file's path."""
    if value == "none":
        return None
    if value == "pretrained":
        path = shipped_path(game, num_players)
        if not path.is_file():
            raise AgentError(f"belief=pretrained: no belief is shipped for {game!r} with {num_players} players "
                             f"(python -m agents.train_belief trains one; belief=none deals uniformly)")
        return Belief(path, game, num_players)
    return Belief(value, game, num_players)
