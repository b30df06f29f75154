"""Collecting in worker processes, so that every core plays hands.

A ``Station`` owns one ``Collector`` with its opponents, and answers commands: ``reseed``,
``pool``, ``collect``. ``Stations`` drives ``num_workers`` of them, each in its own process
(spawned, one torch thread each, talking over a pipe), or one in this process when
``num_workers`` is 0. Worker ``w`` plays seeds ``seed * 1000 + w`` after each reseed, so a run
with the same seed and the same number of workers collects the same hands.
"""

from __future__ import annotations

import multiprocessing
import signal
import traceback

import torch

from agents.policy import build_network
from agents.registry import make_agent

from .config import vector_backend
from .rollout import Collector, Rollout


class WorkerError(RuntimeError):
    """A collecting process failed; the message carries its traceback."""


class Station:
    """One collector and its opponents (see the module docstring)."""

    def __init__(self, config: dict, model_config: dict, worker: int):
        self.config = config
        self.worker = worker
        self.model_config = model_config
        self.model = build_network(config["game"], config["num_players"], model_config)
        self.model.eval()
        self.collector: Collector | None = None
        self.snapshots: dict[str, torch.nn.Module] = {}
        self.agents: dict[str, object] = {}
        self.pool = (["self"], [1.0])

    def _agent(self, spec: str, seed: int):
        if spec not in self.agents:
            self.agents[spec] = make_agent(spec, self.config["game"], self.config["num_players"], seed=seed)
        return self.agents[spec]

    def reseed(self, seed: int) -> None:
        c = self.config
        seed = seed * 1000 + self.worker
        self.agents.clear()
        self.collector = Collector(c["game"], c["num_players"], c["num_envs"], seed, self.model, c["reward_scale"],
                                   c["gamma"], c["shaping"], c["shaping_coef"], backend=vector_backend(c),
                                   shaping_potential=c.get("shaping_potential", "deadwood"))
        self._apply_pool(seed)

    def pool_update(self, names: list[str], probs: list[float], snapshots: dict[str, dict]) -> None:
        for name, state in snapshots.items():
            network = build_network(self.config["game"], self.config["num_players"], self.model_config)
            network.load_state_dict(state)
            self.snapshots[name] = network.eval()
        for name in [n for n in self.snapshots if n not in names]:
            del self.snapshots[name]
        self.pool = (list(names), list(probs))
        self._apply_pool(self.worker)

    def _apply_pool(self, seed: int) -> None:
        if self.collector is None:
            return
        names, probs = self.pool
        opponents = {n: self.snapshots[n] if n in self.snapshots else self._agent(n, seed) for n in names if n != "self"}
        self.collector.set_pool(names, probs, opponents)

    def collect(self, state_dict: dict, target: int, teacher: str | None) -> Rollout:
        self.model.load_state_dict(state_dict)
        agent = None if teacher is None else self._agent(teacher, self.worker)
        return self.collector.collect(target, agent)


def _serve(connection, config: dict, model_config: dict, worker: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the trainer's to handle: it checkpoints, then closes us
    station = None
    while True:
        command, arguments = connection.recv()
        if command == "close":
            connection.close()
            return
        try:
            if command == "start":
                torch.set_num_threads(config["torch_threads"])
                station = Station(config, model_config, worker)
                result = None
            else:
                result = getattr(station, command)(*arguments)
            connection.send(("ok", result))
        except Exception:  # noqa: BLE001 - sent back whole, raised in the trainer
            connection.send(("error", traceback.format_exc()))


class Stations:
    """``num_workers`` stations in their own processes, or one here (``num_workers`` = 0)."""

    def __init__(self, config: dict, model_config: dict):
        self.count = max(1, config["num_workers"])
        self.local = Station(config, model_config, 0) if config["num_workers"] == 0 else None
        self.connections = []
        self.processes = []
        if self.local is None:
            context = multiprocessing.get_context("spawn")
            for worker in range(self.count):
                mine, theirs = context.Pipe()
                process = context.Process(target=_serve, args=(theirs, config, model_config, worker), daemon=True)
                process.start()
                self.connections.append(mine)
                self.processes.append(process)
            self._all("start")

    def _all(self, command: str, *arguments, per_worker=None) -> list:
        if self.local is not None:
            return [getattr(self.local, command)(*(per_worker[0] if per_worker else arguments))]
        for w, connection in enumerate(self.connections):
            connection.send((command, per_worker[w] if per_worker else arguments))
        results = []
        for w, connection in enumerate(self.connections):
            try:
                status, result = connection.recv()
            except EOFError:
                raise WorkerError(f"collecting process {w} died (exit code {self.processes[w].exitcode})") from None
            if status == "error":
                raise WorkerError(f"collecting process {w} failed:\n{result}")
            results.append(result)
        return results

    def reseed(self, seed: int) -> None:
        self._all("reseed", seed)

    def pool_update(self, names: list[str], probs: list[float], snapshots: dict[str, dict]) -> None:
        self._all("pool_update", names, probs, snapshots)

    def collect(self, state_dict: dict, target: int, teacher: str | None = None) -> Rollout:
        share = -(-target // self.count)
        return Rollout.concatenate(self._all("collect", state_dict, share, teacher))

    def close(self) -> None:
        for connection in self.connections:
            try:
                connection.send(("close", ()))
            except (BrokenPipeError, OSError):
                pass
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
        self.connections, self.processes = [], []
