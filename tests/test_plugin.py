"""Plug-in agents (docs/agents.md "Write your own agent"): a class or factory from a file or a module,
wherever a spec goes (the arena in one and in two processes, the terminal game), and every failure
a named ``AgentError``, never a silent forfeit."""

from __future__ import annotations

import io
import textwrap
import traceback
from pathlib import Path

import numpy as np
import pytest

from rummy_env.ruleset import make_ruleset
from agents.arena import ArenaConfig, run_arena, run_cli, summarize
from agents.base import AgentError, plays_many_hands
from agents.plugin import BatchPluginAgent, PluginAgent
from agents.registry import make_agent
from rummy_apps.play import main as play_main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = f"{ROOT / 'examples' / 'my_agent.py'}:GreedyAgent"

PLUGIN = textwrap.dedent('''
    import random

    calls = []


    class FirstLegal:
        """Plays the lowest legal action id; remembers how it was built and reset."""

        def __init__(self, game, num_players, seed):
            self.built = (game, num_players, seed)
            self.resets = []

        def reset(self, seed):
            self.resets.append(seed)

        def act(self, observation, action_mask):
            return int(action_mask.nonzero()[0][0])


    class Sampler:
        """Any legal action at random; takes only the seed."""

        def __init__(self, seed=None):
            self.rng = random.Random(seed)

        def reset(self, seed):
            self.rng = random.Random(seed)

        def act(self, observation, action_mask):
            return self.rng.choice([a for a, ok in enumerate(action_mask) if ok])


    class Batched:
        """Plays many hands at once: the highest legal id of each row."""

        def __init__(self, **settings):
            self.settings = settings

        def act(self, observation, action_mask):
            return int(action_mask.nonzero()[0][-1])

        def act_batch(self, observations, masks):
            return [int(row.nonzero()[0][-1]) for row in masks]


    def make_first_legal(game):
        return FirstLegal(game, 0, None)


    class Broken:
        def __init__(self, game):
            raise RuntimeError("cannot start for " + game)


    class Raises:
        def act(self, observation, action_mask):
            return helper_that_fails()


    def helper_that_fails():
        raise KeyError("a bug in my agent")


    class Cheats:
        def act(self, observation, action_mask):
            return int(np.argmin(action_mask))


    class Floats:
        def act(self, observation, action_mask):
            return 0.0


    class NoAct:
        pass


    class BadBatch:
        def act(self, observation, action_mask):
            return 0

        def act_batch(self, observations, masks):
            return [0] * (len(masks) + 1)


    import numpy as np
''')


@pytest.fixture
def plugin(tmp_path) -> Path:
    path = tmp_path / "my_agents.py"
    path.write_text(PLUGIN)
    return path


def mask_of(*legal: int, size: int = 108) -> np.ndarray:
    mask = np.zeros(size, np.int8)
    mask[list(legal)] = 1
    return mask


def test_a_class_from_a_file_gets_the_arguments_its_signature_takes(plugin):
    agent = make_agent(f"{plugin}:FirstLegal", make_ruleset("romi", 3), seed=5)
    assert isinstance(agent, PluginAgent) and not plays_many_hands(agent)
    assert agent.inner.built == ("romi", 3, 5) and agent.name == f"{plugin}:FirstLegal"
    agent.reset(seed=11)
    assert agent.inner.resets == [11]
    assert agent.act(np.zeros(4), mask_of(7, 9)) == 7
    sampler = make_agent(f"{plugin}:Sampler", make_ruleset("indian", 2), seed=3)  # takes only seed
    assert sampler.act(np.zeros(4), mask_of(4)) == 4
    factory = make_agent(f"{plugin}:make_first_legal", make_ruleset("basic", 2))  # a factory function, taking only game
    assert factory.inner.built == ("basic", 0, None)


def test_a_plugin_with_act_batch_plays_many_hands_with_one_instance(plugin):
    agent = make_agent(f"{plugin}:Batched", make_ruleset("indian", 2), seed=1)  # **settings: every argument
    assert isinstance(agent, BatchPluginAgent) and plays_many_hands(agent)
    assert agent.inner.settings == {"game": "indian", "num_players": 2, "seed": 1}
    masks = np.stack([mask_of(1, 3), mask_of(0, 2, 5)])
    assert agent.act_batch(np.zeros((2, 4)), masks).tolist() == [3, 5]


def test_a_plugin_from_a_module_on_the_path(plugin, monkeypatch):
    package = plugin.parent / "my_package"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "players.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(plugin.parent))
    agent = make_agent("my_package.players:FirstLegal", make_ruleset("basic", 2), seed=2)
    assert agent.inner.built == ("basic", 2, 2)


def test_the_example_agent_plays_in_the_arena_and_beats_random():
    """examples/my_agent.py imports nothing of ours and plays Basic through the arena (B3: it melds)."""
    source = (ROOT / "examples" / "my_agent.py").read_text()
    assert "import" not in source.replace("imports nothing", "")
    config = ArenaConfig(game="basic", agents=(EXAMPLE, "random"), hands=40, seed=3)
    summary = summarize(config, run_arena(config, progress=False))
    greedy, rand = summary["agents"]
    assert greedy["agent"] == "my_agent.py:GreedyAgent"
    assert greedy["wins"] > 2 * rand["wins"]


