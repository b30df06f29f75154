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
