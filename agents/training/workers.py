"""The collecting processes: each plays hands, keeps what it collected, and learns from it.

A ``Station`` is a learner replica (``agents.training.learner.Learner``) with a ``Collector`` and
its opponents. ``Workers`` runs ``num_workers`` of them, each in its own process (spawned,
``torch_threads`` torch threads each, talking over a pipe, and joined in a gloo process group
that averages their gradients), or one in this process when ``num_workers`` is 0. Any method of
``Station`` is called on every station through ``Workers`` by its name
(``workers.collect(share)``, ``workers.ppo_update(settings)``): the call crosses each pipe, runs
in each process, and comes back as the list of their results; an error in a process is raised
here as a ``WorkerError`` with its traceback. With a learner on another device
(``--device cuda``) the stations only collect, and a ``Station`` here, on that device, learns.

Worker ``w`` plays seeds ``seed * 1000 + w`` after each reseed, so a run with the same seed and the
same number of workers collects the same hands.
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import tempfile
import traceback
from dataclasses import dataclass

import numpy as np
import torch

from agents.policy import build_network
from agents.registry import make_agent
from rummy_env.ruleset import make_ruleset

from .interrupts import INTERRUPTS
from .learner import Group, Learner
from .ppo import advantages
from .rollout import DECISION_TYPES, Collector, Rollout, decision_types


class WorkerError(RuntimeError):
    """A collecting process failed; the message carries its traceback."""


@dataclass
class Summary:
    """What an update's collection reports back: decisions, env steps and the finished hands."""

    decisions: int
    env_steps: int
    hands: list

    @staticmethod
    def of(rollouts: list) -> Summary:
        """The summary of several processes' rollouts (or of their summaries)."""
        return Summary(sum(r.decisions if isinstance(r, Summary) else len(r) for r in rollouts),
                       sum(r.env_steps for r in rollouts), [h for r in rollouts for h in r.hands])


@dataclass
class CloneData:
    """A process's recorded teacher decisions, their returns and its held-out rows."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    train_rows: np.ndarray
    test_rows: np.ndarray

    @staticmethod
    def split(data: Rollout, gamma: float, holdout: float, rng: np.random.Generator) -> CloneData:
        """``data``'s decisions with their returns, a ``holdout`` share of them held out."""
        returns = advantages(data.rewards, np.zeros(len(data), np.float32), data.next_index, data.done,
                             data.bootstrap, gamma, 1.0)[1]
        held = max(1, int(len(data) * holdout))
        order = rng.permutation(len(data))
        return CloneData(data.observations, data.masks, data.actions, returns, np.sort(order[held:]),
                         np.sort(order[:held]))


