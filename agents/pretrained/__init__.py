"""Pretrained opponents shipped inside the package: ``pretrained:GAME``, one policy per table size.

Each (game, player count) with a shipped policy has an exported ONNX file and its model card::

    agents/pretrained/indian-2p.onnx   the 2-player Indian policy (python -m agents.export), on onnxruntime
    agents/pretrained/indian-2p.json   its metadata (agents.export) with the model card under
                                       "model_card": trainer config, CPU time, table results

``pretrained:indian`` at a table of N (``pretrained_agent("indian", make_ruleset("indian", N))``) loads
``indian-Np.onnx`` with no torch import. A count with no policy is an ``AgentError`` naming the
counts there are and how to make one: ``python -m agents.pretrained.ship runs/NAME/best.pt``
exports a trainer run's best checkpoint here and writes its card (``agents.pretrained.ship``).

Files named ``GAME.onnx`` / ``GAME.json`` (what versions before per-count policies installed) are
still read, for the player count their metadata names, when no ``GAME-Np.onnx`` is there.
"""

from __future__ import annotations

import json
from pathlib import Path

from rummy_env.games import game_spec, is_game
from rummy_env.ruleset import GAMES, RuleSet

from ..base import AgentError

PRETRAINED_DIR = Path(__file__).resolve().parent
CARD_FORMAT = "rummy-env-model-card"


def policy_name(game: str, num_players: int) -> str:
    """The file stem of the policy for ``game`` at a table of ``num_players``: ``indian-4p``."""
    return f"{game}-{int(num_players)}p"


def model_path(game: str, num_players: int) -> Path:
    """Where the ONNX policy of ``game`` at a table of ``num_players`` is shipped (or would be)."""
    return _found(game, num_players) or PRETRAINED_DIR / f"{policy_name(game, num_players)}.onnx"


def card_path(game: str, num_players: int) -> Path:
    """The metadata and model card beside ``model_path(game, num_players)``."""
    return model_path(game, num_players).with_suffix(".json")


def _legacy_players(game: str) -> int | None:
    """The player count of a policy installed under the game's bare name (``GAME.onnx``), if any."""
    model = PRETRAINED_DIR / f"{game}.onnx"
    if not model.is_file():
        return None
    try:
        players = json.loads(model.with_suffix(".json").read_text()).get("num_players")
    except (OSError, ValueError, AttributeError):
        return None
    return players if isinstance(players, int) and not isinstance(players, bool) else None


def _found(game: str, num_players: int) -> Path | None:
    """The shipped ONNX file for ``game`` at ``num_players`` seats, or None."""
    named = PRETRAINED_DIR / f"{policy_name(game, num_players)}.onnx"
    if named.is_file():
        return named
    if _legacy_players(game) == num_players:
        return PRETRAINED_DIR / f"{game}.onnx"
    return None


def shipped_counts(game: str) -> list[int]:
    """The table sizes of ``game`` that have a shipped policy, in order."""
    if not is_game(game):
        return []
    return [n for n in game_spec(game).player_counts if _found(game, n) is not None]


def shipped() -> list[str]:
    """The games with a pretrained policy for at least one table size in this installation."""
    return [game for game in GAMES if shipped_counts(game)]


def shipped_for(game: str, num_players: int) -> bool:
    """Is a policy for ``game`` at a table of ``num_players`` shipped in this installation?"""
    return is_game(game) and _found(game, num_players) is not None


def model_card(game: str, num_players: int = 2) -> dict:
    """The model card of the policy for ``game`` at ``num_players`` seats; an ``AgentError`` when none."""
    _check_name(game)
    _check_count(game, num_players)
    path = card_path(game, num_players)
    if not path.is_file():
        raise AgentError(f"pretrained:{game}: no model card {str(path)!r}")
    try:
        card = json.loads(path.read_text()).get("model_card")
    except (ValueError, AttributeError):
        raise AgentError(f"pretrained:{game}: {str(path)!r} is not a JSON object") from None
    if not isinstance(card, dict):
        raise AgentError(f"pretrained:{game}: {str(path)!r} holds no model card")
    return card


def _check_name(name: str) -> None:
    if name not in GAMES:
        raise AgentError(f"agent spec 'pretrained:{name}': expected pretrained:GAME with GAME one of "
                         f"{', '.join(GAMES)}")


def _check_count(game: str, num_players: int) -> None:
    """Refuse a table size with no shipped policy, naming the sizes that have one and how to ship more."""
    if _found(game, num_players) is not None:
        return
    counts = shipped_counts(game)
    have = (f"shipped for {' and '.join(f'{n} players' for n in counts)} only"
            if counts else "none is shipped for any table size yet")
    raise AgentError(f"pretrained:{game}: no policy for {game!r} at a table of {num_players} is shipped in this "
                     f"version ({have}; "
                     f"expected {str(PRETRAINED_DIR / (policy_name(game, num_players) + '.onnx'))!r}). "
                     f"Train one for {num_players} players (train.py) and ship it with: "
                     f"python -m agents.pretrained.ship runs/NAME/best.pt")


def pretrained_agent(name: str, rules: RuleSet, greedy: bool = True, seed: int | None = 0):
    """The shipped policy of game ``name`` as an agent at the table ``rules`` (onnxruntime only)."""
    game, num_players = rules.game, rules.num_players
    _check_name(name)
    if name != game:
        raise AgentError(f"pretrained:{name} plays {name!r}, not {game!r}: use pretrained:{game}")
    _check_count(game, num_players)
    from ..onnx_agent import OnnxAgent, OnnxPolicy

    policy = OnnxPolicy(model_path(game, num_players), game, num_players, what=f"pretrained:{name} policy")
    return OnnxAgent(policy, rules, greedy, seed)
