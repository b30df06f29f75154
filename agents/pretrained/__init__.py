"""Pretrained opponents shipped inside the package: ``pretrained:indian`` (and ``basic``, ``romi``).

Each game's policy is an exported ONNX file with its model card beside it::

    agents/pretrained/indian.onnx     the policy (python -m agents.export), played on onnxruntime
    agents/pretrained/indian.json     its metadata (agents.export) with the model card under
                                      "model_card": trainer config, CPU time, arena results

``pretrained_agent("indian", "indian", 2)`` (the registry's ``pretrained:indian``) loads it with
no torch import. A game whose policy is not shipped yet is an ``AgentError`` that says so and
how to make one: ``python -m agents.pretrained.ship runs/indian/best.pt`` exports a trainer
run's best checkpoint here and writes its card (``agents.pretrained.ship``).
"""

from __future__ import annotations

import json
from pathlib import Path

from rummy_env.ruleset import GAMES

from ..base import AgentError

PRETRAINED_DIR = Path(__file__).resolve().parent
CARD_FORMAT = "rummy-env-model-card"


def model_path(name: str) -> Path:
    """Where the shipped ONNX policy of ``name`` (a game) lives."""
    return PRETRAINED_DIR / f"{name}.onnx"


def card_path(name: str) -> Path:
    """Where the metadata and model card of ``name`` live."""
    return PRETRAINED_DIR / f"{name}.json"


def shipped() -> list[str]:
    """The games that have a pretrained policy in this installation."""
    return [game for game in GAMES if model_path(game).is_file()]


def shipped_for(game: str, num_players: int) -> bool:
    """Is a policy for ``game`` at a table of ``num_players`` shipped in this installation?"""
    if game not in shipped():
        return False
    try:
        return int(json.loads(card_path(game).read_text()).get("num_players", 0)) == int(num_players)
    except (OSError, ValueError, TypeError, AttributeError):
        return False


def model_card(name: str) -> dict:
    """The model card of pretrained policy ``name``; an ``AgentError`` when it is not shipped."""
    _check_name(name)
    path = card_path(name)
    if not path.is_file():
        raise AgentError(f"pretrained:{name}: no model card {str(path)!r}")
    try:
        card = json.loads(path.read_text()).get("model_card")
    except (ValueError, AttributeError):
        raise AgentError(f"pretrained:{name}: {str(path)!r} is not a JSON object") from None
    if not isinstance(card, dict):
        raise AgentError(f"pretrained:{name}: {str(path)!r} holds no model card")
    return card


def _check_name(name: str) -> None:
    if name not in GAMES:
        raise AgentError(f"agent spec 'pretrained:{name}': expected pretrained:GAME with GAME one of "
                         f"{', '.join(GAMES)}")


def pretrained_agent(name: str, game: str, num_players: int, greedy: bool = True, seed: int | None = 0):
    """The shipped policy ``name`` as an agent of ``game`` with ``num_players`` seats (onnxruntime only)."""
    _check_name(name)
    path = model_path(name)
    if not path.is_file():
        have = shipped()
        raise AgentError(f"pretrained:{name}: no pretrained {name!r} policy is shipped in this version "
                         f"(expected {str(path)!r}; shipped: {', '.join(have) if have else 'none yet'}). "
                         f"Train one (train.py) and ship it with: python -m agents.pretrained.ship "
                         f"runs/{name}/best.pt")
    if name != game:
        raise AgentError(f"pretrained:{name} plays {name!r}, not {game!r}: use pretrained:{game}")
    from ..onnx_agent import OnnxAgent, OnnxPolicy

    policy = OnnxPolicy(path, game, num_players, what=f"pretrained:{name} policy")
    return OnnxAgent(policy, greedy, seed)
