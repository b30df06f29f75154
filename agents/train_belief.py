"""Training a belief about the hidden hands (``agents.belief``): record, fit, report, write.

    python -m agents.train_belief --game indian --agents pretrained:indian rule --positions 300000 \
        --out beliefs/indian-2p-belief.onnx

Positions are recorded from hands in which every seat is played by one of ``--agents`` (drawn per
seat and hand), each observed by the seat to act. The target of a position is what each other
seat really holds beyond the cards the observer knows it took from the pile (G7); the loss is the
cross-entropy of each unseen copy being in that hand. The report gives the held-out
log-likelihood per unseen copy next to the uniform deal's on the same positions (docs/agents.md,
"Beliefs").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rummy_env.cards import NUM_NATURAL, NUM_TYPES
from rummy_env.encoding import observation_layout, observation_size
from rummy_env.games import GAME_SPECS
from rummy_env.ruleset import make_ruleset

from .base import AgentError
from .belief import BELIEF_FORMAT, HIDDEN, INPUT_NAME, METADATA_KEY, OUTPUT_NAME, belief_network, probabilities_of
from .registry import make_agent

# ----------------------------------------------------------------------------- what is hidden


class HiddenCards:
    """Reads, for observations of one game and table size, the unseen copies of each card, and from
    a ``VectorGame`` the cards each other seat holds beyond those the observer knows of."""

    def __init__(self, game: str, num_players: int):
        rules = make_ruleset(game, num_players)
        self.game, self.num_players = game, num_players
        parts = observation_layout(game, num_players)
        self.parts = parts
        self.copies = np.array([rules.decks] * NUM_NATURAL + [rules.printed_jokers], np.float32)
        self.seen_planes = [parts[name] for name in ("hand", "discard_top", "discard_rest", "table_cards",
                                                     "cut_card", "wild_card") if name in parts]
        self.known = parts["known"]

    def known_cards(self, observations: np.ndarray) -> np.ndarray:
        """(B, players, 53): each seat's cards the observer knows of (row 0: the observer)."""
        return observations[:, self.known].reshape(len(observations), self.num_players, NUM_TYPES)

    def unseen(self, observations: np.ndarray) -> np.ndarray:
        """(B, 53): copies of each card the observer cannot place (in other hands beyond what it
        knows of them, or in the stock)."""
        observations = np.asarray(observations, np.float32)
        seen = sum(observations[:, part] for part in self.seen_planes)
        seen = seen + self.known_cards(observations)[:, 1:].sum(axis=1)
        return np.maximum(self.copies - seen, 0.0)

    def targets(self, venv, rows: np.ndarray, observations: np.ndarray) -> np.ndarray:
        """(len(rows), players - 1, 53): what each seat after the observer (the seat to act in each
        row) holds beyond the cards the observer knows of."""
        hand = self.parts["hand"]
        known = self.known_cards(observations)
        out = np.zeros((len(rows), self.num_players - 1, NUM_TYPES), np.float32)
        for k, i in enumerate(np.asarray(rows).tolist()):
            seat = int(venv.to_act[i])
            for offset in range(1, self.num_players):
                held = venv.observe(i, (seat + offset) % self.num_players)[hand]
                out[k, offset - 1] = held - known[k, offset]
        return out


# ----------------------------------------------------------------------------- recording


@dataclass
class Positions:
    """Recorded positions: observations, hidden cards (targets) and unseen copies per card."""

    observations: np.ndarray
    hidden: np.ndarray
    unseen: np.ndarray

    def __len__(self) -> int:
        return len(self.observations)


def record(game: str, num_players: int, agents: list[str], positions: int, seed: int = 0,
           share: float = 0.25, num_envs: int = 256, progress=None) -> Positions:
    """``positions`` positions of hands in which every seat is played by one of ``agents`` (agent
    specs, drawn per seat and hand), each a ``share`` of the decisions, observed by the seat to act."""
    from rummy_env.vector import VectorGame

    players = [make_agent(spec, game, num_players, seed=seed) for spec in agents]
    reader = HiddenCards(game, num_players)
    venv = VectorGame(game, num_envs, num_players, seed=seed, backend="numba")
    venv.reset(seed)
    rng = np.random.default_rng(seed)
    seated = rng.integers(len(players), size=(num_envs, num_players))
    parts: list[tuple] = []
    count = 0
    everyone = np.arange(num_envs)
    while count < positions:
        observations, masks, to_act = venv.observations.copy(), venv.action_masks.copy(), venv.to_act.copy()
        rows = np.flatnonzero(rng.random(num_envs) < share)[:positions - count]
        if rows.size:
            parts.append((observations[rows], reader.targets(venv, rows, observations[rows]),
                          reader.unseen(observations[rows])))
            count += rows.size
            if progress is not None:
                progress(rows.size)
        actions = np.zeros(num_envs, np.int64)
        kinds = seated[everyone, to_act]
        for k, player in enumerate(players):
            chosen = np.flatnonzero(kinds == k)
            if chosen.size:
                actions[chosen] = player.act_batch(observations[chosen], masks[chosen])
        venv.step(actions)
        for i in np.flatnonzero(venv.terminated | venv.truncated):
            seated[i] = rng.integers(len(players), size=num_players)
    return Positions(*(np.concatenate([p[k] for p in parts]) for k in range(3)))


def log_likelihood(probabilities: np.ndarray, data: Positions) -> float:
    """Mean log-likelihood per unseen copy: each copy held (or not) by each other seat, as a coin
    with that seat's probability for its card."""
    p = np.clip(probabilities, 1e-6, 1 - 1e-6)
    unseen = data.unseen[:, None, :]
    total = (data.hidden * np.log(p) + (unseen - data.hidden) * np.log(1 - p)).sum()
    return float(total / (unseen.sum() * probabilities.shape[1]))


