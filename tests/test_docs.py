"""The docs a newcomer reads: links resolve in a fresh clone, the README's code runs as shown, the
rule book is in the repository, and citations name rule ids and docs sections a user can follow."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "configs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / name for name in listed
            if name.endswith((".py", ".md", ".toml", ".txt", ".yaml", ".yml", ".cfg")) or name.startswith(".ci/")]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def heading_anchor(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def test_every_relative_link_resolves_inside_the_repository():
    for page in DOCS:
        check_links(page)


def check_links(page: Path) -> None:
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        if anchor and resolved.suffix == ".md":
            anchors = {heading_anchor(h) for h in re.findall(r"^#+ (.*)$", resolved.read_text(), flags=re.M)}
            assert anchor in anchors, f"{page.name}: {target}: no heading with that anchor"


def test_the_rule_book_is_in_the_repository_with_every_rule_id_the_tests_cite():
    book = (ROOT / "docs" / "rules.md").read_text()
    defined = set(re.findall(r"\*\*([GIBR]\d+) ", book))
    assert {"G1", "G10", "I1", "I9", "B1", "B6", "R1", "R8"} <= defined
    cited = set()
    for test in (ROOT / "tests").glob("test_*.py"):
        cited |= set(re.findall(r"\btest_([GIBR]\d+)_", test.read_text()))
    assert cited and cited <= defined, sorted(cited - defined)


def test_nothing_points_at_the_shared_folder_outside_the_repository():
    outside_copy = "shared/" + "RULES.md"
    for path in tracked_text_files():
        if path.name == "rules.md" or not path.exists():
            continue
        assert outside_copy not in path.read_text(errors="replace"), path.relative_to(ROOT)


def test_code_docs_and_tests_cite_no_internal_issue_numbers():
    pattern = re.compile(r"\bissue " + r"[0-9]+", re.I)
    offenders = []
    for path in tracked_text_files():
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "cite rule ids and docs sections instead:\n" + "\n".join(offenders)


def test_the_readme_python_examples_run_and_the_environment_example_prints_what_it_shows():
    readme = (ROOT / "README.md").read_text()
    blocks = python_blocks(readme)
    assert blocks
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
        if "rummy_env.env(" in block:
            shown = readme.split(block, 1)[1].split("```\n", 3)[2]  # after "prints"
            assert out.getvalue() == shown, "the README shows other output than its example prints"


SETUP = ('python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 && .venv/bin/pip install -e '
         '".[train,onnx,test]" && .venv/bin/python train.py')
TESTS = ".venv/bin/python -m pytest -n 2"


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def test_the_readme_is_short_and_starts_with_the_two_commands_and_an_example():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    first_code = readme.index("```")
    assert readme[first_code:].startswith("```python") and readme.index("## Quick start") > first_code
    example = python_blocks(readme)[0]
    assert len(example.strip().splitlines()) <= 15
    blocks = bash_blocks(readme)
    assert blocks[0].strip() == SETUP and blocks[1].strip() == TESTS  # the Quick start, unchanged
    developing = readme.split("## Developing", 1)[1]
    assert TESTS in developing and f"{TESTS} -m slow" in developing
    for topic in ("A plane of the observation", "A variant", "A game"):
        assert f"**{topic}**" in developing, topic


def test_every_run_folder_the_readme_uses_is_made_by_a_command_before_it():
    made: set[str] = set()
    for block in bash_blocks((ROOT / "README.md").read_text()):
        for line in block.splitlines():
            command = line.split("#", 1)[0]
            made |= set(re.findall(r"--run-dir (runs/[\w.-]+)", command))
            for folder in re.findall(r"(runs/[\w.-]+)/", command):
                assert folder in made, f"README: {line.strip()!r} uses {folder}, which no command before it makes"


def test_license_and_changelog_are_there():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "rummy-env contributors" in (ROOT / "LICENSE").read_text()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    from rummy_env.games import GAMES, game_spec

    for game in GAMES:
        assert f"`{game_spec(game).env_name}`" in changelog, game


def test_no_text_speaks_of_the_machines_the_project_was_developed_on():
    phrases = re.compile(r"this project's machine|development machine|on this machine's index", re.I)
    offenders = [f"{path.relative_to(ROOT)}:{number}" for path in tracked_text_files() if path.exists()
                 and path.name != "test_docs.py"
                 for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
                 if phrases.search(line)]
    assert not offenders, offenders
