"""Agents by name: ``make_agent(spec, game, num_players, seed)``.

==============  ==============================================================
spec            agent
==============  ==============================================================
``random``      ``agents.random_agent.RandomAgent``: uniform over legal actions
``rule``        ``agents.rule_agent.RuleAgent``: solver plus heuristics
``search``      ``agents.search_agent.SearchAgent``: rollouts of the rule agent
``ppo:PATH``    ``agents.policy.PolicyAgent`` on a checkpoint (greedy)
``ppo-sample:PATH``  the same, sampling from the policy
==============  ==============================================================

A bad spec (unknown name, a checkpoint that is missing, is not a checkpoint, or was trained for
another game or player count) raises ``AgentError`` naming it, before any game is played.
"""

from __future__ import annotations

from rummy_env.ruleset import GAMES, make_ruleset

from .base import Agent, AgentError

AGENT_NAMES = ("random", "rule", "search", "ppo:PATH", "ppo-sample:PATH")


def make_agent(spec: str, game: str, num_players: int = 2, seed: int | None = 0, **options) -> Agent:
    """The agent ``spec`` names for ``game`` with ``num_players`` seats.

    ``options`` are the game's rule options (RULES), for agents that need them.
    """
    if game not in GAMES:
        raise AgentError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
    try:
        make_ruleset(game, num_players, **options)
    except ValueError as error:
        raise AgentError(str(error)) from None
    if not isinstance(spec, str) or not spec:
        raise AgentError(f"agent spec {spec!r}: expected one of {', '.join(AGENT_NAMES)}")
    name, _, argument = spec.partition(":")
    if name == "random" and not argument:
        from .random_agent import RandomAgent

        return RandomAgent(game, num_players, seed)
    if name == "rule" and not argument:
        from .rule_agent import RuleAgent

        return RuleAgent(game, num_players, seed, options)
    if name == "search" and not argument:
        from .search_agent import SearchAgent

        return SearchAgent(game, num_players, seed, **options)
    if name in ("ppo", "ppo-sample"):
        if not argument:
            raise AgentError(f"agent spec {spec!r}: expected {name}:PATH, the path of a policy checkpoint")
        from .policy import PolicyAgent

        agent = PolicyAgent.from_checkpoint(argument, game, num_players, greedy=name == "ppo", seed=seed)
        agent.name = spec
        return agent
    raise AgentError(f"unknown agent spec {spec!r}: expected one of {', '.join(AGENT_NAMES)}")
