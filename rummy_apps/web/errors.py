"""The one error the web table's game layer raises: an HTTP status and a reason for the browser."""

from __future__ import annotations


class WebError(Exception):
    """A request the server refuses: ``status`` (a 4xx) and a sentence naming what is wrong.

    ``refused`` marks a move the rules forbid (the engine's message, with its rule id); the game
    is unchanged, and the reply carries the seat's view so the page stays in step.
    """

    def __init__(self, status: int, message: str, refused: bool = False, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.refused = refused
        self.headers = headers
        """Extra reply headers (``Retry-After`` of a 429)."""


def shown(value) -> str:
    """``value`` as a refusal quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
