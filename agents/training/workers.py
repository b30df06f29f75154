"""The collecting processes: each plays hands, keeps what it collected, and learns from it.

A ``Station`` owns one ``Collector`` with its opponents and a replica of the learner
(``agents.training.learner``). ``Stations`` drives ``num_workers`` of them, each in its own process
(spawned, ``torch_threads`` torch threads each, talking over a pipe, and joined in a gloo process
group that averages their gradients), or one in this process when ``num_workers`` is 0. The
commands: ``reseed``, ``pool_update``, ``collect`` (the decisions stay in the process; a summary of
the hands comes back), ``update`` (one PPO update on them), ``record_teacher``/``clone_epoch``/
``clone_accuracy`` (cloning), ``get_state``/``set_state`` (the network and optimiser, for
checkpoints, evaluation and snapshots). With a learner on another device (``--device cuda``)
``collect`` sends the rollout itself and the trainer updates it there.

Worker ``w`` plays seeds ``seed * 1000 + w`` after each reseed, so a run with the same seed and the
same number of workers collects the same hands.
"""

from __future__ import annotations

import copy
import dataclasses
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
from agents.policy_search import Actors, GreedyNetwork
from agents.registry import make_agent

from .config import vector_backend
from .critic import OracleCritic
from .interrupts import INTERRUPTS
from .learner import Group, Learner, PPOSettings
from .ppo import advantages
from .rollout import DECISION_TYPES, Collector, Rollout, decision_types


class WorkerError(RuntimeError):
    """A collecting process failed; the message carries its traceback."""


@dataclass
class Summary:
    """What ``collect`` sends back when the decisions stay in the process."""

    decisions: int
    env_steps: int
    hands: list