def uniform_probabilities(data: Positions) -> np.ndarray:
    """The belief of a uniform deal: every unseen copy equally likely in each hand (its share of them)."""
    share = data.hidden.sum(axis=2, keepdims=True) / np.maximum(data.unseen.sum(axis=1)[:, None, None], 1.0)
    return np.broadcast_to(share, data.hidden.shape).copy()


def fit(data: Positions, game: str, num_players: int, epochs: int = 4, learning_rate: float = 1e-3,
        batch_size: int = 512, holdout: float = 0.1, seed: int = 0) -> tuple[object, dict]:
    """Train a belief on ``data`` (held-out share ``holdout``); the network and its report: held-out
    log-likelihood per unseen copy, the uniform deal's on the same positions, and per epoch."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    net = belief_network(game, num_players)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    order = np.random.default_rng(seed).permutation(len(data))
    held = max(1, int(len(data) * holdout))
    test_rows, train_rows = np.sort(order[:held]), order[held:]
    observations, hidden, unseen = (torch.from_numpy(np.ascontiguousarray(a, np.float32))
                                    for a in (data.observations, data.hidden, data.unseen))
    unseen = unseen[:, None, :].expand_as(hidden)
    share = torch.where(unseen > 0, hidden / unseen.clamp(min=1.0), torch.zeros_like(hidden))
    test = Positions(data.observations[test_rows], data.hidden[test_rows], data.unseen[test_rows])
    report = {"positions": len(data), "held_out": int(held),
              "uniform_log_likelihood": log_likelihood(uniform_probabilities(test), test), "epochs": []}
    rows = torch.from_numpy(train_rows)
    for _ in range(epochs):
        net.train()
        for batch in rows[torch.randperm(len(rows), generator=generator)].split(batch_size):
            logits = net(observations[batch])
            weight = unseen[batch]
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(logits, share[batch], reduction="none")
                    * weight).sum() / weight.sum().clamp(min=1.0)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        report["epochs"].append(log_likelihood(probabilities_of(net, test.observations), test))
    report["log_likelihood"] = report["epochs"][-1]
    return net.eval(), report


# ----------------------------------------------------------------------------- files


def save(path: str | os.PathLike, net, game: str, num_players: int, report: dict) -> Path:
    """Write a belief atomically: a checkpoint (``.pt``) or, for ``.onnx``, an ONNX export with its
    metadata inside. Returns the path."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format": BELIEF_FORMAT, "version": 1, "game": game, "num_players": int(num_players),
            "hidden": list(HIDDEN), "report": report}
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(handle)
    try:
        if path.suffix == ".onnx":
            import onnx

            class Probabilities(torch.nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner

                def forward(self, observations):
                    return torch.sigmoid(self.inner(observations))

            from .export import ONNX_OPSET

            example = torch.zeros(1, observation_size(game, num_players))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the TorchScript-based exporter is deprecated but needs no onnxscript
                torch.onnx.export(Probabilities(net.eval()), (example,), temporary, input_names=[INPUT_NAME],
                                  output_names=[OUTPUT_NAME], dynamic_axes={INPUT_NAME: {0: "batch"},
                                                                            OUTPUT_NAME: {0: "batch"}},
                                  opset_version=ONNX_OPSET, dynamo=False)
            model = onnx.load(temporary)
            entry = model.metadata_props.add()
            entry.key, entry.value = METADATA_KEY, json.dumps(meta)
            onnx.save(model, temporary)
        else:
            torch.save({**meta, "state_dict": net.state_dict()}, temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return path


# ----------------------------------------------------------------------------- the command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.train_belief",
        description="Train a belief about the hidden hands for the search at play time (docs/agents.md, "
                    "\"Beliefs\"): record positions of the agents' hands, learn what the other seats hold, "
                    "report the held-out log-likelihood against uniform deals, write the file.")
    parser.add_argument("--game", required=True, choices=sorted(GAME_SPECS), help="the game (docs/rules.md)")
    parser.add_argument("--players", type=int, default=2, help="players at the table (default 2)")
    parser.add_argument("--agents", nargs="+", default=["rule"],
                        help="agent specs drawn per seat and hand for the recorded play (default: rule)")
    parser.add_argument("--positions", type=int, default=300_000, help="positions to record (default 300000)")
    parser.add_argument("--epochs", type=int, default=4, help="passes over the positions (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hands and the network (default 0)")
    parser.add_argument("--out", required=True, help="the file to write: .onnx (onnxruntime) or .pt (torch)")
    args = parser.parse_args(argv)
    if args.positions < 100:
        parser.error(f"--positions {args.positions}: at least 100")
    if args.epochs < 1:
        parser.error(f"--epochs {args.epochs}: at least 1")
    if Path(args.out).suffix not in (".onnx", ".pt"):
        parser.error(f"--out {args.out!r}: name a .onnx or a .pt file")
    try:
        make_ruleset(args.game, args.players)
        for spec in args.agents:
            make_agent(spec, args.game, args.players)
    except (AgentError, ValueError) as error:
        parser.error(str(error))
    from tqdm import tqdm

    with tqdm(total=args.positions, desc="recording", unit="position", file=sys.stderr) as bar:
        data = record(args.game, args.players, args.agents, args.positions, args.seed, progress=bar.update)
    net, report = fit(data, args.game, args.players, epochs=args.epochs, seed=args.seed)
    report |= {"agents": args.agents, "seed": args.seed}
    save(args.out, net, args.game, args.players, report)
    print(f"held-out log-likelihood per unseen copy: {report['log_likelihood']:.4f} "
          f"(uniform deals {report['uniform_log_likelihood']:.4f}) on {report['held_out']:,} positions; "
          f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