class Station(Learner):
    """A learner replica with a collector, its opponents and its share of the cloning data."""

    def __init__(self, config: dict, model_config: dict, worker: int, group: Group | None = None,
                 device: torch.device | str = "cpu"):
        model = build_network(config["game"], config["num_players"], model_config).eval()
        super().__init__(model, config["learning_rate"], group, device, rank=worker)
        self.config = config
        self.worker = worker
        self.model_config = model_config
        self.collector: Collector | None = None
        self.clone_parts: list[Rollout] = []
        self.clone_data: CloneData | None = None
        self.snapshots: dict[str, torch.nn.Module] = {}
        self.agents: dict[str, object] = {}
        self.pool = (["self"], [1.0])

    def _agent(self, spec: str, seed: int):
        if spec not in self.agents:  # a shipped policy plays from the run's copy (agents.training.pinned)
            played = self.config.get("stand_ins", {}).get(spec, spec)
            rules = make_ruleset(self.config["game"], self.config["num_players"])
            self.agents[spec] = make_agent(played, rules, seed=seed)
        return self.agents[spec]

    # ------------------------------------------------------------------ collecting

    def reseed(self, seed: int) -> None:
        c = self.config
        seed = seed * 1000 + self.worker
        self.agents.clear()
        self.collector = Collector(c["game"], c["num_players"], c["num_envs"], seed, self.model, c["reward_scale"],
                                   c["gamma"], c["shaping"], c["shaping_coef"], pool=self._pool(seed),
                                   win_bonus=c["win_bonus"])

    def pool_update(self, names: list[str], probs: list[float], snapshots: dict[str, dict]) -> None:
        for name, state in snapshots.items():
            network = build_network(self.config["game"], self.config["num_players"], self.model_config)
            network.load_state_dict(state)
            self.snapshots[name] = network.eval()
        for name in [n for n in self.snapshots if n not in names]:
            del self.snapshots[name]  # the collector keeps it while hands against it are still being played
        self.pool = (list(names), list(probs))
        if self.collector is not None:
            self.collector.set_pool(*self._pool(self.worker))

    def _pool(self, seed: int) -> tuple[list[str], list[float], dict]:
        """(names, chances, opponents by name) of the current pool, agents seeded with ``seed``."""
        names, probs = self.pool
        opponents = {n: self.snapshots[n] if n in self.snapshots else self._agent(n, seed)
                     for n in names if n != "self"}
        return names, probs, opponents

    def collect(self, target: int, oracle_share: float = 0.0, keep: bool = True) -> Summary | Rollout:
        """``target`` learner decisions with the current network (``oracle_share``: ``Collector.reveal``);
        kept here for ``ppo_update`` (a summary comes back) or, with ``keep`` False, sent back whole."""
        rollout = self.collector.collect(target, oracle_share=oracle_share)
        if not keep:
            return rollout
        self.rollout = rollout
        return Summary.of([rollout])

    def keep(self, rollouts: list[Rollout]) -> None:
        """Learn from ``rollouts`` in the next PPO update (a learner that does not collect)."""
        self.rollout = Rollout.concatenate(rollouts)

    # ------------------------------------------------------------------ cloning

    def record_teacher(self, target: int, teacher: str) -> int:
        """Record ``target`` more decisions of ``teacher`` in every seat; the number recorded so far."""
        return self.keep_teacher([self.collect_teacher(target, teacher)])

    def collect_teacher(self, target: int, teacher: str) -> Rollout:
        """``target`` decisions of ``teacher`` in every seat (every hand played to its end)."""
        return self.collector.collect(target, self._agent(teacher, self.worker))

    def keep_teacher(self, rollouts: list[Rollout]) -> int:
        """Add recorded teacher decisions to the cloning data; the number recorded so far."""
        self.clone_parts.extend(rollouts)
        return sum(len(p) for p in self.clone_parts)

    def clone_split(self, holdout: float, seed: int) -> int:
        """The decisions recorded become the cloning data (returns of the hand, held-out rows); the
        number of training rows."""
        data = Rollout.concatenate(self.clone_parts)
        self.clone_parts = []
        rng = np.random.default_rng(seed * 1000 + self.worker)
        self.clone_data = CloneData.split(data, self.config["gamma"], holdout, rng)
        return len(self.clone_data.train_rows)

    def clone_epoch(self, minibatches: int, learning_rates: list[float], seed: int) -> None:
        c = self.config
        self.clone_pass(self.clone_data, self.clone_data.train_rows, minibatches, learning_rates, c["vf_coef"],
                        c["max_grad_norm"] * 10, seed)

    @torch.no_grad()
    def clone_accuracy(self) -> np.ndarray:
        """Per decision type: [agreeing, held-out decisions], then [squared value error, decisions]."""
        data, rows = self.clone_data, self.clone_data.test_rows
        types = decision_types(self.config["game"])[data.actions[rows]]
        sums = np.zeros((len(DECISION_TYPES) + 1, 2))
        for start in range(0, len(rows), 2048):
            part = rows[start:start + 2048]
            logits, values = self.model(*self.tensors(data.observations[part], data.masks[part]))
            agree = logits.argmax(dim=-1).cpu().numpy() == data.actions[part]
            for t in range(len(DECISION_TYPES)):
                chosen = types[start:start + len(part)] == t
                sums[t] += (agree[chosen].sum(), chosen.sum())
            sums[-1] += (float(((values.cpu().numpy() - data.returns[part]) ** 2).sum()), len(part))
        return sums

    def clone_done(self) -> None:
        self.clone_data = None

    # ------------------------------------------------------------------ the network

    def get_state(self, optimizer: bool = False) -> dict:
        """The network (and the optimiser) as plain CPU tensors."""
        state = {"model": {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()}}
        if optimizer:
            state["optimizer"] = self.optimizer.state_dict()
        return state

    def set_state(self, model: dict, optimizer: dict | None = None) -> None:
        self.model.load_state_dict(model)
        if optimizer is not None:
            self.optimizer.load_state_dict(optimizer)


def _serve(connection, config: dict, model_config: dict, worker: int, workers: int, store: str) -> None:
    """A collecting process: a ``Station``, then any of its methods called by name until ``close``."""
    # Ctrl-C and SIGTERM (also when sent to the whole process group) are the trainer's to handle:
    # it checkpoints, asking us for our state, then closes us
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    torch.set_num_threads(config["torch_threads"])
    try:
        if workers > 1:
            torch.distributed.init_process_group("gloo", init_method=f"file://{store}", rank=worker,
                                                 world_size=workers)
        station = Station(config, model_config, worker, Group(workers))
        connection.send(("ok", None))
    except Exception:  # noqa: BLE001 - sent back whole, raised in the trainer
        connection.send(("error", traceback.format_exc()))
        return
    while True:
        method, arguments = connection.recv()
        if method == "close":
            if workers > 1 and torch.distributed.is_initialized():
                torch.distributed.destroy_process_group()
            connection.close()
            return
        try:
            connection.send(("ok", getattr(station, method)(*arguments)))
        except Exception:  # noqa: BLE001 - sent back whole, raised in the trainer
            connection.send(("error", traceback.format_exc()))


