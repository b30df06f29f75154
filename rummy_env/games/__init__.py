"""The game registry: one module per game, each holding its ``GameSpec`` (``docs/design.md``).

``GAME_SPECS`` maps each game's name to its spec; the engine, the encoding, the environments,
the agents and the command-line tools read the spec (or the ``RuleSet`` made from it) and never
branch on a game's name. The shipped games are ``GAMES``, in the rule book's order: Indian Rummy
(``indian``), Basic Rummy (``basic``) and Indiai römi (``romi``).

A variant is one more spec in a game module's ``SPECS`` (or passed to ``register`` at run time):
``docs/design.md``, "Adding a game or a variant", walks through one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace

from . import basic, indian, romi
from .spec import GameSpec, RuleIds

__all__ = ["GAMES", "GAME_SPECS", "GameSpec", "RuleIds", "by_game", "game_spec", "is_game", "register", "replace",
           "unregister"]

GAME_SPECS: dict[str, GameSpec] = {spec.name: spec for module in (indian, basic, romi) for spec in module.SPECS}
"""Every registered game's spec, by name."""

GAMES: tuple[str, ...] = tuple(GAME_SPECS)
"""The shipped games' names, in the rule book's order."""

_RETIRED: dict[str, GameSpec] = {}
"""Names unregistered in this process, with their specs: never given to another spec (caches key on names)."""


def is_game(name) -> bool:
    """Whether ``name`` is a registered game's name."""
    return isinstance(name, str) and name in GAME_SPECS


def game_spec(game: str) -> GameSpec:
    """The spec of ``game``; an unknown game is an error naming it and the registered ones."""
    try:
        return GAME_SPECS[game]
    except (KeyError, TypeError):
        names = ", ".join(map(repr, GAME_SPECS))
        raise ValueError(f"unknown game {game!r}: expected one of {names}") from None


def register(spec: GameSpec) -> GameSpec:
    """Add ``spec`` to the registry (registering the same object again changes nothing).

    A name taken by another spec, now or earlier in this process, is refused: caches of action
    layouts and observation layouts are keyed by the game's name.
    """
    if not isinstance(spec, GameSpec):
        raise TypeError(f"register({spec!r}): expected a rummy_env.games.GameSpec")
    held = GAME_SPECS.get(spec.name) or _RETIRED.get(spec.name)
    if held is spec:
        GAME_SPECS[spec.name] = spec
        return spec
    if held is not None:
        raise ValueError(f"game name {spec.name!r} is taken: give the variant a name of its own")
    GAME_SPECS[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a game added with ``register`` (tests); the shipped games stay."""
    if name in GAMES:
        raise ValueError(f"game {name!r} is shipped with rummy-env and stays registered")
    _RETIRED[name] = game_spec(name)
    del GAME_SPECS[name]


class by_game(Mapping):
    """A read-only view of one fact by game name: a spec attribute (``by_game("env_name")["romi"]``)
    or a function of the game's name (``by_game(num_actions)``), for every registered game."""

    def __init__(self, fact: str | Callable[[str], object]):
        self.fact = fact

    def __getitem__(self, game: str):
        spec = GAME_SPECS.get(game) if isinstance(game, str) else None
        if spec is None:
            raise KeyError(game)
        return getattr(spec, self.fact) if isinstance(self.fact, str) else self.fact(game)

    def __iter__(self) -> Iterator[str]:
        return iter(GAME_SPECS)

    def __len__(self) -> int:
        return len(GAME_SPECS)

    def __repr__(self) -> str:
        return f"by_game({self.fact!r})"
