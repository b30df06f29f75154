"""Finished hands of web matches kept on the server's disk (``--record-dir DIR``, docs/web.md "Records").

Each match gets its own file in DIR, named by when it started, its game and a random tag
(``20261208-014500-romi-3f9c2a1b.jsonl``); each finished hand is appended to it as one line, the
same lines the page downloads once the match is over. A file that cannot be written is said in
the server's log and the game goes on.
"""

from __future__ import annotations

import logging
import secrets
import time
from pathlib import Path

from rummy_env.records import dumps

log = logging.getLogger("rummy_apps.web")


class RecordDir:
    """A folder that receives the records of every match, one file a match."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        probe = self.path / f".write-test-{secrets.token_hex(4)}"
        probe.write_text("")  # an OSError here names a folder the server cannot write
        probe.unlink()

    def match_file(self, game: str) -> Path:
        """The file a new match of ``game`` appends its hands to (created at its first finished hand)."""
        started = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        return self.path / f"{started}-{game}-{secrets.token_hex(4)}.jsonl"


def append_record(path: Path, record: dict) -> None:
    """Append ``record`` to ``path`` as one line; a failure is logged, never raised into the game."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(dumps(record) + "\n")
    except OSError as error:
        log.warning("rummy-web: cannot append a record to %s: %s", path, error)