@dataclass
class CloneData:
    """A process's recorded teacher decisions, their returns and its held-out rows."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    train_rows: np.ndarray
    test_rows: np.ndarray
    hidden: np.ndarray | None = None

    @staticmethod
    def split(data: Rollout, gamma: float, holdout: float, rng: np.random.Generator,
              before: CloneData | None = None) -> CloneData:
        """``data``'s decisions with their returns, a ``holdout`` share of them held out; appended to
        ``before`` (a DAgger round adds to the first recording; rows held out stay held out)."""
        returns = advantages(data.rewards, np.zeros(len(data), np.float32), data.next_index, data.done,
                             data.bootstrap, gamma, 1.0)[1]
        held = max(1, int(len(data) * holdout))
        order = rng.permutation(len(data))
        new = CloneData(data.observations, data.masks, data.actions, returns, np.sort(order[held:]),
                        np.sort(order[:held]), data.hidden)
        if before is None:
            return new
        offset = len(before.actions)
        hidden = None if before.hidden is None else np.concatenate([before.hidden, new.hidden])
        return CloneData(*(np.concatenate([getattr(before, name), getattr(new, name)]) for name in
                           ("observations", "masks", "actions", "returns")),
                         np.concatenate([before.train_rows, new.train_rows + offset]),
                         np.concatenate([before.test_rows, new.test_rows + offset]), hidden)


class Station:
    """One collector, its opponents and a learner replica (see the module docstring)."""

    def __init__(self, config: dict, model_config: dict, worker: int, group: Group | None = None):
        self.config = config
        self.worker = worker
        self.model_config = model_config
        self.model = build_network(config["game"], config["num_players"], model_config)
        self.model.eval()
        self.critic = make_critic(config)
        self.learner = Learner(self.model, config["learning_rate"], group, critic=self.critic)
        self.collector: Collector | None = None
        self.rollout: Rollout | None = None
        self.clone_parts: list[Rollout] = []
        self.clone_data: CloneData | None = None
        self.snapshots: dict[str, torch.nn.Module] = {}
        self.agents: dict[str, object] = {}
        self.pool = (["self"], [1.0])
        self.search = None
        self.greedy: dict[str, object] = {}  # snapshots as rollout opponents (expert_worlds: true)
        capacity = -(-config["expert_buffer"] // max(1, config["num_workers"]))
        self.targets = SearchTargets(capacity)

    def _agent(self, spec: str, seed: int):
        if spec not in self.agents:  # a shipped policy plays from the run's copy (agents.training.pinned)
            played = self.config.get("stand_ins", {}).get(spec, spec)
            self.agents[spec] = make_agent(played, self.config["game"], self.config["num_players"], seed=seed)
        return self.agents[spec]

    # ------------------------------------------------------------------ collecting

    def reseed(self, seed: int) -> None:
        c = self.config
        seed = seed * 1000 + self.worker
        self.agents.clear()
        self.targets = SearchTargets(self.targets.capacity)  # as a run resumed here starts: with none
        self.collector = Collector(c["game"], c["num_players"], c["num_envs"], seed, self.model, c["reward_scale"],
                                   c["gamma"], c["shaping"], c["shaping_coef"], backend=vector_backend(c),
                                   shaping_potential=c.get("shaping_potential", "deadwood"),
                                   pool=self._pool(seed), critic=self.critic, win_bonus=c.get("win_bonus", 0.0),
                                   capture_rate=capture_rate(c), shared_seats=c.get("pool_shared_seats", 0.0),
                                   oracle_reveal=c.get("oracle_reveal", "decision"))

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

    def collect(self, target: int, keep: bool = True, state_dict: dict | None = None,
                oracle_share: float = 0.0) -> Summary | Rollout:
        """``target`` learner decisions with the current network (``oracle_share``: ``Collector.reveal``);
        kept here for ``update`` (a summary comes back) or, with ``keep`` False, sent back whole."""
        if state_dict is not None:
            self.model.load_state_dict(state_dict)
        rollout = self.collector.collect(target, oracle_share=oracle_share)
        self.greedy.clear()
        if not keep:  # the captured states stay here, for search_targets
            self.rollout = rollout if rollout.captures else None
            return dataclasses.replace(rollout, captures=[])
        self.rollout = rollout
        return Summary(len(rollout), rollout.env_steps, rollout.hands)

    def update(self, settings: PPOSettings) -> dict:
        """One PPO update on the decisions ``collect`` kept, gradients averaged over the processes."""
        stats = self.learner.ppo_update(self.rollout, settings, self.worker, self.targets)
        self.rollout = None
        return stats

    def search_targets(self, count: int, seed: int, send: bool = False):
        """Search ``count`` positions of the kept rollout with the current network (expert
        iteration); the searched ones join the targets. Returns [searched, deviated, gain sum];
        with ``send`` (a learner elsewhere) also the targets, which are then not kept here."""
        if self.search is None:
            self.search = expert_search(self.config, self.model)
        targets = SearchTargets(count) if send else self.targets
        seed = seed * 1000 + self.worker
        if self.config.get("expert_worlds", "observation") == "true":
            found = search_captures(self.search, self.rollout, targets, count, seed, self._actors)
        else:
            found = search_positions(self.search, self.rollout, targets, count, seed)
        if send:
            self.rollout = None
            return found, targets.arrays()
        return found

    def _actors(self, capture) -> Actors | None:
        """Who plays the other seats of a captured hand in its rollouts: the pool entry it was
        dealt against (a snapshot greedily), or the policy itself against ``self``."""
        if capture.opponent == "self":
            return None
        opponent = self.collector.opponents[capture.opponent]
        if isinstance(opponent, torch.nn.Module):
            if capture.opponent not in self.greedy:
                self.greedy[capture.opponent] = GreedyNetwork(opponent)
            opponent = self.greedy[capture.opponent]
        return Actors(opponent, capture.opponent_seats)

    # ------------------------------------------------------------------ cloning

    def record_teacher(self, target: int, teacher: str, learner_share: float = 0.0) -> int:
        """Record ``target`` more decisions of ``teacher`` in every seat (``learner_share`` of the moves
        played by the network: DAgger); the number recorded since the last split."""
        self.clone_parts.append(self.collect_teacher(target, teacher, learner_share))
        return sum(len(p) for p in self.clone_parts)

    def collect_teacher(self, target: int, teacher: str, learner_share: float = 0.0) -> Rollout:
        """``target`` decisions of ``teacher`` in every seat (every hand played to its end)."""
        return self.collector.collect(target, self._agent(teacher, self.worker), learner_share)

    def clone_split(self, holdout: float, seed: int) -> int:
        """Add the decisions recorded since the last split to the cloning data (returns of the hand,
        held-out rows); the number of training rows."""
        data = Rollout.concatenate(self.clone_parts)
        self.clone_parts = []
        rng = np.random.default_rng(seed * 1000 + self.worker)
        self.clone_data = CloneData.split(data, self.config["gamma"], holdout, rng, self.clone_data)
        return len(self.clone_data.train_rows)

    def clone_epoch(self, minibatches: int, learning_rates: list[float], seed: int) -> None:
        c = self.config
        self.learner.clone_epoch(self.clone_data, self.clone_data.train_rows, minibatches, learning_rates,
                                 c["vf_coef"], c["max_grad_norm"] * 10, seed, self.worker)

    @torch.no_grad()
    def clone_accuracy(self) -> np.ndarray:
        """Per decision type: [agreeing, held-out decisions], then [squared value error, decisions]."""
        data, rows = self.clone_data, self.clone_data.test_rows
        types = decision_types(self.config["game"])[data.actions[rows]]
        sums = np.zeros((len(DECISION_TYPES) + 1, 2))
        for start in range(0, len(rows), 2048):
            part = rows[start:start + 2048]
            logits, values = self.model(torch.from_numpy(data.observations[part]), torch.from_numpy(data.masks[part]))
            agree = (logits.argmax(dim=-1).numpy() == data.actions[part])
            for t in range(len(DECISION_TYPES)):
                chosen = types[start:start + len(part)] == t
                sums[t] += (agree[chosen].sum(), chosen.sum())
            sums[-1] += (float(((values.numpy() - data.returns[part]) ** 2).sum()), len(part))
        return sums

    def clone_done(self) -> None:
        self.clone_data = None

    # ------------------------------------------------------------------ the network

    def get_state(self, optimizer: bool = False) -> dict:
        return learner_state(self.learner, optimizer)

    def set_state(self, model: dict, optimizer: dict | None = None, critic: dict | None = None) -> None:
        load_learner_state(self.learner, model, optimizer, critic)


def _serve(connection, config: dict, model_config: dict, worker: int, workers: int, store: str) -> None:
    # Ctrl-C and SIGTERM (also when sent to the whole process group) are the trainer's to handle:
    # it checkpoints, asking us for our state, then closes us
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    station = None
    while True:
        command, arguments = connection.recv()
        if command == "close":
            if workers > 1 and torch.distributed.is_initialized():
                torch.distributed.destroy_process_group()
            connection.close()
            return
        try:
            if command == "start":
                torch.set_num_threads(config["torch_threads"])
                if workers > 1:
                    torch.distributed.init_process_group("gloo", init_method=f"file://{store}", rank=worker,
                                                         world_size=workers)
                station = Station(config, model_config, worker, Group(workers))
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
            self._all("start")

    def _all(self, command: str, *arguments, per_worker=None) -> list:
        if self.local is not None:
            return [getattr(self.local, command)(*(per_worker[0] if per_worker else arguments))]
        self._drop_unread()
        for w in range(len(self.connections)):
            self._send(w, (command, per_worker[w] if per_worker else arguments))
        results: dict[int, object] = {}
        waiting = dict(enumerate(self.connections))
        while waiting:  # in arrival order, so that a failure is seen even while the others wait on it
            for connection in multiprocessing.connection.wait(list(waiting.values())):
                w = next(k for k, c in waiting.items() if c is connection)
                status, result = self._reply(w)
                if status == "error":
                    self.close(force=True)
                    raise WorkerError(f"collecting process {w} failed:\n{result}")
                results[w] = result
                del waiting[w]
        return [results[w] for w in range(len(self.connections))]

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

    def reseed(self, seed: int) -> None:
        self._all("reseed", seed)

    def pool_update(self, names: list[str], probs: list[float], snapshots: dict[str, dict]) -> None:
        self._all("pool_update", names, probs, snapshots)

    def collect(self, target: int, oracle_share: float = 0.0) -> Summary:
        """``target`` decisions over all processes, kept where they were collected; their summary."""
        parts = self._all("collect", self.share(target), True, None, oracle_share)
        return Summary(sum(p.decisions for p in parts), sum(p.env_steps for p in parts),
                       [h for p in parts for h in p.hands])

    def collect_rollout(self, target: int, state_dict: dict, oracle_share: float = 0.0) -> Rollout:
        """``target`` decisions over all processes with ``state_dict``'s network, sent back whole."""
        return Rollout.concatenate(self._all("collect", self.share(target), False, state_dict, oracle_share))

    def update(self, settings: PPOSettings) -> dict:
        return self._all("update", settings)[0]

    def search_targets(self, count: int, seed: int, send: bool = False):
        """Every process searches its share; summed statistics, or with ``send`` each process's
        (statistics, targets)."""
        found = self._all("search_targets", self.share(count), seed, send)
        return found if send else np.sum(found, axis=0)

    def record_teacher(self, target: int, teacher: str, learner_share: float = 0.0) -> int:
        return sum(self._all("record_teacher", self.share(target), teacher, learner_share))

    def collect_teacher(self, target: int, teacher: str, learner_share: float = 0.0) -> Rollout:
        return Rollout.concatenate(self._all("collect_teacher", self.share(target), teacher, learner_share))

    def pids(self) -> list[int]:
        """Process ids of the live collecting processes."""
        return [p.pid for p in self.processes if p.is_alive()]

    def clone_split(self, holdout: float, seed: int) -> int:
        return sum(self._all("clone_split", holdout, seed))

    def clone_epoch(self, minibatches: int, learning_rates: list[float], seed: int) -> None:
        self._all("clone_epoch", minibatches, learning_rates, seed)

    def clone_accuracy(self) -> np.ndarray:
        return np.sum(self._all("clone_accuracy"), axis=0)

    def clone_done(self) -> None:
        self._all("clone_done")

    def get_state(self, optimizer: bool = False) -> dict:
        if self.local is not None:
            return self.local.get_state(optimizer)
        self._drop_unread()
        self._send(0, ("get_state", (optimizer,)))
        status, result = self._reply(0)
        if status == "error":
            raise WorkerError(f"collecting process 0 failed:\n{result}")
        return result

    def set_state(self, model: dict, optimizer: dict | None = None, critic: dict | None = None) -> None:
        self._all("set_state", model, optimizer, critic)

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


