"""Agents by name: ``make_agent(spec, rules, seed)``, ``rules`` the table's ``RuleSet``
(``rummy_env.ruleset.make_ruleset(game, num_players, **options)``).

==============  ==============================================================
spec            agent
==============  ==============================================================
``random``      ``agents.random_agent.RandomAgent``: uniform over legal actions
``rule``        ``agents.rule_agent.RuleAgent``: solver plus heuristics
``lookahead``   ``agents.lookahead_agent.LookaheadAgent``: the rule agent, discards and draws one card ahead
``search``      ``agents.search_agent.SearchAgent``: rollouts of the rule agent
``search:policy=SPEC``  ``agents.policy_search.PolicySearchAgent``: rollouts of a trained policy
``ppo:PATH``    ``agents.policy.PolicyAgent`` on a checkpoint (greedy)
``ppo-sample:PATH``  the same, sampling from the policy
``onnx:PATH``   ``agents.onnx_agent.OnnxAgent``: an exported policy on onnxruntime, no torch
``onnx-sample:PATH``  the same, sampling from the policy
``sb3:PATH.zip``  ``agents.sb3_agent.Sb3Agent``: an sb3-contrib MaskablePPO model (deterministic)
``pretrained:GAME``  the ONNX policy shipped for GAME at the table's player count (``agents.pretrained``), no torch
``PATH.py:NAME``  a plug-in: class or factory ``NAME`` of a file (``agents.plugin``); ``MODULE:NAME`` from a module
==============  ==============================================================

``rule``, ``lookahead`` and ``search`` take settings after a colon, for ablations:
``rule:near_weight=0,lives_boost=0`` (see ``rule_agent.default_weights``),
``lookahead:lives_weight=1`` (see ``lookahead_agent.LOOKAHEAD_WEIGHTS``),
``search:worlds=24,candidates=2`` (see ``SearchAgent``); ``search:policy=SPEC,worlds=8,depth=2``
searches with the policy SPEC names (see ``agents.policy_search``).

A bad spec (unknown name, a checkpoint that is missing, is not a checkpoint, or was trained for
another game or player count; ``pretrained:GAME`` at a table size with no shipped policy) raises
``AgentError`` naming it (the file, what it is for and what the table needs), before any game is
played.
"""

from __future__ import annotations

import math

from rummy_env.ruleset import RuleSet

from .base import Agent, AgentError
from .plugin import is_plugin_spec, plugin_agent

BUILT_IN_SPECS = ("random", "rule", "lookahead", "search", "search:policy=SPEC", "ppo:PATH", "ppo-sample:PATH",
                  "onnx:PATH", "onnx-sample:PATH", "sb3:PATH.zip", "pretrained:GAME")
AGENT_NAMES = BUILT_IN_SPECS + ("PATH.py:NAME", "MODULE:NAME")
_BUILT_IN_WORDS = tuple(dict.fromkeys(spec.partition(":")[0] for spec in BUILT_IN_SPECS))
"""A spec whose first word is one of these is never a plug-in."""


def make_agent(spec: str, rules: RuleSet, seed: int | None = 0) -> Agent:
    """The agent ``spec`` names, playing by the table's ``rules`` (``rummy_env.ruleset.make_ruleset``:
    game, player count and rule options)."""
    if not isinstance(rules, RuleSet):
        raise AgentError(f"rules {rules!r}: expected a RuleSet, e.g. rummy_env.ruleset.make_ruleset('indian', 2)")
    if not isinstance(spec, str) or not spec:
        raise AgentError(f"agent spec {spec!r}: expected one of {', '.join(AGENT_NAMES)}")
    if is_plugin(spec):
        return plugin_agent(spec, rules, seed)
    name, _, argument = spec.partition(":")
    if name == "random" and not argument:
        from .random_agent import RandomAgent

        return RandomAgent(rules, seed)
    if name == "rule":
        from .rule_agent import RuleAgent, default_weights

        agent = RuleAgent(rules, seed, **_settings(spec, argument, set(default_weights(rules))))
    elif name == "lookahead":
        from .lookahead_agent import LookaheadAgent, lookahead_settings

        agent = LookaheadAgent(rules, seed, **_settings(spec, argument, lookahead_settings(rules)))
    elif name == "search" and any(item.partition("=")[0] == "policy" for item in argument.split(",")):
        from .policy_search import policy_search_agent

        return policy_search_agent(spec, rules, seed)
    elif name == "search":
        from .search_agent import SEARCH_SETTINGS, SearchAgent

        agent = SearchAgent(rules, seed, **_settings(spec, argument, set(SEARCH_SETTINGS)))
    elif name in ("ppo", "ppo-sample"):
        if not argument:
            raise AgentError(f"agent spec {spec!r}: expected {name}:PATH, the path of a policy checkpoint")
        from .policy import PolicyAgent

        agent = PolicyAgent.from_checkpoint(argument, rules, greedy=name == "ppo", seed=seed)
    elif name in ("onnx", "onnx-sample"):
        if not argument:
            raise AgentError(f"agent spec {spec!r}: expected {name}:PATH, the path of an exported ONNX policy")
        from .onnx_agent import OnnxAgent

        agent = OnnxAgent.from_file(argument, rules, greedy=name == "onnx", seed=seed)
    elif name == "sb3":
        if not argument:
            raise AgentError(f"agent spec {spec!r}: expected sb3:PATH.zip, a saved sb3-contrib MaskablePPO model")
        from .sb3_agent import Sb3Agent

        agent = Sb3Agent.from_zip(argument, rules)
    elif name == "pretrained":
        from .pretrained import pretrained_agent

        agent = pretrained_agent(argument or rules.game, rules, seed=seed)
    else:
        raise AgentError(f"unknown agent spec {spec!r}: expected one of {', '.join(AGENT_NAMES)}")
    agent.name = spec
    return agent


def is_plugin(spec: str) -> bool:
    """Whether ``spec`` names a plug-in agent (``PATH.py:NAME`` or ``MODULE:NAME``, ``agents.plugin``)."""
    return is_plugin_spec(spec, _BUILT_IN_WORDS)


def _settings(spec: str, text: str, known: set[str]) -> dict:
    """``key=value,key=value`` after the agent's name, as numbers; an unknown key is an error naming it."""
    settings: dict = {}
    for item in filter(None, text.split(",")):
        key, equals, value = item.partition("=")
        if not equals or key not in known:
            raise AgentError(f"agent spec {spec!r}: unknown setting {item!r}: "
                             f"expected KEY=NUMBER with KEY one of {sorted(known)}")
        try:
            number = int(value) if value.lstrip("-").isdigit() else float(value)
        except ValueError:
            raise AgentError(f"agent spec {spec!r}: setting {key}={value!r} is not a number") from None
        if not math.isfinite(number):
            raise AgentError(f"agent spec {spec!r}: setting {key}={value!r} is not a finite number")
        settings[key] = number
    return settings
