"""Agents written outside the project: a spec ``path/to/file.py:Name`` or ``package.module:Name``.

``Name`` is a class or a factory in that file or module. It is called with the keyword arguments
``game``, ``num_players`` and ``seed``, only those its signature accepts, and what it returns plays
through ``act(observation, action_mask) -> int``; ``reset(seed)`` and ``act_batch(observations,
masks)`` are used when it has them. No base class is needed: the object is wrapped in a
``PluginAgent`` (or a ``BatchPluginAgent`` when it has ``act_batch``, which tells the arena that one
instance may play many hands at once, ``agents.base.plays_many_hands``).

Every failure is an ``AgentError`` naming the spec: a missing file or module, no such name in it, a
constructor that raises, an exception inside ``reset``, ``act`` or ``act_batch`` (the plug-in's own
exception chained as the cause, so its traceback is kept), an action the mask forbids (the action
and the legal ones). docs/agents.md "Write your own agent".
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import zlib
from pathlib import Path

import numpy as np

from rummy_env.ruleset import RuleSet

from .base import Agent, AgentError

CONSTRUCTOR_ARGUMENTS = ("game", "num_players", "seed")
"""The keyword arguments a plug-in's class or factory may take."""


def is_plugin_spec(spec: str, built_in: tuple[str, ...]) -> bool:
    """Whether ``spec`` names a plug-in: the part before its last colon is a path (holds ``/`` or
    ends in ``.py``) or a dotted module name, and the spec's first word is none of ``built_in``."""
    if spec.partition(":")[0] in built_in:
        return False
    target = spec.rpartition(":")[0] or spec
    return "/" in target or target.endswith(".py") or "." in target


def plugin_agent(spec: str, rules: RuleSet, seed: int | None) -> Agent:
    """The agent ``spec`` (``file.py:Name`` or ``module:Name``) builds for the table ``rules``; the
    plug-in is called with the keywords ``game``, ``num_players`` and ``seed`` that it takes."""
    target, colon, name = spec.rpartition(":")
    if not colon or not name or not target:
        raise AgentError(f"plug-in agent {spec!r}: expected PATH.py:NAME or MODULE:NAME, the class or factory "
                         "to call after the colon")
    module = _load_module(spec, target)
    factory = getattr(module, name, None)
    if factory is None:
        defined = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_")
                         and getattr(v, "__module__", None) == module.__name__)
        raise AgentError(f"plug-in agent {spec!r}: {target} has no name {name!r} "
                         f"(it defines: {', '.join(defined) or 'nothing callable'})")
    if not callable(factory):
        raise AgentError(f"plug-in agent {spec!r}: {name} is a {type(factory).__name__}, not a class or a function")
    arguments = _accepted(dict(zip(CONSTRUCTOR_ARGUMENTS, (rules.game, rules.num_players, seed))), factory)
    try:
        inner = factory(**arguments)
    except Exception as error:
        raise AgentError(f"plug-in agent {spec!r}: {name}({_call_text(arguments)}) raised "
                         f"{type(error).__name__}: {error}") from error
    if not callable(getattr(inner, "act", None)):
        raise AgentError(f"plug-in agent {spec!r}: {name}(...) returned a {type(inner).__name__}, which has no "
                         "act(observation, action_mask) method")
    wrapper = BatchPluginAgent if callable(getattr(inner, "act_batch", None)) else PluginAgent
    return wrapper(rules, inner, spec)


def _load_module(spec: str, target: str):
    """The module of a plug-in: a file loaded under a name of its own, or a module imported by name."""
    if "/" in target or target.endswith(".py"):
        path = Path(target).expanduser().resolve()
        if not path.is_file():
            looked = "" if str(path) == target else f" (looked at {path})"
            raise AgentError(f"plug-in agent {spec!r}: no such file {target}{looked}")
        module_name = f"rummy_plugin_{path.stem}_{zlib.crc32(str(path).encode()):08x}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module  # so that the file's classes and dataclasses can find their module
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[module_name]
            raise AgentError(f"plug-in agent {spec!r}: loading {target} raised {type(error).__name__}: "
                             f"{error}") from error
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if error.name is not None and (target == error.name or target.startswith(error.name + ".")):
            raise AgentError(f"plug-in agent {spec!r}: no module named {target!r} (is its folder on PYTHONPATH, "
                             "or is it installed?)") from None
        raise AgentError(f"plug-in agent {spec!r}: importing {target} raised {type(error).__name__}: "
                         f"{error}") from error
    except Exception as error:
        raise AgentError(f"plug-in agent {spec!r}: importing {target} raised {type(error).__name__}: "
                         f"{error}") from error


def _accepted(arguments: dict, factory) -> dict:
    """The part of ``arguments`` that ``factory``'s signature takes by keyword (all of them with ``**kwargs``)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (some built-in callables): call it bare
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return dict(arguments)
    names = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in arguments.items() if k in names}


def _call_text(arguments: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())


class PluginAgent(Agent):
    """A plug-in's object as an ``Agent``: its ``act`` (and ``reset``) called, its answers checked."""

    def __init__(self, rules: RuleSet, inner, spec: str):
        super().__init__(rules)
        self.inner = inner
        self.name = spec

    def reset(self, seed: int | None = None) -> None:
        reset = getattr(self.inner, "reset", None)
        if callable(reset):
            try:
                reset(seed)
            except Exception as error:
                raise AgentError(f"plug-in agent {self.name!r}: reset({seed!r}) raised "
                                 f"{type(error).__name__}: {error}") from error

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        try:
            action = self.inner.act(observation, action_mask)
        except Exception as error:
            raise AgentError(f"plug-in agent {self.name!r}: act raised {type(error).__name__}: {error}") from error
        return self._checked(action, action_mask)

    def _checked(self, action, mask: np.ndarray) -> int:
        """``action`` as an int if ``mask`` allows it; else an ``AgentError`` naming it and the legal actions."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise AgentError(f"plug-in agent {self.name!r} returned {action!r}, not an action id (an int); "
                             f"legal actions: {np.flatnonzero(mask).tolist()}")
        if not (0 <= action < mask.size and mask[action]):
            raise AgentError(f"plug-in agent {self.name!r} chose action {int(action)}, which the mask forbids; "
                             f"legal actions: {np.flatnonzero(mask).tolist()}")
        return int(action)


class BatchPluginAgent(PluginAgent):
    """A plug-in with its own ``act_batch``: one instance may play many hands at once."""

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        try:
            got = self.inner.act_batch(observations, masks)
        except Exception as error:
            raise AgentError(f"plug-in agent {self.name!r}: act_batch raised {type(error).__name__}: "
                             f"{error}") from error
        actions = np.asarray(got)
        if actions.shape != (len(masks),):
            raise AgentError(f"plug-in agent {self.name!r}: act_batch returned shape {actions.shape}: expected "
                             f"{len(masks)} action ids, one per row")
        return np.fromiter((self._checked(a, m) for a, m in zip(actions, masks)), dtype=np.int64, count=len(masks))
