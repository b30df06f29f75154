"""Export a policy checkpoint to ONNX or TorchScript, with its metadata beside it.

    python -m agents.export runs/x/best.pt --format onnx            # -> runs/x/best.onnx + best.json
    python -m agents.export runs/x/best.pt --format torchscript --out policy.pt

The exported graph takes a batch of observations and action masks and returns action
probabilities (zero on every action the mask forbids) and the value of each row:

================  ==================  =========  =============================================
name              shape               dtype      meaning
================  ==================  =========  =============================================
``observations``  (batch, obs_size)   float32    ``rummy_env.encoding`` observation vectors
``action_masks``  (batch, actions)    int8       1 where the action is legal, 0 elsewhere
``probabilities`` (batch, actions)    float32    the policy's action distribution
``values``        (batch,)            float32    the value head's estimate (points scale of
                                                 the trainer's reward)
================  ==================  =========  =============================================

The batch axis is dynamic. Beside the model, ``<name>.json`` holds the game, the player count,
the inputs and outputs above, the observation layout (name -> [start, stop)), the action table
(each action id in words, cards in RULES G2 notation, and the id ranges of each block) and the
checkpoint's own metadata (network, trainer config). The same JSON is stored inside the ONNX
file (metadata key ``rummy_env``) and the TorchScript archive (extra file ``metadata.json``), so
the model alone is enough to check it against a game.

The export is generic over the network: anything ``agents.policy.load_checkpoint`` returns with
``forward(observations, masks) -> (masked logits, values)`` is traced. After writing, the
exported model is run on random observations and masks and compared with torch (the largest
difference is recorded in the metadata, and an export that disagrees by more than 1e-5 fails;
``--tolerance`` raises that bound: a large card network on out-of-range random inputs can differ
by a few 1e-5 in a float32 probability, from the order of summation alone).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from rummy_env.cards import format_card, format_cards
from rummy_env.encoding import action_layout, observation_layout
from rummy_env.game import DECLARE, DISCARD, DRAW, MELD, PLACE, TAKE_CUT, TAKE_DISCARD
from rummy_env.ruleset import make_ruleset
from rummy_env.table import template_index

from .base import AgentError

METADATA_FORMAT = "rummy-env-exported-policy"
METADATA_VERSION = 1
METADATA_KEY = "rummy_env"
"""The ONNX ``metadata_props`` key (and, with ``.json``, the TorchScript extra file) holding the metadata."""
INPUT_NAMES = ("observations", "action_masks")
OUTPUT_NAMES = ("probabilities", "values")
FORMATS = ("onnx", "torchscript")
TOLERANCE = 1e-5
ONNX_OPSET = 17


class ExportError(AgentError):
    """A checkpoint that cannot be exported, or an export that does not match its model."""


def action_table(game: str) -> list[str]:
    """Every action id of ``game`` in words (cards in G2 notation), indexed by id."""
    layout = action_layout(game)
    rules = make_ruleset(game)
    templates = template_index(rules.ace_high, rules.max_jokers).templates if rules.table_melds else ()
    words = []
    for kind, a, b in layout.moves:
        if kind == DRAW:
            words.append("draw the stock top")
        elif kind == TAKE_DISCARD:
            words.append("take the discard top")
        elif kind == TAKE_CUT:
            words.append("take the cut card and go out")
        elif kind == DISCARD:
            words.append(f"discard {format_card(a)}")
        elif kind == DECLARE:
            words.append(f"discard {format_card(a)} and declare")
        elif kind == MELD:
            words.append(f"meld {format_cards(templates[a].cards)} (jokers stand in for cards not held)")
        elif kind == PLACE:
            words.append(f"place {format_card(a)} on table meld {b} (lay off, or swap for the joker standing for it)")
        else:  # pragma: no cover - the layout has no other kinds
            words.append(f"move {(kind, a, b)}")
    return words


def policy_metadata(meta: dict, fmt: str) -> dict:
    """The JSON metadata of an exported policy, from a checkpoint's metadata."""
    game, players = meta["game"], int(meta["num_players"])
    obs, actions = int(meta["observation_size"]), int(meta["num_actions"])
    layout = action_layout(game)
    inputs = [
        {"name": INPUT_NAMES[0], "shape": ["batch", obs], "dtype": "float32"},
        {"name": INPUT_NAMES[1], "shape": ["batch", actions], "dtype": "int8",
         "meaning": "1 where the action is legal (rummy_env.encoding.action_mask)"},
    ]
    return {
        "format": METADATA_FORMAT,
        "version": METADATA_VERSION,
        "exported_as": fmt,
        "game": game,
        "num_players": players,
        "observation_size": obs,
        "num_actions": actions,
        "inputs": inputs,
        "outputs": [
            {"name": OUTPUT_NAMES[0], "shape": ["batch", actions], "dtype": "float32",
             "meaning": "action probabilities, 0 on masked actions"},
            {"name": OUTPUT_NAMES[1], "shape": ["batch"], "dtype": "float32", "meaning": "value estimate"},
        ],
        "observation_layout": {name: [s.start, s.stop] for name, s in observation_layout(game, players).items()},
        "action_blocks": {name: [ids.start, ids.stop] for name, ids in layout.blocks.items()},
        "actions": action_table(game),
        "checkpoint": _json_safe(meta),
    }


