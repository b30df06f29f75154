"""The fixed evaluation panel of a game and table: the opponents every policy is judged against.

Random, the rule agent, the rule agent that holds its melds (``rule:hold_until=3``; Basic and
römi, docs/agents.md "Holding melds"), the shipped policy of this game and table
(``pretrained:GAME``, the one a new policy should beat) and, at 2 players, the search agent
(``search``, on fewer hands: it is slow; at a larger table it would fill N − 1 seats at a few
decisions per second each, and is left out). The trainer evaluates on it (``eval_opponents:
[panel]``, docs/training.md "Evaluation panel"), ``python -m agents.pretrained.ship`` writes
the shipped policy's results on it into the model card, and ``rummy-bench`` (``agents.bench``)
plays any agent against it.
"""

from __future__ import annotations

from rummy_env.ruleset import make_ruleset

SEARCH = "search"


def _members(game: str, num_players: int) -> list[tuple[str, str | None]]:
    """Every candidate member of the panel of ``game`` at ``num_players``: (spec, why this table
    goes without it, or None when it plays)."""
    from agents.pretrained import shipped_counts, shipped_for

    members: list[tuple[str, str | None]] = [("random", None), ("rule", None)]
    if make_ruleset(game, num_players).table_melds:
        members.append(("rule:hold_until=3", None))
    counts = shipped_counts(game)
    members.append((f"pretrained:{game}", None if shipped_for(game, num_players) else
                    f"no policy ships for {num_players} players (shipped for: "
                    f"{', '.join(f'{n} players' for n in counts) or 'no table size'})"))
    members.append((SEARCH, None if num_players == 2 else
                    "played at 2 players only: at a larger table it would fill every other seat at a few "
                    "decisions per second each"))
    return members


def panel(game: str, num_players: int) -> list[str]:
    """The fixed evaluation panel of ``game`` at a table of ``num_players`` (module docstring)."""
    return [spec for spec, missing in _members(game, num_players) if missing is None]


def left_out(game: str, num_players: int) -> dict[str, str]:
    """The panel members a table of ``num_players`` goes without, and why."""
    return {spec: missing for spec, missing in _members(game, num_players) if missing is not None}


def is_search(spec: str) -> bool:
    """Does ``spec`` name a searching agent (evaluated on fewer hands)?"""
    return spec.split(":", 1)[0] == SEARCH
