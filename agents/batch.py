"""Asking agents to act for many rows at once: each agent once, for all the rows where it is to act.

``act_for_rows`` is the one "group rows by agent, call ``act_batch``, check the answers" of the
project: the arena plays through it, and so can anything else that steps many hands of
``rummy_env.vector`` with several agents at the table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Agent, AgentError, plays_many_hands


def act_for_rows(agents: Sequence[Agent], observations: np.ndarray, masks: np.ndarray, rows: Sequence[int],
                 seats: Sequence[int] | None = None) -> np.ndarray:
    """The action ``agents[k]`` chooses for row ``rows[k]`` of ``observations`` and ``masks``.

    Each distinct agent (the same object) is asked once, with ``act_batch`` on all its rows; an
    agent with one row that keeps state within a hand (``plays_many_hands`` false) is asked with
    ``act`` on copies of that row. Every answer is checked against its row's mask: a wrong shape
    or dtype, or an action the mask forbids, is an ``AgentError`` naming the agent and the seat
    (``seats[k]``, the seat to act in row ``rows[k]``, for the message).
    """
    rows = list(rows)
    if len(agents) != len(rows):
        raise ValueError(f"{len(agents)} agents for {len(rows)} rows: expected one agent per row")
    seats = list(seats) if seats is not None else [None] * len(rows)
    groups: dict[int, tuple[Agent, list[int], list[int]]] = {}
    for place, (agent, i) in enumerate(zip(agents, rows)):
        group = groups.get(id(agent))
        if group is None:
            groups[id(agent)] = (agent, [i], [place])
        else:
            group[1].append(i)
            group[2].append(place)
    num_actions = masks.shape[1]
    actions = np.empty(len(rows), np.int64)
    for agent, agent_rows, places in groups.values():
        if len(agent_rows) == 1 and not plays_many_hands(agent):
            # the default act_batch is a loop over act: for one row, act itself (saves the batch copies)
            i = agent_rows[0]
            action = agent.act(observations[i].copy(), masks[i].copy())
            if not (isinstance(action, (int, np.integer)) and 0 <= action < num_actions and masks[i, action]):
                raise AgentError(f"agent {agent.name!r}{_in_seat(seats[places[0]])} chose action {action!r}, "
                                 "which its mask forbids")
            actions[places[0]] = action
            continue
        got = np.asarray(agent.act_batch(observations[agent_rows], masks[agent_rows]))
        if got.shape != (len(agent_rows),) or got.dtype.kind not in "iu":
            raise AgentError(f"agent {agent.name!r} returned actions of shape {got.shape} and dtype {got.dtype}: "
                             f"expected {len(agent_rows)} integer action ids, one per row")
        allowed = (got >= 0) & (got < num_actions)
        allowed[allowed] = masks[np.asarray(agent_rows)[allowed], got[allowed]] != 0
        if not allowed.all():
            k = int(np.argmin(allowed))
            raise AgentError(f"agent {agent.name!r}{_in_seat(seats[places[k]])} chose action {int(got[k])}, "
                             "which its mask forbids")
        actions[places] = got
    return actions


def _in_seat(seat: int | None) -> str:
    return "" if seat is None else f" in seat {seat}"