def _json_safe(meta: dict) -> dict:
    """The parts of ``meta`` that JSON can hold (a checkpoint's metadata is meant to be plain)."""
    out = {}
    for key, value in meta.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        out[key] = value
    return out


def _wrapped(model):
    """``model`` with a softmax on its masked logits: (observations, masks) -> (probabilities, values)."""
    import torch

    class ExportedPolicy(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, observations, masks):
            logits, values = self.inner(observations, masks)
            return torch.softmax(logits, dim=-1), values.reshape(-1)

    return ExportedPolicy(model).eval()


def sample_inputs(observation_size: int, num_actions: int, batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random observations in [0, 2) and masks with at least one legal action per row."""
    rng = np.random.default_rng(seed)
    observations = rng.uniform(0.0, 2.0, (batch, observation_size)).astype(np.float32)
    masks = (rng.random((batch, num_actions)) < 0.3).astype(np.int8)
    masks[np.arange(batch), rng.integers(num_actions, size=batch)] = 1
    return observations, masks


def torch_outputs(model, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities, values) of the torch ``model`` on numpy inputs."""
    import torch

    with torch.no_grad():
        probabilities, values = _wrapped(model)(torch.as_tensor(observations), torch.as_tensor(masks))
    return probabilities.numpy(), values.numpy()


def _atomic_write(target: Path, write) -> None:
    """Call ``write(path)`` on a temporary file beside ``target``, then rename it over ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    try:
        write(temporary)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _export_onnx(wrapped, example, target: Path, metadata: dict) -> None:
    import torch

    names = [entry["name"] for entry in metadata["inputs"]]

    def write(path: str) -> None:
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript-based exporter is deprecated but needs no onnxscript
            torch.onnx.export(
                wrapped, example, buffer, input_names=names, output_names=list(OUTPUT_NAMES),
                dynamic_axes={name: {0: "batch"} for name in names + list(OUTPUT_NAMES)},
                opset_version=ONNX_OPSET, dynamo=False,
            )
        import onnx

        proto = onnx.load_from_string(buffer.getvalue())
        entry = proto.metadata_props.add()
        entry.key, entry.value = METADATA_KEY, json.dumps(metadata)
        proto.producer_name = "rummy-env agents.export"
        onnx.checker.check_model(proto)
        onnx.save(proto, path)

    _atomic_write(target, write)


def _export_torchscript(wrapped, example, target: Path, metadata: dict) -> None:
    import torch

    def write(path: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(wrapped, example, check_trace=False)
            torch.jit.save(traced, path, _extra_files={"metadata.json": json.dumps(metadata)})

    _atomic_write(target, write)


def exported_outputs(path: str | os.PathLike, fmt: str, observations: np.ndarray,
                     masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities, values) of an exported model file on numpy inputs."""
    if fmt == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        feed = dict(zip(INPUT_NAMES, (observations, masks)))
        probabilities, values = session.run(list(OUTPUT_NAMES), feed)
        return probabilities, values
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is deprecated; TorchScript files still load
        module = torch.jit.load(str(path), map_location="cpu")
    with torch.no_grad():
        probabilities, values = module(torch.as_tensor(observations), torch.as_tensor(masks))
    return probabilities.numpy(), values.numpy()


def default_output(checkpoint: str | os.PathLike, fmt: str) -> Path:
    """``runs/x/best.pt`` -> ``runs/x/best.onnx`` (ONNX) or ``runs/x/best.torchscript.pt``."""
    source = Path(checkpoint)
    return source.with_suffix(".onnx" if fmt == "onnx" else ".torchscript.pt")


def export_policy(checkpoint: str | os.PathLike, fmt: str = "onnx", out: str | os.PathLike | None = None,
                  game: str | None = None, num_players: int | None = None,
                  tolerance: float = TOLERANCE) -> tuple[Path, Path]:
    """Export ``checkpoint`` as ``fmt``; (model path, metadata JSON path). Checks the export against torch."""
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    from .policy import load_checkpoint

    model, meta = load_checkpoint(checkpoint, game, num_players)
    target = Path(out) if out is not None else default_output(checkpoint, fmt)
    if target.resolve() == Path(checkpoint).resolve():
        raise ExportError(f"output {str(target)!r} is the checkpoint itself: choose another --out")
    return export_model(model, meta, target, fmt, source=str(checkpoint), tolerance=tolerance)


def export_model(model, meta: dict, target: str | os.PathLike, fmt: str = "onnx",
                 source: str = "model", tolerance: float = TOLERANCE) -> tuple[Path, Path]:
    """Export a loaded network (``forward(observations, masks) -> (masked logits, values)``) with the
    checkpoint metadata ``meta`` (game, num_players, observation_size, num_actions …) to ``target``."""
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < 1):
        raise ExportError(f"tolerance {tolerance!r}: expected a number between 0 and 1")
    import torch

    target = Path(target)
    model.eval()
    metadata = policy_metadata(meta, fmt)
    obs_size, actions = metadata["observation_size"], metadata["num_actions"]
    example_obs, example_masks = sample_inputs(obs_size, actions, 2)
    example = (torch.as_tensor(example_obs), torch.as_tensor(example_masks))
    wrapped = _wrapped(model)
    try:
        with torch.no_grad():
            (_export_onnx if fmt == "onnx" else _export_torchscript)(wrapped, example, target, metadata)
    except (RuntimeError, TypeError, ValueError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ExportError(f"{source}: could not export as {fmt}: {first}") from None
    difference = 0.0
    for batch in (1, 7):
        observations, masks = sample_inputs(obs_size, actions, batch, seed=batch)
        expected = torch_outputs(model, observations, masks)
        got = exported_outputs(target, fmt, observations, masks)
        difference = max(difference, *(float(np.max(np.abs(e - g))) for e, g in zip(expected, got)))
    if difference > tolerance:
        target.unlink(missing_ok=True)
        raise ExportError(f"export {str(target)!r} disagrees with {source} by {difference:.2e} "
                          f"(more than {tolerance:g}); removed")
    metadata["check"] = {"max_abs_difference": difference, "tolerance": tolerance, "batches": [1, 7]}
    sidecar = metadata_path(target)
    _atomic_write(sidecar, lambda path: Path(path).write_text(json.dumps(metadata, indent=1) + "\n"))
    return target, sidecar


def metadata_path(model_path: str | os.PathLike) -> Path:
    """The JSON beside an exported model: ``best.onnx`` -> ``best.json``,
    ``best.torchscript.pt`` -> ``best.torchscript.json``."""
    return Path(model_path).with_suffix(".json")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.export",
        description="Export a policy checkpoint (agents.policy) to ONNX or TorchScript. The exported model "
                    "maps (observations float32 [batch, obs], action_masks int8 [batch, actions]) to "
                    "(probabilities [batch, actions], values [batch]); a JSON file beside it describes the "
                    "inputs, outputs, observation layout and action table (cards in RULES G2 notation).",
        epilog="Example: python -m agents.export runs/indian/best.pt --format onnx --out indian.onnx\n"
               "Play it: python -m agents.arena --game indian --agents onnx:indian.onnx rule",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("checkpoint", help="a checkpoint written by the trainer (agents.policy.save_checkpoint)")
    parser.add_argument("--format", choices=FORMATS, default="onnx", help="onnx (default) or torchscript")
    parser.add_argument("--out", metavar="PATH",
                        help="where to write the model (default: beside the checkpoint, .onnx or .torchscript.pt); "
                             "the metadata goes to the same name with .json")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help=f"largest difference from torch allowed in any probability or value on random "
                             f"inputs (default {TOLERANCE:g})")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        model_path, json_path = export_policy(args.checkpoint, args.format, args.out, tolerance=args.tolerance)
    except AgentError as error:
        parser.exit(2, f"export: error: {error}\n")
    meta = json.loads(json_path.read_text())
    print(f"wrote {model_path} ({meta['game']}, {meta['num_players']} players, "
          f"observation {meta['observation_size']}, {meta['num_actions']} actions; "
          f"largest difference from torch {meta['check']['max_abs_difference']:.1e})")
    print(f"wrote {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
