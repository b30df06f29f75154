"""Applications on top of the agents: the front-ends of rummy-env (``docs/design.md``, "Layers").

* ``rummy_apps.play``: play against agents in the terminal (``python -m rummy_apps.play``, ``rummy-play``;
  ``docs/play.md``);
* ``rummy_apps.rllib``: self-play PPO on Ray RLlib (``python -m rummy_apps.rllib``; the ``ray`` extra,
  ``docs/rllib.md``).

They import ``agents`` and ``rummy_env``; nothing below imports them. Importing this package imports
neither front-end.
"""
