"""Figures for the web table (docs/web.md "Measured"): how fast opponents answer, and many games at once.

    python -m rummy_env.web.bench                    # pretrained:romi opponents, 100 concurrent games
    python -m rummy_env.web.bench --games 20 --hands 2

It serves the app on a free local port and plays over HTTP with httpx: the person follows the
rule agent's hint, the agents move one call at a time (``POST …/opponent``), as the page does.
Server time is the ``Server-Timing`` header (the game's work in the server, wall clock); round
trip is the client's. Quoted as median, 99th percentile and maximum.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from .app import TableDefaults, create_app
from .serve import serving_in_thread
from .store import GameStore


def _server_ms(reply) -> float:
    return float(reply.headers["server-timing"].split("dur=")[1])


def _play(client, game_id: str, hands: int, opponent: list, person: list) -> int:
    """Play ``hands`` hands of one game; timings go to ``opponent`` and ``person`` (server ms, round-trip ms)."""
    calls = 0
    table = client.get(f"/api/games/{game_id}").json()["table"]
    for hand in range(hands):
        while table["result"] is None:
            started = time.perf_counter()
            if table["view"]["to_act"] == table["seat"]:
                action = client.get(f"/api/games/{game_id}/hint").json()["hint"]["action"]
                started = time.perf_counter()
                reply = client.post(f"/api/games/{game_id}/move", json={"action": action})
                out = person
            else:
                reply = client.post(f"/api/games/{game_id}/opponent")
                out = opponent
            if reply.status_code != 200:
                raise RuntimeError(f"game {game_id}: {reply.status_code} {reply.text[:300]}")
            out.append((_server_ms(reply), (time.perf_counter() - started) * 1000))
            table = reply.json()["table"]
            calls += 1
        if hand + 1 < hands and not table["match"]["over"]:
            table = client.post(f"/api/games/{game_id}/next").json()["table"]
    return calls


def _quantiles(values: list[float]) -> str:
    values = sorted(values)
    p99 = values[min(len(values) - 1, int(0.99 * len(values)))]
    return f"median {statistics.median(values):6.2f} ms · p99 {p99:6.2f} ms · max {values[-1]:6.2f} ms"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rummy_env.web.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="romi")
    parser.add_argument("--opponent", default=None, help="agent spec (default pretrained:GAME)")
    parser.add_argument("--games", type=int, default=100, help="games played at once (default 100)")
    parser.add_argument("--threads", type=int, default=16, help="client threads (default 16)")
    parser.add_argument("--hands", type=int, default=1, help="hands per game (default 1)")
    args = parser.parse_args(argv)
    import httpx

    spec = args.opponent or f"pretrained:{args.game}"
    app = create_app(TableDefaults(game=args.game, opponents=(spec,), delay_ms=0), GameStore(max_games=args.games + 10))
    with serving_in_thread(app) as url, httpx.Client(base_url=url, timeout=120,
                                                      limits=httpx.Limits(max_connections=args.threads)) as client:
        warm = client.post("/api/games", json={"seed": -1}).json()["id"]
        _play(client, warm, 1, [], [])  # loads the policy and compiles the solver before timing
        opponent, person = [], []
        _play(client, client.post("/api/games", json={"seed": 0}).json()["id"], 5, opponent, person)
        print(f"{args.game} against {spec}, one game alone, 5 hands, {len(opponent)} opponent moves:")
        print(f"  opponent move, at the server: {_quantiles([s for s, _ in opponent])}")
        print(f"  opponent move, round trip:    {_quantiles([r for _, r in opponent])}")
        print(f"  person's move, at the server: {_quantiles([s for s, _ in person])}")
        ids = [client.post("/api/games", json={"seed": i + 1}).json()["id"] for i in range(args.games)]
        opponent, person = [], []
        started, cpu = time.perf_counter(), time.process_time()
        with ThreadPoolExecutor(args.threads) as pool:
            calls = sum(pool.map(lambda game_id: _play(client, game_id, args.hands, opponent, person), ids))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        print(f"{args.games} games at once from {args.threads} client threads (one process for server and "
              f"clients): {calls} moves in {wall:.1f} s wall, {cpu:.1f} s CPU, {calls / wall:.0f} moves/s")
        print(f"  opponent move, at the server: {_quantiles([s for s, _ in opponent])}")
        print(f"  opponent move, round trip:    {_quantiles([r for _, r in opponent])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
