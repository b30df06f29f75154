"""pyproject.toml: a light base install, the [train] extra, console scripts that resolve."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_torch_and_tensorboard_are_the_train_extra_not_base_dependencies():
    assert not names(PROJECT["dependencies"]) & {"torch", "tensorboard"}
    assert {"torch", "tensorboard"} <= names(PROJECT["optional-dependencies"]["train"])


def test_the_test_extra_is_there_for_ci():
    assert {"pytest", "pytest-xdist", "hypothesis"} <= names(PROJECT["optional-dependencies"]["test"])
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index("torch==2.13.0") < ci.index('-e ".[train,onnx,test]"') < ci.index("pytest -n 2")


@pytest.mark.parametrize("script", ["rummy-train", "rummy-arena", "rummy-bench", "rummy-play", "rummy-demo"])
def test_console_scripts_name_a_main_that_exists(script):
    module, _, function = PROJECT["scripts"][script].partition(":")
    assert callable(getattr(importlib.import_module(module), function))


@pytest.mark.parametrize("script, argv", [("rummy-demo", ["--players", "2"]),
                                          ("rummy-arena", ["--game", "basic", "--agents", "random", "--hands", "2",
                                                           "--workers", "1", "--no-progress"])])
def test_console_script_mains_return_an_exit_status(script, argv, capsys):
    module, _, function = PROJECT["scripts"][script].partition(":")
    assert getattr(importlib.import_module(module), function)(argv) == 0