class SearchTargets:
    """The searched positions a process keeps, the newest ``capacity`` (expert iteration): each
    with the move the search chose, and its candidates with their searched values (points)."""

    FIELDS = ("observations", "masks", "actions", "candidates", "values")

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.observations: np.ndarray | None = None
        self.masks: np.ndarray | None = None
        self.actions = np.zeros(0, np.int64)
        self.candidates = np.zeros((0, 0), np.int64)
        self.values = np.zeros((0, 0), np.float32)

    def __len__(self) -> int:
        return len(self.actions)

    def arrays(self) -> tuple:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def add(self, observations: np.ndarray, masks: np.ndarray, actions: np.ndarray,
            candidates: np.ndarray | None = None, values: np.ndarray | None = None) -> None:
        """Add searched positions (``candidates`` -1 and ``values`` NaN where a row has fewer)."""
        rows = len(actions)
        if candidates is None:
            candidates, values = np.asarray(actions, np.int64)[:, None], np.zeros((rows, 1), np.float32)
        if self.observations is None:
            self.observations, self.masks = observations[:0], masks[:0]
        width = max(self.candidates.shape[1], candidates.shape[1])
        kept = self.capacity
        self.observations = np.concatenate([self.observations, observations])[-kept:]
        self.masks = np.concatenate([self.masks, masks])[-kept:]
        self.actions = np.concatenate([self.actions, np.asarray(actions, np.int64)])[-kept:]
        self.candidates = np.concatenate([_widen(self.candidates, width, -1),
                                          _widen(np.asarray(candidates, np.int64), width, -1)])[-kept:]
        self.values = np.concatenate([_widen(self.values, width, np.nan),
                                      _widen(np.asarray(values, np.float32), width, np.nan)])[-kept:]


