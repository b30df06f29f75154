"""Bridges to outside training engines; each needs its own optional extra.

* ``rummy_env.integrations.rllib``: Ray RLlib (``pip install -e ".[ray]"``), multi-agent PPO with
  action masking on one machine or a Ray cluster, and conversion of its policy to our checkpoint
  format (``docs/rllib.md``).

Importing this package imports no engine; each submodule says what it needs.
"""
