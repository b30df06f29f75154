"""What keeps other sites off the web table (docs/web.md "Safety"): the names it answers to, the
origin of every state-changing call, the headers of every reply, and a bound on new games per client.

``TableGuard`` wraps the app (ASGI): a request whose ``Host`` is not a name the server was told
to answer to is a 421 (a DNS-rebinding page reaches the server under its own name); a POST or
DELETE from another origin (``Origin`` other than the served host, or ``Sec-Fetch-Site``
cross-site or same-site) is a 403; every reply carries ``SECURITY_HEADERS``. ``NewGameLimiter``
is a token bucket per client address.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

LOCAL_NAMES = ("127.0.0.1", "localhost", "::1")
"""The names a server always answers to: this machine's."""

WILDCARD_HOSTS = ("0.0.0.0", "::", "")
"""Listening addresses that are no name a browser can use (the names must be given with --allowed-host)."""

SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}
"""On every reply: only the table's own scripts and styles, never inside another site's frame."""
HEADER_PAIRS = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
"""Methods that change nothing; every other one must come from the table's own page."""


def served_names(host: str, allowed: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` names a server listening on ``host`` answers to: this machine's, ``host``, and ``allowed``."""
    names = set(LOCAL_NAMES) | {name.strip("[]").lower() for name in allowed}
    if host not in WILDCARD_HOSTS:
        names.add(host.strip("[]").lower())
    return frozenset(names)


def host_name(value: str) -> str:
    """The name in a ``Host`` header (or an origin's ``host[:port]``), lower case, without its port."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class TableGuard:
    """ASGI middleware: Host and origin checks, and the security headers on every reply."""

    def __init__(self, app, names: Iterable[str] = LOCAL_NAMES):
        self.app = app
        self.names = frozenset(names)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        refusal = None
        if host_name(host) not in self.names:
            refusal = (421, f"this server does not answer to the name {host[:100]!r}: it serves "
                            f"{', '.join(sorted(self.names))} (start it with --allowed-host NAME to add one)")
        elif scope["method"] not in SAFE_METHODS:
            refusal = _cross_site(headers, host)
        if refusal is not None:
            return await _refuse(send, *refusal)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = dict(message, headers=[*message.get("headers", []), *HEADER_PAIRS])
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _cross_site(headers: dict, host: str) -> tuple[int, str] | None:
    """A 403 for a state-changing request that another site's page sent, else None."""
    site = headers.get("sec-fetch-site")
    if site in ("cross-site", "same-site"):
        return 403, f"refused: a {site} request (Sec-Fetch-Site); only the table's own page may play"
    origin = headers.get("origin")
    if origin is not None:
        scheme, _, rest = origin.partition("://")
        if scheme not in ("http", "https") or rest.lower() != host.lower():
            return 403, (f"refused: a request from the origin {origin[:100]!r}; only the table's own page "
                         f"({host[:100]}) may play")
    return None


async def _refuse(send, status: int, reason: str) -> None:
    body = json.dumps({"error": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               *HEADER_PAIRS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class NewGameLimiter:
    """A token bucket per client address: ``per_minute`` new games a minute, ``per_minute`` at once at most.

    Remembers the ``max_clients`` clients seen last (one forgotten starts again with a full bucket).
    """

    def __init__(self, per_minute: float = 30, clock: Callable[[], float] = time.monotonic,
                 max_clients: int = 10_000):
        if not per_minute > 0 or math.isinf(per_minute):
            raise ValueError(f"per_minute={per_minute!r}: expected a positive number")
        self.per_minute = per_minute
        self.clock = clock
        self.max_clients = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Take one of ``client``'s tokens and return 0, or return the seconds until one is due (none taken)."""
        rate = self.per_minute / 60
        with self._lock:
            now = self.clock()
            tokens, then = self._buckets.pop(client, (self.per_minute, now))
            tokens = min(self.per_minute, tokens + (now - then) * rate)
            due = 0.0 if tokens >= 1 else (1 - tokens) / rate
            self._buckets[client] = (tokens - 1 if due == 0 else tokens, now)
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
            return due
