"""rummy-env's main job: self-play PPO training (``python train.py --help``; docs/training.md).

With no arguments it trains Indian Rummy for 2 players (``configs/default.yaml``; the README says
how long it takes and on which machine) and writes a run folder under ``runs/`` with TensorBoard
logs, checkpoints, the learning curves and the final results against the evaluation panel.
``--config NAME`` trains a shipped policy's recipe from ``configs/``.
"""

import sys

from agents.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
