"""The web table under load: many games at once, each playing random legal moves (docs/web.md "Measured").

Starts ``python -m rummy_apps.web`` on a free port of 127.0.0.1 (never another address), then
plays ``--games`` games at once, one client thread each, for ``--seconds``: the person picks a
random legal move from the view's list, the agents move one call at a time (``POST …/opponent``),
as the page does, each game pausing ``--pause-ms`` between its calls (the page's default pause
before an opponent's move; 0 sends every call as soon as the last one is answered, to find the
server's most moves a second); a finished hand deals the next, a finished match starts a new game. Every
move's server time is its ``Server-Timing`` header (the game's work in the server, queueing for
a worker thread included); any reply other than 200/201 is an error. Prints the machine, the
moves, server time per move (median, p95, p99, max), round trip, and the errors.

    python benchmarks/bench_web.py                          # 100 games of all three games, 30 s
    python benchmarks/bench_web.py --games 20 --seconds 10 --game romi --pause-ms 0
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("indian", "basic", "romi")


def machine() -> str:
    """The CPU's model name (lscpu), its cores, and the load average now (is the machine busy?)."""
    model = "unknown CPU"
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        model = re.search(r"Model name:\s*(.+)", text).group(1).strip()
    except (OSError, AttributeError, subprocess.SubprocessError):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{model}, {os.cpu_count()} cores, load average {load} before the run"


def start_server(max_games: int) -> tuple[subprocess.Popen, str]:
    """``python -m rummy_apps.web`` on a free port of 127.0.0.1, with no bound on new games; its base URL."""
    command = [sys.executable, "-m", "rummy_apps.web", "--host", "127.0.0.1", "--port", "0", "--delay", "0",
               "--max-games", str(max_games), "--new-games-per-minute", "1000000"]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    line = server.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:\d+", line)
    if not found:
        server.kill()
        raise SystemExit(f"bench_web: the server did not start: {line!r}")
    return server, found.group(0)


class Tally:
    """Server and round-trip milliseconds per move, and the errors, from every client thread."""

    def __init__(self):
        self.server_ms: list[float] = []
        self.round_trip_ms: list[float] = []
        self.errors: Counter = Counter()
        self.lock = threading.Lock()

    def move(self, reply, seconds: float) -> None:
        with self.lock:
            if reply.status_code != 200:
                self.errors[f"{reply.status_code} {reply.text[:120]}"] += 1
                return
            self.server_ms.append(float(reply.headers["server-timing"].split("dur=")[1]))
            self.round_trip_ms.append(seconds * 1000)

    def error(self, text: str) -> None:
        with self.lock:
            self.errors[text[:160]] += 1


def play(client, game: str, deadline: float, rng: random.Random, tally: Tally, pause: float = 0.0) -> None:
    """Play games of ``game`` with random legal moves until ``deadline``, ``pause`` seconds between calls."""
    time.sleep(rng.random() * pause)  # the games' calls spread out, as people's are
    while time.monotonic() < deadline:
        created = client.post("/api/games", json={"game": game})
        if created.status_code != 201:
            tally.error(f"new game: {created.status_code} {created.text}")
            return
        game_id, table = created.json()["id"], created.json()["table"]
        while time.monotonic() < deadline and not table["match"]["over"]:
            time.sleep(pause)
            if table["result"] is not None:
                reply = client.post(f"/api/games/{game_id}/next")
            elif table["view"]["to_act"] == table["seat"]:
                started = time.perf_counter()
                move = rng.choice(table["view"]["legal"])
                reply = client.post(f"/api/games/{game_id}/move", json={"action": move["action"]})
                tally.move(reply, time.perf_counter() - started)
            else:
                started = time.perf_counter()
                reply = client.post(f"/api/games/{game_id}/opponent")
                tally.move(reply, time.perf_counter() - started)
            if reply.status_code != 200:
                tally.error(f"{reply.request.url.path.rsplit('/', 1)[-1]}: {reply.status_code} {reply.text}")
                break
            table = reply.json()["table"]
        client.delete(f"/api/games/{game_id}")


def quantiles(values: list[float]) -> str:
    values = sorted(values)
    if not values:
        return "no moves"

    def at(q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))]
    return (f"median {statistics.median(values):.2f} ms · p95 {at(0.95):.2f} ms · p99 {at(0.99):.2f} ms · "
            f"max {values[-1]:.2f} ms")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games played at once, one client thread each (100)")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long they play (30)")
    parser.add_argument("--game", choices=(*GAMES, "all"), default="all",
                        help="the game of every table, or all three in turn (all); opponents: the server's default")
    parser.add_argument("--pause-ms", type=float, default=600,
                        help="each game's pause between calls, in ms (600, the page's pause before an opponent's "
                             "move; 0: no pause)")
    parser.add_argument("--seed", type=int, default=0, help="the random moves' seed (0)")
    args = parser.parse_args(argv)
    if args.games < 1 or not args.seconds > 0 or not args.pause_ms >= 0:
        parser.error("--games must be >= 1, --seconds > 0 and --pause-ms >= 0")
    import httpx

    print(f"machine: {machine()}")
    server, url = start_server(max_games=args.games * 2 + 10)
    tally = Tally()
    games = [GAMES[i % 3] if args.game == "all" else args.game for i in range(args.games)]
    try:
        limits = httpx.Limits(max_connections=args.games, max_keepalive_connections=args.games)
        with httpx.Client(base_url=url, timeout=120, limits=limits) as client:
            client.get("/api/meta")
            for game in set(games):  # loads each policy and compiles the solver before the clock starts
                play(client, game, time.monotonic() + 2, random.Random(-1), Tally())
            started = time.monotonic()
            deadline = started + args.seconds
            with ThreadPoolExecutor(args.games) as pool:
                for done in [pool.submit(play, client, game, deadline, random.Random(f"{args.seed}:{i}"), tally,
                                         args.pause_ms / 1000) for i, game in enumerate(games)]:
                    done.result()
            wall = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(10)
    moves = len(tally.server_ms)
    print(f"{args.games} games at once ({args.game}, {args.pause_ms:g} ms between a game's calls), {wall:.1f} s: "
          f"{moves} moves, {moves / wall:.0f} moves/s, {sum(tally.errors.values())} errors")
    print(f"  server time per move: {quantiles(tally.server_ms)}")
    print(f"  round trip per move:  {quantiles(tally.round_trip_ms)}")
    for text, count in tally.errors.most_common(5):
        print(f"  error ×{count}: {text}")
    return 1 if tally.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
