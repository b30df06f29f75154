"""Agents that play rummy-env games: given an observation and its action mask, return an action."""
