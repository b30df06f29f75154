"""Inference time per action at batch 1 of an exported policy (ONNX on onnxruntime), per game.

For each game a policy is exported to ONNX (``agents.export``) and asked for one action at a time
on observations and masks of real positions (random hands, seeds 0, 1, 2, …). Three figures, each
the median over ``--runs`` runs of the mean time per call:

* ``onnx_session``: ``InferenceSession.run`` alone (what a game embedding the model pays);
* ``onnx_agent``: ``OnnxAgent.act`` (``onnx:PATH``): input conversion, the run, the masked argmax;
* ``torch_agent``: ``PolicyAgent.act`` (``ppo:PATH``) on the same checkpoint, for comparison.

    python benchmarks/bench_export.py                         # a fresh MLP (256, 256) per game
    python benchmarks/bench_export.py --games indian --checkpoint runs/indian/best.pt --runs 7

Target: at most 0.1 ms (100 µs) per action for ``onnx_session`` and ``onnx_agent``.
``export_figures(calls, runs)`` returns the figures as a dict, for a combined benchmark script.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from rummy_env.encoding import ObservationEncoder, action_layout, action_mask  # noqa: E402
from rummy_env.game import GameState  # noqa: E402

GAMES = ("indian", "basic", "romi")
TARGET_US = 100.0


def positions(game: str, num_players: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` (observation, mask) pairs of the player to act in seeded random hands."""
    rng = np.random.default_rng(0)
    moves = action_layout(game).moves
    observations, masks = [], []
    seed = 0
    while len(observations) < count:
        state = GameState.new(game, num_players, seed=f"bench-export:{seed}")
        encoder = ObservationEncoder(state.rules)
        while not state.is_over and len(observations) < count:
            mask = action_mask(state)
            observations.append(encoder.encode(state, state.current))
            masks.append(mask)
            legal = np.flatnonzero(mask)
            state.apply(moves[int(legal[rng.integers(legal.size)])])
        seed += 1
    return np.stack(observations), np.stack(masks)


def per_call_us(call, observations: np.ndarray, masks: np.ndarray, calls: int, runs: int) -> float:
    """Median over ``runs`` of the mean microseconds per ``call(observation, mask)``."""
    n = len(observations)
    for i in range(min(50, calls)):  # warm-up
        call(observations[i % n], masks[i % n])
    results = []
    for _ in range(runs):
        start = time.perf_counter()
        for i in range(calls):
            call(observations[i % n], masks[i % n])
        results.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(results)


def game_figures(game: str, checkpoint: str | None, calls: int, runs: int, num_players: int = 2) -> dict:
    """Per-action microseconds of the three ways of playing one game's policy."""
    import torch

    from agents.export import export_policy
    from agents.onnx_agent import OnnxAgent, OnnxPolicy
    from agents.policy import MaskedActorCritic, PolicyAgent, load_checkpoint, save_checkpoint
    from rummy_env.encoding import num_actions, observation_size

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="bench-export-") as work:
        if checkpoint is None:
            torch.manual_seed(0)
            model = MaskedActorCritic(observation_size(game, num_players), num_actions(game), hidden=[256, 256])
            checkpoint = str(save_checkpoint(Path(work) / f"{game}.pt", model, game, num_players))
        model, meta = load_checkpoint(checkpoint, game)
        onnx_path, _ = export_policy(checkpoint, "onnx", Path(work) / f"{game}.onnx", game)
        observations, masks = positions(game, meta["num_players"], 256)
        policy = OnnxPolicy(onnx_path, game, meta["num_players"])
        session = policy.session

        def session_run(observation, mask):
            return session.run(None, {"observations": observation[None, :], "action_masks": mask[None, :]})

        onnx_agent = OnnxAgent(policy)
        torch_agent = PolicyAgent(model, game, meta["num_players"])
        parameters = sum(p.numel() for p in model.parameters())
        return {
            "parameters": parameters,
            "onnx_session_us": round(per_call_us(session_run, observations, masks, calls, runs), 1),
            "onnx_agent_us": round(per_call_us(onnx_agent.act, observations, masks, calls, runs), 1),
            "torch_agent_us": round(per_call_us(torch_agent.act, observations, masks, calls, runs), 1),
        }


def export_figures(calls: int = 2000, runs: int = 5, games: tuple[str, ...] = GAMES,
                   checkpoint: str | None = None) -> dict:
    """{game: figures} (see ``game_figures``)."""
    return {game: game_figures(game, checkpoint, calls, runs) for game in games}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=GAMES, help="games to time (default: all)")
    parser.add_argument("--checkpoint", help="a trained checkpoint (its game must be the one game in --games); "
                                             "default: a fresh MLP (256, 256) per game")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed run (default 2000)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs; the median is reported (default 5)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = parser.parse_args(argv)
    if args.checkpoint and len(args.games) != 1:
        parser.error("--checkpoint needs exactly one game in --games")
    if args.calls < 1 or args.runs < 1:
        parser.error("--calls and --runs must be at least 1")
    figures = export_figures(args.calls, args.runs, tuple(args.games), args.checkpoint)
    print(f"{'game':<8} {'parameters':>10} {'onnx session':>13} {'onnx: agent':>12} {'ppo: agent':>11}  (µs per action, batch 1, "
          f"median of {args.runs} runs; target ≤ {TARGET_US:g} µs)")
    for game, row in figures.items():
        print(f"{game:<8} {row['parameters']:>10,} {row['onnx_session_us']:>13.1f} {row['onnx_agent_us']:>12.1f} "
              f"{row['torch_agent_us']:>11.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    return figures


if __name__ == "__main__":
    main()
