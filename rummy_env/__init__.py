"""rummy-env: Indian Rummy, Basic Rummy and Indiai römi for reinforcement learning.

The rules layer (``rummy_env.rules``, ``rummy_env.game``) needs no RL library; the PettingZoo
and Gymnasium front doors (``env``, ``raw_env``, ``make_single_agent``) load on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "env": ("rummy_env.aec_env", "env"),
    "raw_env": ("rummy_env.aec_env", "raw_env"),
    "make_single_agent": ("rummy_env.single_agent", "make_single_agent"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'rummy_env' has no attribute {name!r}")
