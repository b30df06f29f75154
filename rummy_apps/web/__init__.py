"""A local web table for the three games: play in the browser against agents (docs/web.md).

    python -m rummy_apps.web --game romi --opponents pretrained:romi     # then open http://127.0.0.1:8000/

``create_app`` (``rummy_apps.web.app``) is the ASGI app: one static page of plain JavaScript and
a JSON API. The server holds every game and checks every move with the engine
(``rummy_env.game.GameState``); the browser receives only what the person's seat may see
(``rummy_apps.web.view``), in the page's words (``rummy_apps.web.words``), with the rule book at
``/rules`` (``rummy_apps.web.rulebook``). Needs the ``[web]`` extra (Starlette, uvicorn); opponents are any agent
spec (``agents.registry``), the shipped ONNX policies by default, with no torch.
"""

from __future__ import annotations


def create_app(*args, **kwargs):
    """``rummy_apps.web.app.create_app``, imported on first use (it needs the [web] extra)."""
    from .app import create_app as make

    return make(*args, **kwargs)