def _widen(array: np.ndarray, width: int, fill) -> np.ndarray:
    """``array`` (rows, k) padded with ``fill`` to (rows, ``width``)."""
    if array.shape[1] == width:
        return array
    out = np.full((len(array), width), fill, array.dtype)
    out[:, :array.shape[1]] = array
    return out


def capture_rate(config: dict) -> float:
    """The share of learner decisions kept with their true state: enough for ``expert_positions``
    searches per update with some to spare (many decisions have one legal move, are against random,
    or are ones the policy is sure of and the search skips), none without expert iteration on the
    true worlds."""
    if not config.get("expert_every") or config.get("expert_worlds", "observation") != "true":
        return 0.0
    return min(1.0, 4.0 * config["expert_positions"] / config["rollout_size"])


def search_positions(search, rollout: Rollout, targets: SearchTargets, count: int, seed: int) -> np.ndarray:
    """Search ``count`` positions of ``rollout`` (where more than one move is legal) and add the
    searched ones to ``targets``; [searched, deviated from the policy, sum of the estimated gains]."""
    choices = np.flatnonzero((rollout.masks != 0).sum(axis=1) > 1)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(choices, size=min(count, len(choices)), replace=False))
    seeds = rng.integers(0, 2**63 - 1, size=len(rows)).tolist()
    result = search.search(rollout.observations[rows], rollout.masks[rows], seeds)
    return _add_targets(result, rows, rollout, targets)