class Workers:
    """``num_workers`` stations in their own processes, or ``local`` ones here; ``workers.NAME(*args)``
    calls ``Station.NAME(*args)`` on every station and returns their results in worker order."""

    def __init__(self, config: dict, model_config: dict, local: list[Station] | None = None):
        self.count = max(1, config["num_workers"]) if local is None else len(local)
        if local is None and config["num_workers"] == 0:
            local = [Station(config, model_config, 0)]
        self.local = local
        self.connections = []
        self.processes = []
        self._unread: set[int] = set()  # workers whose last reply an interrupted call never read
        self._folder = None
        if self.local is None:
            self._folder = tempfile.TemporaryDirectory(prefix="rummy-train-")
            store = os.path.join(self._folder.name, "group")
            context = multiprocessing.get_context("spawn")
            for worker in range(self.count):
                mine, theirs = context.Pipe()
                process = context.Process(target=_serve, args=(theirs, config, model_config, worker, self.count, store),
                                          daemon=True)
                process.start()
                self.connections.append(mine)
                self.processes.append(process)
                self._unread.add(worker)  # its "started" reply
            self._gather(range(self.count))

    def __getattr__(self, method: str):
        if method.startswith("_"):
            raise AttributeError(method)
        return functools.partial(self.call, method)

    def call(self, method: str, *arguments, first_only: bool = False) -> list:
        """``Station.method(*arguments)`` on every station (or the first alone); their results."""
        if self.local is not None:
            return [getattr(station, method)(*arguments) for station in self.local[:1 if first_only else None]]
        self._drop_unread()
        chosen = range(1 if first_only else len(self.connections))
        for w in chosen:
            self._send(w, (method, arguments))
        return self._gather(chosen)

    def _gather(self, chosen) -> list:
        """The replies of workers ``chosen``, in their order; read in arrival order, so that a failure
        is seen even while the others wait on it."""
        results: dict[int, object] = {}
        waiting = {w: self.connections[w] for w in chosen}
        while waiting:
            for connection in multiprocessing.connection.wait(list(waiting.values())):
                w = next(k for k, c in waiting.items() if c is connection)
                status, result = self._reply(w)
                if status == "error":
                    self.close(force=True)
                    raise WorkerError(f"collecting process {w} failed:\n{result}")
                results[w] = result
                del waiting[w]
        return [results[w] for w in sorted(results)]

    def _drop_unread(self) -> None:
        """Wait for and drop the replies of a call that Ctrl-C or SIGTERM cut short, so that the next
        call (the checkpoint's ``get_state``) reads its own reply, not the last one's."""
        for w in sorted(self._unread):
            self._reply(w)

    def _reply(self, w: int) -> tuple[str, object]:
        """Worker ``w``'s next reply, ``(status, result)``; a ``WorkerError`` if it died."""
        multiprocessing.connection.wait([self.connections[w]])  # Ctrl-C still stops the wait itself
        with INTERRUPTS.held():  # read and noted read together, or neither
            try:
                reply = self.connections[w].recv()
            except EOFError:
                self._died(w)
            self._unread.discard(w)
        return reply

    def _send(self, w: int, message: tuple) -> None:
        """Send worker ``w`` a command; its reply is then owed (``_unread``)."""
        with INTERRUPTS.held():  # sent whole and its reply noted owed, or neither
            try:
                self.connections[w].send(message)
            except (BrokenPipeError, ConnectionResetError):
                self._died(w)
            self._unread.add(w)

    def _died(self, w: int) -> None:
        process = self.processes[w]
        self.close(force=True)  # reaps it, so its exit code is known
        raise WorkerError(f"collecting process {w} died (exit code {process.exitcode})") from None


    def share(self, target: int) -> int:
        """Each process's part of ``target`` decisions."""
        return -(-target // self.count)

    def pids(self) -> list[int]:
        """Process ids of the live collecting processes."""
        return [p.pid for p in self.processes if p.is_alive()]

    def close(self, force: bool = False) -> None:
        for connection in self.connections:
            try:
                connection.send(("close", ()))
            except (BrokenPipeError, OSError):
                pass
        for process in self.processes:  # every worker is reaped, so its CPU time reaches RUSAGE_CHILDREN
            if not force:
                process.join(timeout=5)
            if process.is_alive():
                process.kill()  # not terminate(): the workers ignore SIGTERM (the trainer handles it)
            process.join()
        self.connections, self.processes = [], []
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None


def minibatch_count(total: int, minibatch_size: int) -> int:
    """Minibatches an update of ``total`` decisions is split into (every process splits its own
    share into as many)."""
    return max(1, math.ceil(total / minibatch_size))

