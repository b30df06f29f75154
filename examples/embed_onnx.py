"""Run an exported rummy-env policy in your own game with numpy and onnxruntime only.

    python examples/embed_onnx.py indian.onnx

A game that keeps its own state fills the observation vector and the action mask itself; the
model's metadata (stored inside the .onnx file, and in the .json beside it) says where each part
of the observation lies (``observation_layout``: name -> [start, stop)) and what each action id
means (``actions``, cards in G2 notation: ``Ah``, ``Td``, ``*``). Card planes have 53 entries:
``suit * 13 + rank`` with suits s h d c and ranks A..K, then the joker at 52. See
``rummy_env/encoding.py`` for every part; here we fill only a few of them by hand.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import onnxruntime

RANKS, SUITS = "A23456789TJQK", "shdc"


def card_index(text: str) -> int:
    """A card in G2 notation (``Qh``, ``*``) as its plane index."""
    return 52 if text == "*" else SUITS.index(text[-1]) * 13 + RANKS.index(text[:-1])


def main(path: str) -> None:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # batch-1 decisions are fastest on one thread
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    meta = json.loads(session.get_modelmeta().custom_metadata_map["rummy_env"])
    layout = meta["observation_layout"]
    print(f"{meta['game']} policy for {meta['num_players']} players: observation {meta['observation_size']}, "
          f"{meta['num_actions']} actions")

    # Our own game's position: it is our turn to draw, we hold a few cards, 7h lies on the pile.
    observation = np.zeros((1, meta["observation_size"]), dtype=np.float32)
    hand_start = layout["hand"][0]
    for card in "5h 6h 7s 7d Qs Kc As 2c 9d 9s Jh 3d *".split():
        observation[0, hand_start + card_index(card)] += 1
    observation[0, layout["discard_top"][0] + card_index("7h")] = 1
    observation[0, layout["phase"][0]] = 1  # the draw phase
    observation[0, layout["to_act"][0]] = 1  # we (relative seat 0) are to act
    observation[0, layout["stock_size"][0]] = 0.6
    observation[0, layout["hand_sizes"][0]:layout["hand_sizes"][1]] = 1.0

    # Legal now: draw from the stock (id 0) or take the discard top (id 1).
    mask = np.zeros((1, meta["num_actions"]), dtype=np.int8)
    mask[0, [0, 1]] = 1

    probabilities, values = session.run(["probabilities", "values"],
                                        {"observations": observation, "action_masks": mask})
    action = int(np.argmax(probabilities[0]))
    print(f"chose action {action}: {meta['actions'][action]} (probability {probabilities[0, action]:.3f}, "
          f"value {values[0]:+.2f})")

    # Several positions at once: stack the rows.
    batch_obs = np.repeat(observation, 4, axis=0)
    batch_mask = np.repeat(mask, 4, axis=0)
    batch_mask[1:, 0] = 0  # rows 1..3 may only take the discard top
    batch_probabilities, _ = session.run(["probabilities", "values"],
                                         {"observations": batch_obs, "action_masks": batch_mask})
    print("batch of 4 chose", batch_probabilities.argmax(axis=1).tolist())


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    main(sys.argv[1])
