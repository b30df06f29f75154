"""Do several trained policies play better together than alone? An ensemble on duplicate deals.

    python benchmarks/ensemble_probe.py runs/a/best.pt runs/b/best.pt runs/c/best.pt
    python benchmarks/ensemble_probe.py runs/a/best.pt runs/b/best.pt --opponent pretrained:indian --hands 600

The ensemble plays, greedily, the move with the highest mean log-probability over the checkpoints
(the same game and table size, each read with ``weights_only`` loading); the arena
(``agents.arena``) plays it against ``--opponent`` on ``--hands`` duplicate-dealt hands of seed
``--seed``, each deal in every seat, and prints its table. A probe of whether independent runs
make different mistakes (docs/results.md, "Indian Rummy: oracle guiding"); it trains nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.arena import ArenaConfig, print_summary, run_arena, summarize  # noqa: E402
from agents.base import Agent, AgentError, legal_actions  # noqa: E402
from agents.policy import load_checkpoint, policy_inputs  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from rummy_env.games import GAME_SPECS  # noqa: E402

ENSEMBLE = "ensemble"
"""The ensemble's name at the arena's table."""


class EnsembleAgent(Agent):
    """The move with the highest mean log-probability over several policies (greedy)."""

    name = ENSEMBLE

    def __init__(self, paths: list[str], game: str, num_players: int):
        super().__init__(game, num_players)
        if not paths:
            raise AgentError("an ensemble needs at least one checkpoint")
        self.models = [load_checkpoint(path, game, num_players)[0] for path in paths]

    def reset(self, seed: int | None = None) -> None:
        """Greedy: nothing to reseed."""

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, mask = policy_inputs(observations, masks)
        total = torch.zeros(mask.shape, dtype=torch.float32)
        for model in self.models:
            logits, _ = model(obs, mask)
            total += torch.log_softmax(logits, dim=-1).clamp_min(-1e4)  # masked moves stay far below any legal one
        return total.masked_fill(mask == 0, -torch.inf).argmax(dim=-1).numpy().astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal_actions(action_mask)
        return int(self.act_batch(observation[None, :], action_mask[None, :])[0])


def probe(paths: list[str], game: str, num_players: int, opponent: str, hands: int, seed: int,
          progress: bool = False) -> dict:
    """The arena's summary of the ensemble of ``paths`` against ``opponent`` (a round robin of two)."""
    ensemble = EnsembleAgent(paths, game, num_players)

    def factory(spec: str, index: int) -> Agent:
        return ensemble if spec == ENSEMBLE else make_agent(spec, game, num_players, seed=index)

    config = ArenaConfig(game=game, agents=(ENSEMBLE, opponent), hands=hands, num_players=num_players, seed=seed)
    return summarize(config, run_arena(config, workers=1, progress=progress, factory=factory))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="+", help="policy checkpoints (runs/NAME/best.pt) of one game and table")
    parser.add_argument("--game", choices=tuple(GAME_SPECS), default="indian", help="the game (default indian)")
    parser.add_argument("--players", type=int, default=2, help="seats at the table (default 2)")
    parser.add_argument("--opponent", default="rule", help="the other agents' spec (default rule)")
    parser.add_argument("--hands", type=int, default=2000, help="hands, rounded up to whole deals (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0, the model cards' deals)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.hands < 1:
        parser.error(f"--hands {args.hands}: expected at least 1")
    try:
        summary = probe(args.checkpoints, args.game, args.players, args.opponent, args.hands, args.seed,
                        progress=not args.no_progress)
    except AgentError as error:
        parser.error(str(error))
    print_summary(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
