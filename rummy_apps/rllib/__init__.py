"""Self-play PPO on Ray RLlib, one machine or a Ray cluster (``docs/rllib.md``); needs the ``ray``
extra (``pip install -e ".[ray]"``).

* ``trainer``: the settings, the training run and the command line (``python -m rummy_apps.rllib``);
* ``env``: our AEC environment as an RLlib multi-agent environment, registered per game;
* ``model``: the RLlib modules (our policy network, the rule agent) and the conversion of a learned
  module to our policy checkpoint.

Importing this package imports no engine; each module says what it needs.
"""
