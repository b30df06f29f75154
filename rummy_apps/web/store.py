"""The open games of one server: found by an unguessable id, dropped when abandoned (bounded memory).

A game not asked about for ``idle_seconds`` expires; when ``max_games`` are open, opening one
more drops the opening client's own game left alone longest, or, when it has none, anyone's: one
client opening game after game replaces its own games, not other people's. Either way the
dropped id then answers 404.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from .errors import WebError
from .session import WebGame

ID_BYTES = 16
"""Random bytes in a game id (128 bits): knowing one id tells nothing of another."""


class GameStore:
    """Games by id, most recently used last."""

    def __init__(self, max_games: int = 1000, idle_seconds: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic):
        if max_games < 1:
            raise ValueError(f"max_games={max_games}: expected at least 1")
        if idle_seconds <= 0:
            raise ValueError(f"idle_seconds={idle_seconds}: expected a positive number")
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._games: OrderedDict[str, tuple[WebGame, float, str]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, game: WebGame, client: str = "") -> str:
        """Keep ``game`` (opened by ``client``, an address) under a new id, dropping expired games and,
        when full, the client's least recently used game (anyone's when it has none)."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            if len(self._games) >= self.max_games:
                own = next((i for i, (_, _, c) in self._games.items() if c == client), None)
                if own is not None:
                    del self._games[own]
                else:
                    self._games.popitem(last=False)
            game_id = secrets.token_urlsafe(ID_BYTES)
            self._games[game_id] = (game, now, client)
            return game_id

    def get(self, game_id: str) -> WebGame:
        """The game of ``game_id`` (now its last use), or a 404 that says games expire."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            entry = self._games.get(game_id)
            if entry is None:
                raise WebError(404, f"no game {game_id[:64]!r} on this server: it never existed, or it was "
                                    f"left alone over {self.idle_seconds:g} s and expired; start a new one")
            self._games[game_id] = (entry[0], now, entry[2])
            self._games.move_to_end(game_id)
            return entry[0]

    def remove(self, game_id: str) -> None:
        """Forget ``game_id`` (a 404 when there is no such game)."""
        self.get(game_id)
        with self._lock:
            self._games.pop(game_id, None)

    def __len__(self) -> int:
        with self._lock:
            self._expire(self.clock())
            return len(self._games)

    def _expire(self, now: float) -> None:
        while self._games:
            game_id, (_, used, _) = next(iter(self._games.items()))
            if now - used < self.idle_seconds:
                break
            del self._games[game_id]
