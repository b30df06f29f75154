"""How closely can a network clone a teacher? The same recorded decisions, several networks.

    python benchmarks/clone_probe.py                                   # Indian, the rule agent, 3 networks
    python benchmarks/clone_probe.py --game basic --teacher rule:hold_until=3 --decisions 100000

Records ``--decisions`` of the teacher in every seat (the trainer's collector, seed ``--seed``),
holds out a tenth, clones each network on the rest for ``--epochs`` passes (Adam, a cosine step
size from 1e-3 to 55% of it, as ``train.py`` clones), and prints the held-out agreement per decision
type after each pass. The networks: ``default`` (the card network, layout 2), ``wide`` (channels
64, global size 256), ``solver-plane`` (the default with the solver plane,
``agents.solver_planes``) and ``deep`` (the default with four mixing layers, ``card_layers: 4``).
A probe of what the representation lets a network learn: it plays no hands (docs/training.md,
"The solver plane").
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.networks import CardActorCritic  # noqa: E402
from agents.training.config import make_config  # noqa: E402
from agents.training.rollout import DECISION_TYPES, decision_types  # noqa: E402
from agents.training.trainer import model_config  # noqa: E402
from agents.training.workers import Station  # noqa: E402

NETWORKS = {
    "default": {},
    "wide": {"channels": 64, "global_size": 256},
    "solver-plane": {"solver_plane": True},
    "deep": {"layers": 4},
}


def record(game: str, players: int, teacher: str, decisions: int, seed: int):
    """(observations, masks, actions) of ``decisions`` teacher moves."""
    config = make_config({"game": game, "num_players": players, "num_workers": 0})
    station = Station(dict(config.__dict__), model_config(config), 0)
    station.reseed(seed)
    data = station.collect_teacher(decisions, teacher)
    return data.observations, data.masks, data.actions


def clone(network: str, game: str, players: int, data, epochs: int, seed: int, log=print) -> dict:
    """Clone ``network`` on the training rows; the held-out agreement per decision type after the last pass."""
    observations, masks, actions = data
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(actions))
    test, train = order[:len(actions) // 10], order[len(actions) // 10:]
    torch.manual_seed(seed)
    model = CardActorCritic(game, players, layout=2, **NETWORKS[network])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    obs, mask, act = torch.from_numpy(observations), torch.from_numpy(masks), torch.from_numpy(actions.astype(np.int64))
    kinds = decision_types(game)[actions[test]]
    batches = len(train) // 512
    step, started = 0, time.process_time()
    report: dict = {}
    for epoch in range(epochs):
        shuffled = rng.permutation(train)
        model.train()
        for b in range(batches):
            rows = torch.from_numpy(shuffled[b * 512:(b + 1) * 512])
            for group in optimizer.param_groups:
                group["lr"] = 1e-3 * (0.55 + 0.45 * math.cos(math.pi * step / (epochs * batches)))
            step += 1
            logits, _ = model(obs[rows], mask[rows])
            loss = F.cross_entropy(logits, act[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            rows = torch.from_numpy(test)
            chosen = torch.cat([model(obs[rows[i:i + 4096]], mask[rows[i:i + 4096]])[0].argmax(1)
                                for i in range(0, len(rows), 4096)]).numpy()
        agree = chosen == actions[test]
        report = {"all": float(agree.mean())}
        for t, name in enumerate(DECISION_TYPES):
            if (kinds == t).any():
                report[name] = float(agree[kinds == t].mean())
        log(f"{network:>12}  epoch {epoch + 1}: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in report.items())
            + f"  ({time.process_time() - started:.0f} CPU-s)")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/clone_probe.py", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="indian", choices=("indian", "basic", "romi"),
                        help="the game (default indian)")
    parser.add_argument("--players", type=int, default=2, help="players at the table (default 2)")
    parser.add_argument("--teacher", default="rule", help="the agent spec to clone (default rule)")
    parser.add_argument("--decisions", type=int, default=150_000, help="teacher decisions recorded (default 150,000)")
    parser.add_argument("--epochs", type=int, default=8, help="passes over the training rows (default 8)")
    parser.add_argument("--networks", default=",".join(NETWORKS), help=f"comma-separated, of {', '.join(NETWORKS)}")
    parser.add_argument("--seed", type=int, default=7, help="seed of the deals and the networks (default 7)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.networks.split(",") if n not in NETWORKS]
    if unknown:
        parser.error(f"--networks: unknown {', '.join(map(repr, unknown))}; expected some of {', '.join(NETWORKS)}")
    if args.decisions < 1000 or args.epochs < 1:
        parser.error("--decisions must be at least 1000 and --epochs at least 1")
    torch.set_num_threads(1)
    data = record(args.game, args.players, args.teacher, args.decisions, args.seed)
    print(f"recorded {len(data[2]):,} decisions of {args.teacher} ({args.game}, {args.players} players)")
    final = {name: clone(name, args.game, args.players, data, args.epochs, args.seed)
             for name in args.networks.split(",")}
    print("\nheld-out agreement after the last pass:")
    for name, report in final.items():
        print(f"  {name:>12}: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in report.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
