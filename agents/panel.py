"""The fixed evaluation panel of a game and table: the opponents every policy is judged against.

Random, the rule agent, the rule agent that holds its melds (``rule:hold_until=3``; Basic and
römi, docs/agents.md "Holding melds"), the shipped policy of this game and table
(``pretrained:GAME``, the one a new policy should beat) and, at 2 players, the search agent
(``search``, on fewer hands: it is slow; at a larger table it would fill N − 1 seats at a few
decisions per second each, and is left out). The trainer evaluates on it (``eval_opponents:
[panel]``, docs/training.md "Evaluation panel") and ``python -m agents.pretrained.ship`` writes
the shipped policy's results on it into the model card.
"""

from __future__ import annotations

from rummy_env.ruleset import make_ruleset

SEARCH = "search"


def panel(game: str, num_players: int) -> list[str]:
    """The fixed evaluation panel of ``game`` at a table of ``num_players`` (module docstring)."""
    from agents.pretrained import shipped_for

    members = ["random", "rule"]
    if make_ruleset(game, num_players).table_melds:
        members.append("rule:hold_until=3")
    if shipped_for(game, num_players):
        members.append(f"pretrained:{game}")
    return members + ([SEARCH] if num_players == 2 else [])


def is_search(spec: str) -> bool:
    """Does ``spec`` name a searching agent (evaluated on fewer hands)?"""
    return spec.split(":", 1)[0] == SEARCH
