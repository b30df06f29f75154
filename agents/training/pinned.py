"""The shipped policies a run plays, copied into its folder when it starts.

A run meets ``pretrained:GAME`` in its evaluation panel (the previous shipped policy) and maybe
in its pool (``pool_opponents``). Shipping a new policy while the run goes on would change that
opponent halfway through its learning curve, so the run plays a copy instead: the installed
policy and its card go to ``RUN/pinned/GAME-Np.onnx`` (and ``.json``) once, at the start, and a
resumed run keeps the copy it started with. Results stay keyed by ``pretrained:GAME``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agents.pretrained import card_path, model_path, policy_name, shipped_for

PINNED_DIR = "pinned"


def pin_shipped(specs: list[str], game: str, num_players: int, run_dir: Path) -> dict[str, str]:
    """``{spec: "onnx:COPY"}`` for each ``pretrained:GAME`` in ``specs`` that is shipped for this
    table, copying the installed files into ``run_dir/pinned`` unless a copy is there already.
    Other specs, and ``pretrained:`` specs that would not load, are left to ``make_agent``."""
    stand_ins = {}
    for spec in dict.fromkeys(specs):
        name, _, argument = spec.partition(":")
        if name != "pretrained" or (argument or game) != game or not shipped_for(game, num_players):
            continue
        folder = run_dir / PINNED_DIR
        folder.mkdir(parents=True, exist_ok=True)
        copy = folder / f"{policy_name(game, num_players)}.onnx"
        for source, target in ((card_path(game, num_players), copy.with_suffix(".json")),
                               (model_path(game, num_players), copy)):  # the model last: its presence says "done"
            if source.is_file() and not copy.exists():
                _copy_whole(source, target)
        stand_ins[spec] = f"onnx:{copy}"
    return stand_ins


def _copy_whole(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` whole or not at all."""
    partial = target.with_name(target.name + ".tmp")
    shutil.copyfile(source, partial)
    os.replace(partial, target)
