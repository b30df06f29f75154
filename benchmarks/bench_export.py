"""Inference time per action at batch 1 of an exported policy (ONNX on onnxruntime), per game.

For each game a policy is exported to ONNX (``agents.export``) and asked for one action at a time
on observations and masks of real positions (random hands, seeds 0, 1, 2, …). Three figures, each
the median over ``--runs`` runs of the mean time per call:

* ``onnx_session``: ``InferenceSession.run`` alone (what a game embedding the model pays);
* ``onnx_agent``: ``OnnxAgent.act`` (``onnx:PATH``): input conversion, the run, the masked argmax;
* ``torch_agent``: ``PolicyAgent.act`` (``ppo:PATH``) on the same checkpoint, for comparison.

    python benchmarks/bench_export.py                         # a fresh MLP (256, 256) per game
    python benchmarks/bench_export.py --network card           # the card-aware network instead
    python benchmarks/bench_export.py --games indian --checkpoint runs/indian/best.pt --runs 7

Each figure is given as wall time and as this process's CPU time (``_cpu_us``); on a shared
machine the CPU time is the code's own cost. Target: at most 0.1 ms (100 µs) per action for
``onnx_session`` and ``onnx_agent``.
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

from rummy_env.ruleset import GAMES, make_ruleset  # noqa: E402
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


def per_call_us(call, observations: np.ndarray, masks: np.ndarray, calls: int, runs: int) -> tuple[float, float]:
    """(wall, CPU) microseconds per ``call(observation, mask)``: medians over ``runs`` of the mean.

    On a shared machine the wall figure grows with the load; the CPU figure (this process, one
    inference thread) is the code's own cost."""
    n = len(observations)
    for i in range(min(50, calls)):  # warm-up
        call(observations[i % n], masks[i % n])
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        for i in range(calls):
            call(observations[i % n], masks[i % n])
        wall.append((time.perf_counter() - start) / calls * 1e6)
        cpu.append((time.process_time() - start_cpu) / calls * 1e6)
    return round(statistics.median(wall), 1), round(statistics.median(cpu), 1)


def build_model(game: str, num_players: int, network: str, checkpoint: str | None):
    """(torch network, checkpoint-style metadata): a checkpoint's, or a fresh MLP or card-aware network."""
    import torch

    from agents.policy import MaskedActorCritic, load_checkpoint
    from rummy_env.encoding import num_actions, observation_size

    if checkpoint is not None:
        return load_checkpoint(checkpoint, game)
    torch.manual_seed(0)
    if network == "card":
        from agents.networks import CardActorCritic

        model = CardActorCritic(game, num_players).eval()
    else:
        model = MaskedActorCritic(observation_size(game, num_players), num_actions(game), hidden=[256, 256]).eval()
    meta = {"game": game, "num_players": num_players, "observation_size": observation_size(game, num_players),
            "num_actions": num_actions(game), "model": {"kind": network}, "config": {}}
    return model, meta


def game_figures(game: str, checkpoint: str | None, calls: int, runs: int, num_players: int = 2,
                 network: str = "mlp") -> dict:
    """Per-action microseconds of the three ways of playing one game's policy."""
    import torch

    from agents.export import export_model
    from agents.onnx_agent import OnnxAgent, OnnxPolicy
    from agents.policy import PolicyAgent

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="bench-export-") as work:
        model, meta = build_model(game, num_players, network, checkpoint)
        onnx_path, _ = export_model(model, meta, Path(work) / f"{game}.onnx", "onnx")
        observations, masks = positions(game, meta["num_players"], 256)
        policy = OnnxPolicy(onnx_path, game, meta["num_players"])
        session = policy.session

        def session_run(observation, mask):
            return session.run(None, {"observations": observation[None, :], "action_masks": mask[None, :]})

        rules = make_ruleset(game, meta["num_players"])
        onnx_agent = OnnxAgent(policy, rules)
        torch_agent = PolicyAgent(model, rules)
        parameters = sum(p.numel() for p in model.parameters())
        figures = {"parameters": parameters}
        calls_to_time = (("onnx_session", session_run), ("onnx_agent", onnx_agent.act),
                         ("torch_agent", torch_agent.act))
        for name, call in calls_to_time:
            figures[f"{name}_us"], figures[f"{name}_cpu_us"] = per_call_us(call, observations, masks, calls, runs)
        return figures


def export_figures(calls: int = 2000, runs: int = 5, games: tuple[str, ...] = GAMES,
                   checkpoint: str | None = None, network: str = "mlp") -> dict:
    """{game: figures} (see ``game_figures``)."""
    return {game: game_figures(game, checkpoint, calls, runs, network=network) for game in games}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=GAMES, help="games to time (default: all)")
    parser.add_argument("--checkpoint", help="a trained checkpoint (its game must be the one game in --games); "
                                             "default: a fresh MLP (256, 256) per game")
    parser.add_argument("--network", choices=("mlp", "card"), default="mlp",
                        help="without --checkpoint: a fresh MLP (256, 256) or card-aware network (agents.networks)")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed run (default 2000)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs; the median is reported (default 5)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = parser.parse_args(argv)
    if args.checkpoint and len(args.games) != 1:
        parser.error("--checkpoint needs exactly one game in --games")
    if args.calls < 1 or args.runs < 1:
        parser.error("--calls and --runs must be at least 1")
    figures = export_figures(args.calls, args.runs, tuple(args.games), args.checkpoint, args.network)
    print(f"µs per action at batch 1, wall / CPU, median of {args.runs} runs of {args.calls} calls; "
          f"target ≤ {TARGET_US:g} µs")
    print(f"{'game':<8} {'parameters':>10} {'onnx session':>15} {'onnx: agent':>15} {'ppo: agent':>15}  "
          "verdict (onnx: agent, CPU)")
    for game, row in figures.items():
        cells = [f"{row[f'{n}_us']:.1f} / {row[f'{n}_cpu_us']:.1f}"
                 for n in ("onnx_session", "onnx_agent", "torch_agent")]
        verdict = "meets" if row["onnx_agent_cpu_us"] <= TARGET_US else "above"
        print(f"{game:<8} {row['parameters']:>10,} {cells[0]:>15} {cells[1]:>15} {cells[2]:>15}  {verdict}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    return figures


if __name__ == "__main__":
    main()
