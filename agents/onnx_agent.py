"""An exported policy played through onnxruntime: no torch import anywhere on this path.

    agent = make_agent("onnx:indian.onnx", make_ruleset("indian", 2))     # agents.registry; or:
    agent = OnnxAgent.from_file("indian.onnx", "indian", 2)

The file is what ``python -m agents.export --format onnx`` writes (inputs ``observations``
float32 and ``action_masks`` int8, outputs ``probabilities`` and ``values``; see
``agents.export``). Its metadata (the ``rummy_env`` entry inside the file, or the JSON beside
it) names the game and player count it was trained for; loading checks them, and the input
shapes, against the game asked for, and fails with an ``AgentError`` naming the file and the
mismatch before any hand is played. The agent plays the most likely legal action (greedy) or,
with ``greedy=False``, samples from the probabilities with its own seeded generator.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from rummy_env.encoding import num_actions, observation_size
from rummy_env.ruleset import RuleSet

from .base import Agent, AgentError, legal_actions
from .export import INPUT_NAMES, METADATA_FORMAT, METADATA_KEY, OUTPUT_NAMES, metadata_path


class OnnxPolicy:
    """An onnxruntime session of an exported policy, with its metadata; call it on a batch."""

    def __init__(self, path: str | os.PathLike, game: str | None = None, num_players: int | None = None,
                 what: str = "ONNX policy"):
        self.path = Path(path)
        name = f"{what} {str(self.path)!r}"
        if not self.path.exists():
            raise AgentError(f"{name}: no such file")
        if not self.path.is_file():
            raise AgentError(f"{name}: not a file")
        try:
            import onnxruntime
        except ImportError:
            raise AgentError(f"{name}: playing an ONNX policy needs onnxruntime (pip install onnxruntime)") from None
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # batch-1 inference is fastest on one thread, and arena workers stay apart
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self.session = onnxruntime.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001 - onnxruntime raises its own exception types for bad files
            first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            raise AgentError(f"{name}: not a loadable ONNX model ({first})") from None
        inputs = {i.name: i for i in self.session.get_inputs()}
        outputs = [o.name for o in self.session.get_outputs()]
        if set(inputs) != set(INPUT_NAMES) or not set(OUTPUT_NAMES) <= set(outputs):
            raise AgentError(f"{name}: not an exported rummy-env policy: inputs {sorted(inputs)} and outputs "
                             f"{outputs}, expected inputs {list(INPUT_NAMES)} and outputs {list(OUTPUT_NAMES)} "
                             "(python -m agents.export writes them)")
        self.metadata = self._read_metadata(name)
        known_game = self.metadata.get("game")
        known_players = self.metadata.get("num_players")
        if known_game is not None and (game, num_players) != (None, None):
            asked = (game if game is not None else known_game,
                     num_players if num_players is not None else known_players)
            if asked != (known_game, known_players):
                raise AgentError(f"{name} was exported for {known_game!r} with {known_players} players, "
                                 f"not {asked[0]!r} with {asked[1]} players")
        self.game = game if game is not None else known_game
        self.num_players = num_players if num_players is not None else known_players
        if self.game is None or self.num_players is None:
            raise AgentError(f"{name}: no metadata names its game and player count (neither inside the file nor "
                             f"{str(metadata_path(self.path))!r}): say which game and players it is for")
        expected = {INPUT_NAMES[0]: observation_size(self.game, self.num_players),
                    INPUT_NAMES[1]: num_actions(self.game)}
        for input_name, size in expected.items():
            shape = inputs[input_name].shape
            width = shape[-1] if shape else None
            if len(shape) != 2 or (isinstance(width, int) and width != size):
                raise AgentError(f"{name}: input {input_name!r} has shape {shape}; {self.game!r} with "
                                 f"{self.num_players} players needs [batch, {size}]")
        self.observation_size = expected[INPUT_NAMES[0]]
        self.num_actions = expected[INPUT_NAMES[1]]
        self._mask_type = np.int8 if inputs[INPUT_NAMES[1]].type == "tensor(int8)" else np.float32

    def _read_metadata(self, name: str) -> dict:
        inside = self.session.get_modelmeta().custom_metadata_map.get(METADATA_KEY)
        text, where = inside, "its metadata"
        if text is None:
            beside = metadata_path(self.path)
            if not beside.is_file():
                return {}
            text, where = beside.read_text(errors="replace"), repr(str(beside))
        try:
            metadata = json.loads(text)
        except ValueError:
            raise AgentError(f"{name}: {where} is not JSON") from None
        if not isinstance(metadata, dict) or metadata.get("format") != METADATA_FORMAT:
            raise AgentError(f"{name}: {where} is not rummy-env policy metadata (no format {METADATA_FORMAT!r})")
        return metadata

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities, values) for a batch of observations and masks."""
        masks = np.asarray(masks)
        if masks.dtype != self._mask_type:  # the graph compares with 0, so any non-zero int8 is "legal"
            masks = (masks != 0).astype(self._mask_type)
        observations = np.asarray(observations, dtype=np.float32)
        feed = {INPUT_NAMES[0]: observations, INPUT_NAMES[1]: masks}
        probabilities, values = self.session.run(OUTPUT_NAMES, feed)
        return probabilities, values


class OnnxAgent(Agent):
    """Plays an exported policy: the most likely allowed action (greedy) or a sample."""

    name = "onnx"

    def __init__(self, policy: OnnxPolicy, rules: RuleSet, greedy: bool = True, seed: int | None = 0):
        super().__init__(rules)
        self.policy = policy
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_file(cls, path: str | os.PathLike, rules: RuleSet, greedy: bool = True,
                  seed: int | None = 0) -> OnnxAgent:
        """The agent of ONNX file ``path``, which must have been exported for the game and player count of ``rules``."""
        return cls(OnnxPolicy(path, rules.game, rules.num_players), rules, greedy, seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks)
        if masks.ndim != 2 or masks.shape[1] != self.policy.num_actions:
            raise AgentError(f"masks of shape {masks.shape}: expected (batch, {self.policy.num_actions})")
        if not masks.any(axis=1).all():
            raise AgentError("asked to act with an all-zero action mask: this seat has no legal action now")
        probabilities, _ = self.policy(observations, masks)
        probabilities = np.where(masks != 0, probabilities, 0.0)
        if self.greedy:
            return probabilities.argmax(axis=1).astype(np.int64)
        totals = probabilities.sum(axis=1, keepdims=True)
        cumulative = np.cumsum(probabilities / totals, axis=1)
        draws = np.maximum(self.rng.random((len(masks), 1)), 1e-12)  # a draw of 0 must not pick a masked 0
        choice = (cumulative < draws).sum(axis=1)
        return np.minimum(choice, self.policy.num_actions - 1).astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        probabilities = self.policy(observation[None, :], action_mask[None, :])[0][0, legal]
        if self.greedy:
            return int(legal[probabilities.argmax()])
        cumulative = np.cumsum(probabilities / probabilities.sum())
        return int(legal[min(int((cumulative < max(self.rng.random(), 1e-12)).sum()), legal.size - 1)])