def search_captures(search, rollout: Rollout, targets: SearchTargets, count: int, seed: int,
                    actors_of) -> np.ndarray:
    """``search_positions`` on ``count`` of the rollout's captured decisions, each searched in the
    true worlds of its hand (``PolicySearch.search_states``), the other seats played as
    ``actors_of(capture)`` says."""
    captures = rollout.captures
    rng = np.random.default_rng(seed)
    if captures:  # the positions the search would search: the policy is unsure there
        rows = np.array([c.index for c in captures], np.int64)
        top = search.policy(rollout.observations[rows], rollout.masks[rows])[0].max(axis=1)
        unsure = [c for c, p in zip(captures, top.tolist()) if p < search.budget.confidence]
        captures = unsure or captures
    chosen = np.sort(rng.choice(len(captures), size=min(count, len(captures)), replace=False))
    picked = [captures[k] for k in chosen.tolist()]
    rows = np.array([c.index for c in picked], np.int64)
    seeds = rng.integers(0, 2**63 - 1, size=len(rows)).tolist()
    result = search.search_states(rollout.observations[rows], rollout.masks[rows], [c.state for c in picked],
                                  [c.seat for c in picked], [actors_of(c) for c in picked], seeds)
    return _add_targets(result, rows, rollout, targets)


def _add_targets(result, rows: np.ndarray, rollout: Rollout, targets: SearchTargets) -> np.ndarray:
    """The searched rows' chosen moves join ``targets``; [searched, deviated, sum of estimated gains]."""
    kept = rows[result.searched]
    targets.add(rollout.observations[kept], rollout.masks[kept], result.actions[result.searched],
                result.candidates[result.searched], result.values[result.searched].astype(np.float32))
    column = np.argmax(result.candidates == result.actions[:, None], axis=1)
    gains = (result.values[np.arange(len(rows)), column] - result.values[:, 0])[result.searched]
    return np.array([len(kept), int((result.actions != result.policy_actions).sum()), float(np.nansum(gains))])


