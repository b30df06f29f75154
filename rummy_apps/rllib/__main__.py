"""``python -m rummy_apps.rllib``: the command line of ``rummy_apps.rllib.trainer``."""

import sys

from .trainer import main

sys.exit(main())
