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
from agents.pretrained import shipped, shipped_for
from agents.registry import make_agent
from rummy_env.ruleset import make_ruleset

from .errors import WebError, shown

BUILT_IN = ("rule", "search", "random")
"""Specs every installation can play (torch-free)."""

_SHARED_SESSION = ("pretrained", "onnx", "onnx-sample")
"""Spec names whose agent is an onnxruntime session plus a generator that ``reset`` replaces."""


class AgentSource:
    """The specs offered for each game (built in, shipped policies, and the command line's), and their agents."""

    def __init__(self, command_line: Sequence[str] = (), command_line_game: str | None = None):
        self.command_line = tuple(dict.fromkeys(command_line))
        self.command_line_game = command_line_game
        self._loaded_agents: dict[tuple, Agent | AgentError] = {}
        self._lock = threading.Lock()

    def offered(self, game: str, num_players: int | None = None) -> list[str]:
        """The specs the page may choose among for ``game`` (at a table of ``num_players``, when given):
        its pretrained policy first when one is shipped for that table size (for any, when not given)."""
        has_policy = game in shipped() if num_players is None else shipped_for(game, num_players)
        specs = ([f"pretrained:{game}"] if has_policy else []) + list(BUILT_IN)
        if game == self.command_line_game:
            specs += [s for s in self.command_line if s not in specs]
        if num_players is None:
            return specs
        return [s for s in specs if not _loads_once(s) or self._loaded_or_none(s, game, num_players) is not None]

    def default(self, game: str, num_players: int) -> str:
        """The opponent a new game gets unless told: the shipped policy for that table, else the rule agent."""
        return self.offered(game, num_players)[0]

    def make(self, spec: str, game: str, num_players: int, seed: int, options: dict) -> Agent:
        """A fresh agent of ``spec`` for one game; a spec this server does not offer is a 400 naming it."""
        offered = self.offered(game)
        if spec not in offered:
            raise WebError(400, f"agent spec {shown(spec)} is not offered for {game!r}: expected one of "
                                f"{', '.join(offered)} (the server's --opponents adds others)")
        try:
            if not _loads_once(spec):
                return make_agent(spec, make_ruleset(game, num_players, **options), seed=seed)
            agent = copy.copy(self._loaded(spec, game, num_players, options))
            agent.reset(seed=seed)
            return agent
        except AgentError as error:
            raise WebError(400, str(error)) from None

    def _loaded(self, spec: str, game: str, num_players: int, options: dict) -> Agent:
        """The process's one loaded agent of an exported policy; an ``AgentError`` (kept) when it cannot play here."""
        key = (spec, game, num_players, tuple(sorted(options.items())))
        with self._lock:
            loaded = self._loaded_agents.get(key)
            if loaded is None:
                try:
                    loaded = make_agent(spec, make_ruleset(game, num_players, **options), seed=0)
                except AgentError as error:
                    loaded = error
                self._loaded_agents[key] = loaded
        if isinstance(loaded, AgentError):
            raise loaded
        return loaded

    def _loaded_or_none(self, spec: str, game: str, num_players: int) -> Agent | None:
        try:
            return self._loaded(spec, game, num_players, {})
        except AgentError:
            return None


def _loads_once(spec: str) -> bool:
    return spec.partition(":")[0] in _SHARED_SESSION
