"""rummy-env's main job: self-play PPO training (``python train.py --help``; docs/training.md).

With no arguments it trains Indian Rummy for 2 players in 11-15 minutes on 2 CPU cores and
writes a run folder under ``runs/`` with TensorBoard logs, checkpoints, the learning curves and
the final arena results against random and the rule agent.
"""

import sys

from agents.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