def test_a_plugin_plays_the_same_in_one_and_in_two_processes(plugin):
    """A plug-in from a file loads in the arena's worker processes too; results do not depend on them."""
    config = ArenaConfig(game="indian", agents=(f"{plugin}:Sampler", "rule"), hands=40, seed=1)
    one = run_arena(config, workers=1, progress=False)
    two = run_arena(config, workers=2, progress=False)
    assert one == two and len(one) == 40


def test_the_arena_command_line_takes_a_plugin(plugin, capsys):
    summary = run_cli(["--game", "romi", "--agents", f"{plugin}:FirstLegal", "random", "--hands", "4",
                       "--no-progress"])
    assert summary["agents"][0]["spec"] == f"{plugin}:FirstLegal"
    assert "my_agents.py:FirstLegal" in capsys.readouterr().out


# ----------------------------------------------------------------------------- named errors


@pytest.mark.parametrize("name, message", [
    ("missing.py:Agent", r"no such file .*missing\.py"),
    ("{plugin}:Nope", r"has no name 'Nope' \(it defines: .*FirstLegal"),
    ("{plugin}:NoAct", r"returned a NoAct, which has no act\(observation, action_mask\) method"),
    ("{plugin}", r"expected PATH\.py:NAME or MODULE:NAME"),
    ("no_such_package.module:Agent", r"no module named 'no_such_package\.module'"),
])
def test_a_spec_that_cannot_load_is_named(plugin, name, message):
    spec = name.format(plugin=plugin)
    with pytest.raises(AgentError, match=message) as refused:
        make_agent(spec, make_ruleset("indian", 2))
    assert spec.split(":")[0] in str(refused.value) or "missing" in spec


def test_a_constructor_that_raises_is_named_with_its_exception_chained(plugin):
    with pytest.raises(AgentError, match=r"Broken\(game='basic'\) raised RuntimeError: cannot start for basic") as e:
        make_agent(f"{plugin}:Broken", make_ruleset("basic", 2))
    assert isinstance(e.value.__cause__, RuntimeError)


def test_an_exception_inside_act_keeps_the_plugins_traceback(plugin):
    agent = make_agent(f"{plugin}:Raises", make_ruleset("indian", 2))
    with pytest.raises(AgentError, match=r"act raised KeyError: 'a bug in my agent'") as raised:
        agent.act(np.zeros(4), mask_of(0))
    assert isinstance(raised.value.__cause__, KeyError)
    frames = traceback.extract_tb(raised.value.__cause__.__traceback__)
    assert [f.name for f in frames][-2:] == ["act", "helper_that_fails"] and frames[-1].filename == str(plugin)


@pytest.mark.parametrize("name, message", [
    ("Cheats", r"'.*:Cheats' chose action 0, which the mask forbids; legal actions: \[2, 5\]"),
    ("Floats", r"returned 0\.0, not an action id \(an int\); legal actions: \[2, 5\]"),
])
def test_an_action_the_mask_forbids_names_the_agent_the_action_and_the_legal_ones(plugin, name, message):
    agent = make_agent(f"{plugin}:{name}", make_ruleset("indian", 2))
    with pytest.raises(AgentError, match=message):
        agent.act(np.zeros(4), mask_of(2, 5))


def test_act_batch_of_the_wrong_length_is_named(plugin):
    agent = make_agent(f"{plugin}:BadBatch", make_ruleset("indian", 2))
    with pytest.raises(AgentError, match=r"act_batch returned shape \(3,\): expected 2 action ids"):
        agent.act_batch(np.zeros((2, 4)), np.stack([mask_of(0), mask_of(0)]))


def test_an_exception_in_a_worker_process_reaches_the_arena_with_its_traceback(plugin):
    config = ArenaConfig(game="basic", agents=(f"{plugin}:Raises", "rule"), hands=40, seed=1)
    with pytest.raises(AgentError, match=r"act raised KeyError") as raised:
        run_arena(config, workers=2, progress=False)
    assert "helper_that_fails" in str(raised.value.__cause__)  # the worker's traceback, plug-in frames in it


def test_the_terminal_game_plays_a_plugin_and_shows_its_failure(plugin):
    out = io.StringIO()
    code = play_main(["--game", "basic", "--opponents", f"{plugin}:FirstLegal", "--seat", "1", "--width", "400"],
                     stdin=io.StringIO("quit\n"), stdout=out)
    assert code == 0 and f"player_0 ({plugin}:FirstLegal): draw" in out.getvalue()
    out = io.StringIO()
    code = play_main(["--game", "basic", "--opponents", f"{plugin}:Raises", "--seat", "1", "--width", "400"],
                     stdin=io.StringIO("quit\n"), stdout=out)
    text = out.getvalue()
    assert code == 1 and "the game stopped: AgentError: plug-in agent" in text
    assert "helper_that_fails" in text and "KeyError: 'a bug in my agent'" in text


def test_built_in_specs_are_never_read_as_plugins():
    assert make_agent("rule:near_weight=0.5", make_ruleset("indian", 2)).name == "rule:near_weight=0.5"
    with pytest.raises(AgentError, match=r"unknown agent spec 'nosuch:thing'"):
        make_agent("nosuch:thing", make_ruleset("indian", 2))
