"""The agents a web table offers, and the agents of one game (docs/web.md "Opponents").

Every game gets agents of its own, made by ``agents.registry.make_agent`` and reset with the
game's seeds, so games never share a generator or a hand's memory. Exported policies
(``pretrained:GAME``, ``onnx:PATH``) are loaded once per process: a game's agent is a shallow
copy of the loaded one, sharing only the onnxruntime session (read-only, safe across threads),
with its own generator from ``reset``. That keeps a thousand open games to a few megabytes.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence

from agents.base import Agent, AgentError
from agents.pretrained import shipped
from agents.registry import make_agent

from .errors import WebError

BUILT_IN = ("rule", "search", "random")
"""Specs every installation can play (torch-free)."""

_SHARED_SESSION = ("pretrained", "onnx", "onnx-sample")
"""Spec names whose agent is an onnxruntime session plus a generator that ``reset`` replaces."""


class AgentSource:
    """The specs offered for each game (built in, shipped policies, and the command line's), and their agents."""

    def __init__(self, command_line: Sequence[str] = (), command_line_game: str | None = None):
        self.command_line = tuple(dict.fromkeys(command_line))
        self.command_line_game = command_line_game
        self._loaded: dict[tuple, Agent] = {}
        self._lock = threading.Lock()

    def offered(self, game: str) -> list[str]:
        """The specs the page may choose among for ``game``: its pretrained policy first when shipped."""
        specs = ([f"pretrained:{game}"] if game in shipped() else []) + list(BUILT_IN)
        if game == self.command_line_game:
            specs += [s for s in self.command_line if s not in specs]
        return specs

    def default(self, game: str) -> str:
        """The opponent a new game of ``game`` gets unless told: the shipped policy, else the rule agent."""
        return self.offered(game)[0]

    def make(self, spec: str, game: str, num_players: int, seed: int, options: dict) -> Agent:
        """A fresh agent of ``spec`` for one game; a spec this server does not offer is a 400 naming it."""
        offered = self.offered(game)
        if spec not in offered:
            raise WebError(400, f"agent spec {spec!r} is not offered for {game!r}: expected one of "
                                f"{', '.join(offered)} (the server's --opponents adds others)")
        try:
            if spec.partition(":")[0] not in _SHARED_SESSION:
                return make_agent(spec, game, num_players, seed=seed, **options)
            key = (spec, game, num_players, tuple(sorted(options.items())))
            with self._lock:
                loaded = self._loaded.get(key)
                if loaded is None:
                    loaded = self._loaded[key] = make_agent(spec, game, num_players, seed=0, **options)
            agent = copy.copy(loaded)
            agent.reset(seed=seed)
            return agent
        except AgentError as error:
            raise WebError(400, str(error)) from None