def expert_search(config: dict, model: torch.nn.Module):
    """The search the expert iteration asks: ``expert_search``'s budget, with the live network."""
    from agents.policy_search import PointsFromValue, PolicySearch, TorchPolicy, budget_from_settings
    from rummy_env.ruleset import make_ruleset

    rules = make_ruleset(config["game"], config["num_players"])
    budget = budget_from_settings(config["expert_search"])
    points = PointsFromValue.from_config(rules, config)  # the value in points, the win bonus with it
    return PolicySearch(config["game"], config["num_players"], TorchPolicy(model), budget, points,
                        win_points=points.win_points)


def make_critic(config: dict) -> torch.nn.Module | None:
    """The oracle critic when ``critic`` is ``oracle`` (seeded from the run's seed), else None."""
    if config.get("critic", "observation") != "oracle":
        return None
    generator_state = torch.get_rng_state()
    torch.manual_seed(config["seed"] + 17)
    critic = OracleCritic(config["game"], config["num_players"]).eval()
    torch.set_rng_state(generator_state)
    return critic


def learner_state(learner: Learner, optimizer: bool = False) -> dict:
    """The learner's network (and critic, and optimiser) as plain CPU tensors."""
    state = {"model": {k: v.detach().cpu().clone() for k, v in learner.model.state_dict().items()}}
    if learner.critic is not None:
        state["critic"] = {k: v.detach().cpu().clone() for k, v in learner.critic.state_dict().items()}
    if optimizer:
        state["optimizer"] = learner.optimizer.state_dict()
    return state


def load_learner_state(learner: Learner, model: dict, optimizer: dict | None = None,
                       critic: dict | None = None) -> None:
    learner.model.load_state_dict(model)
    if critic is not None and learner.critic is not None:
        learner.critic.load_state_dict(critic)
    if optimizer is not None:
        learner.optimizer.load_state_dict(optimizer)


def minibatch_count(total: int, minibatch_size: int) -> int:
    """Minibatches an update of ``total`` decisions is split into (every process splits its own
    share into as many)."""
    return max(1, math.ceil(total / minibatch_size))


class WorkerLearning:
    """The learner lives in the collecting processes (DD-PPO, ``agents.training.learner``)."""

    def __init__(self, stations: Stations):
        self.stations = stations

    def load(self, model: dict, optimizer: dict | None, critic: dict | None = None) -> None:
        self.stations.set_state(model, optimizer, critic)

    def state(self) -> dict:
        return self.stations.get_state()["model"]

    def training_state(self) -> dict:
        """The optimiser's and the critic's state (what a checkpoint keeps beside the network)."""
        return self.stations.get_state(optimizer=True)

    def collect(self, target: int, oracle_share: float = 0.0) -> Summary:
        return self.stations.collect(target, oracle_share)

    def update(self, settings: PPOSettings) -> dict:
        return self.stations.update(settings)

    def search_targets(self, count: int, seed: int) -> np.ndarray:
        return self.stations.search_targets(count, seed)

    def reseeded(self) -> None:
        """Collection was re-seeded (the processes dropped their searched targets themselves)."""

    def record_teacher(self, target: int, teacher: str, learner_share: float = 0.0) -> int:
        return self.stations.record_teacher(target, teacher, learner_share)

    def clone_split(self, holdout: float, seed: int) -> int:
        return self.stations.clone_split(holdout, seed)

    def clone_epoch(self, minibatches: int, learning_rates: list[float], seed: int) -> None:
        self.stations.clone_epoch(minibatches, learning_rates, seed)

    def clone_accuracy(self) -> np.ndarray:
        return self.stations.clone_accuracy()

    def clone_done(self) -> None:
        self.stations.clone_done()


