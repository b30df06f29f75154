"""What a run tells its user: progress bars (or plain lines when the output is not a terminal),
the run folder's README.txt, and the commands to try next with the run's own paths."""

from __future__ import annotations

import sys
import time
from pathlib import Path

PLAIN_INTERVAL_S = 30.0
"""Seconds between the lines of a plain progress report."""

RUN_FOLDER = """\
A training run of rummy-env (python train.py; docs/training.md).

config.yaml            the resolved settings (python train.py --resume {run_dir} continues the run)
checkpoint.pt          the policy and the whole training state (optimiser, opponent pool, counters,
                       learning curves), written every checkpoint_every updates and on Ctrl-C; what
                       --resume reads
best.pt, final.pt      policies for the arena, play and export: best.pt is the one to use (the best
                       evaluated checkpoint, kept only if it beats the final policy on the final
                       evaluation's deals), final.pt the policy at the end
results.json           the final evaluation, the cloning report and the run's time
learning_curves.png    evaluation and training curves (python -m agents.training.curves {run_dir})
events.out.tfevents.*  TensorBoard logs (tensorboard --logdir {run_dir})
pinned/                copies of the shipped policies the run plays against (pretrained:GAME), so
                       that the run's opponents stay the same when the shipped policies change
"""


def write_run_readme(run_dir: Path) -> None:
    """The run folder's README.txt: what each file in it is."""
    (run_dir / "README.txt").write_text(RUN_FOLDER.format(run_dir=run_dir))


def next_commands(run_dir: Path, game: str, num_players: int) -> str:
    """The commands to try the run's policy, with its own paths."""
    best = run_dir / "best.pt"
    return "\n".join([
        "next:",
        f"  python -m agents.arena --game {game} --players {num_players} --agents ppo:{best} rule random"
        "   # measure it on 2,000 fresh hands",
        f"  python -m agents.export {best}   # an ONNX model beside it",
        f"  python -m rummy_apps.play --game {game} --players {num_players} --opponents ppo:{best}"
        "   # play against it",
        f"  tensorboard --logdir {run_dir}   # the training curves",
    ])


class PlainBar:
    """A progress report for a log file: a line at the start, at most one every ``PLAIN_INTERVAL_S``
    seconds, and one at the end; no control characters."""

    def __init__(self, total: int | None = None, desc: str = "", unit: str = "it", initial: int = 0, **_):
        self.total, self.desc, self.unit, self.n = total, desc, unit, initial
        self.postfix = ""
        self.started = time.monotonic()
        self.shown = -PLAIN_INTERVAL_S
        self._line(force=True)

    def _line(self, force: bool = False) -> None:
        now = time.monotonic() - self.started
        if not force and now - self.shown < PLAIN_INTERVAL_S:
            return
        self.shown = now
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        of = f"/{self.total:,}" if self.total else ""
        postfix = f", {self.postfix}" if self.postfix else ""
        print(f"{self.desc}: {self.n:,}{of} {self.unit}s{share}, {now:.0f} s{postfix}", flush=True)

    def update(self, n: int = 1) -> None:
        self.n += n
        self._line()

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text

    @staticmethod
    def write(text: str) -> None:
        print(text, flush=True)

    def __enter__(self) -> PlainBar:
        return self

    def __exit__(self, *_) -> None:
        self._line(force=True)


def progress_factory(enabled: bool, stream=None):
    """A bar maker for the run's stages: ``tqdm`` on a terminal, ``PlainBar`` lines otherwise,
    nothing when ``enabled`` is false."""
    from tqdm import tqdm

    stream = stream or sys.stderr
    terminal = stream.isatty()

    def make(**settings):
        if enabled and not terminal:
            return PlainBar(**settings)
        return tqdm(disable=not enabled, dynamic_ncols=True, smoothing=0.1, file=stream, **settings)

    return make
