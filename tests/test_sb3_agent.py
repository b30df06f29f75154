"""``sb3:PATH.zip``: a MaskablePPO model trained on ``make_single_agent`` plays in the arena; a zip
that is missing, damaged, or for another game or player count is refused before any hand."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from agents.arena import ArenaConfig, run_arena  # noqa: E402
from agents.base import AgentError  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.sb3_agent import Sb3Agent  # noqa: E402
from rummy_env.ruleset import make_ruleset
from rummy_env import make_single_agent  # noqa: E402


@pytest.fixture(scope="module")
def indian_zip(tmp_path_factory) -> Path:
    """A tiny MaskablePPO trained for 64 steps on Indian Rummy, 2 players."""
    env = make_single_agent("indian", seat=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    model.learn(64)
    path = tmp_path_factory.mktemp("sb3") / "indian_ppo.zip"
    model.save(path)
    return path


def test_sb3_model_plays_in_the_arena(indian_zip):
    config = ArenaConfig(game="indian", agents=(f"sb3:{indian_zip}", "random"), hands=2, seed=1)
    records = run_arena(config, progress=False)
    assert len(records) == 2 and all(r["outcome"] in ("declare", "stalemate", "cut_off") for r in records)


def test_sb3_agent_chooses_only_legal_actions(indian_zip):
    agent = make_agent(f"sb3:{indian_zip}", make_ruleset("indian", 2))
    assert isinstance(agent, Sb3Agent) and agent.name == f"sb3:{indian_zip}"
    env = make_single_agent("indian", seat=0)
    observation, info = env.reset(seed=3)
    for _ in range(20):
        mask = info["action_mask"]
        action = agent.act(observation, mask)
        assert mask[action] == 1
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            observation, info = env.reset()
    batch = agent.act_batch(np.stack([observation, observation]), np.stack([info["action_mask"]] * 2))
    assert batch.shape == (2,) and all(info["action_mask"][a] for a in batch)


def test_sb3_zip_for_another_game_or_player_count_is_refused(indian_zip):
    with pytest.raises(AgentError,
                       match=r"indian_ppo.zip.*'basic' with 2 players needs.*it fits 'indian' with 2 players"):
        make_agent(f"sb3:{indian_zip}", make_ruleset("basic", 2))
    with pytest.raises(AgentError, match=r"indian_ppo.zip.*'indian' with 3 players needs.*it fits 'indian' with 2"):
        make_agent(f"sb3:{indian_zip}", make_ruleset("indian", 3))


def test_missing_or_damaged_zip_is_an_error_naming_it(tmp_path, indian_zip):
    with pytest.raises(AgentError, match="nowhere.zip.*no such file"):
        make_agent(f"sb3:{tmp_path / 'nowhere.zip'}", make_ruleset("indian", 2))
    text = tmp_path / "notes.zip"
    text.write_text("not a zip")
    with pytest.raises(AgentError, match="notes.zip.*not a zip file"):
        make_agent(f"sb3:{text}", make_ruleset("indian", 2))
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(indian_zip) as source, zipfile.ZipFile(damaged, "w") as target:
        for item in source.infolist():
            if item.filename != "data":  # the model description SB3 needs to rebuild it
                target.writestr(item, source.read(item))
    with pytest.raises(AgentError, match="damaged.zip.*not a loadable MaskablePPO model"):
        make_agent(f"sb3:{damaged}", make_ruleset("indian", 2))
    with pytest.raises(AgentError, match="expected sb3:PATH.zip"):
        make_agent("sb3:", make_ruleset("indian", 2))