class CentralLearning:
    """The learner lives in the training process, on ``device`` (a GPU); the collecting processes
    send their rollouts and play with the weights it sends them."""

    def __init__(self, stations: Stations, model: torch.nn.Module, config, device: torch.device):
        self.stations = stations
        self.config = config
        self.learner = Learner(copy.deepcopy(model), config.learning_rate, None, device,
                               critic=make_critic(dataclasses.asdict(config)))
        self.rollout: Rollout | None = None
        self.clone_data: CloneData | None = None
        self.parts: list[Rollout] = []
        self.targets = SearchTargets(config.expert_buffer)
        self.search_model: torch.nn.Module | None = None
        self.search = None

    def load(self, model: dict, optimizer: dict | None, critic: dict | None = None) -> None:
        load_learner_state(self.learner, model, optimizer, critic)
        self._send()

    def _send(self) -> None:
        state = learner_state(self.learner)
        self.stations.set_state(state["model"], None, state.get("critic"))

    def state(self) -> dict:
        return learner_state(self.learner)["model"]

    def training_state(self) -> dict:
        return learner_state(self.learner, optimizer=True)

    def collect(self, target: int, oracle_share: float = 0.0) -> Summary:
        self._send()
        self.rollout = self.stations.collect_rollout(target, None, oracle_share)
        return Summary(len(self.rollout), self.rollout.env_steps, self.rollout.hands)

    def update(self, settings: PPOSettings) -> dict:
        stats = self.learner.ppo_update(self.rollout, settings, targets=self.targets)
        self.rollout = None
        return stats

    def search_targets(self, count: int, seed: int) -> np.ndarray:
        if self.config.expert_worlds == "true":  # the true states stayed in the collecting processes
            found = self.stations.search_targets(count, seed, send=True)
            for _, arrays in found:
                if len(arrays[2]):
                    self.targets.add(*arrays)
            return np.sum([stats for stats, _ in found], axis=0)
        if self.search is None:  # the search plays on the CPU: a copy of the network there
            self.search_model = copy.deepcopy(self.learner.model).cpu().eval()
            self.search = expert_search(dataclasses.asdict(self.config), self.search_model)
        self.search_model.load_state_dict(self.state())
        return search_positions(self.search, self.rollout, self.targets, count, seed * 1000)

    def reseeded(self) -> None:
        """Collection was re-seeded: the targets start again, as in the collecting processes."""
        self.targets = SearchTargets(self.targets.capacity)

    def record_teacher(self, target: int, teacher: str, learner_share: float = 0.0) -> int:
        if learner_share:
            self._send()  # the collecting processes play with the clone as it is now
        self.parts.append(self.stations.collect_teacher(target, teacher, learner_share))
        return sum(len(p) for p in self.parts)

    def clone_split(self, holdout: float, seed: int) -> int:
        data = Rollout.concatenate(self.parts)
        self.parts = []
        rng = np.random.default_rng(seed * 1000)  # as collecting process 0 splits its own
        self.clone_data = CloneData.split(data, self.config.gamma, holdout, rng, self.clone_data)
        return len(self.clone_data.train_rows)

    def clone_epoch(self, minibatches: int, learning_rates: list[float], seed: int) -> None:
        c = self.config
        self.learner.clone_epoch(self.clone_data, self.clone_data.train_rows, minibatches, learning_rates,
                                 c.vf_coef, c.max_grad_norm * 10, seed)

    @torch.no_grad()
    def clone_accuracy(self) -> np.ndarray:
        data, rows = self.clone_data, self.clone_data.test_rows
        types = decision_types(self.config.game)[data.actions[rows]]
        model = self.learner.model
        sums = np.zeros((len(DECISION_TYPES) + 1, 2))
        for start in range(0, len(rows), 4096):
            part = rows[start:start + 4096]
            obs, masks = self.learner.tensors(data.observations[part], data.masks[part])
            logits, values = model(obs, masks)
            agree = logits.argmax(dim=-1).cpu().numpy() == data.actions[part]
            for t in range(len(DECISION_TYPES)):
                chosen = types[start:start + len(part)] == t
                sums[t] += (agree[chosen].sum(), chosen.sum())
            sums[-1] += (float(((values.cpu().numpy() - data.returns[part]) ** 2).sum()), len(part))
        return sums

    def clone_done(self) -> None:
        self.clone_data = None
