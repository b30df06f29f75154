"""rummy-env's main job.

The self-play PPO trainer is not built yet; until it is, this runs the demo: seeded random
agents play one hand of each game and the hands are printed (``python -m rummy_env.demo``).
"""

from rummy_env.demo import main

if __name__ == "__main__":
    main()
