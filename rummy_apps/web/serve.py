"""Listening for the web table: one socket, set up the way every caller (the command line, the tests) needs."""

from __future__ import annotations

import contextlib
import socket
import threading
import time


def listening_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A TCP socket listening on ``host``:``port`` (0: a free port), with Nagle's delay off.

    Without ``TCP_NODELAY`` a small JSON reply written in two pieces waits for the client's delayed
    acknowledgement: about 40 ms a call instead of a few (measured with uvicorn's h11 protocol).
    Accepted connections inherit the option on Linux.
    """
    sock = socket.create_server((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


@contextlib.contextmanager
def serving_in_thread(app, host: str = "127.0.0.1", port: int = 0):
    """Serve ``app`` with uvicorn in a background thread (tests, benchmarks); yields the base URL."""
    import uvicorn

    sock = listening_socket(host, port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web table's server did not start")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
