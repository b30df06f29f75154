"""The rule book as a web page (``GET /rules``): ``docs/rules.md`` in HTML, each rule under its id.

The page links every rule id it shows (``R4``) to ``/rules#R4``. The book is read from the
repository's ``docs/rules.md``, the one source of the rules' words; an installation without the
repository has no book to serve (``rule_book_html`` returns None). Only the little Markdown the
book uses is read: headings, the rule list (``- **R4 Title.** text``, continued and nested by
indented lines), ``**bold**`` and ``code``; everything is escaped first.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

RULE_BOOK = Path(__file__).resolve().parents[2] / "docs" / "rules.md"

_RULE = re.compile(r"^- \*\*([GIBR]\d+)\b")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    return _CODE.sub(r"<code>\1</code>", _BOLD.sub(r"<strong>\1</strong>", html.escape(text, quote=False)))


def render(markdown: str) -> str:
    """The book's Markdown as an HTML page: one ``<li id="R4">`` per rule, headings and paragraphs."""
    out = ['<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
           '<meta name="viewport" content="width=device-width, initial-scale=1">'
           '<title>rule book</title><link rel="stylesheet" href="/static/rules.css"></head><body>']
    block: list[str] = []  # the lines of the paragraph or rule being read
    kind = None  # "p", "li" or None
    in_list = False

    def close() -> None:
        nonlocal kind
        if kind == "p":
            out.append(f"<p>{_inline(' '.join(block))}</p>")
        elif kind == "li":
            parts = " ".join(block).split(" \0 ")
            rule = _RULE.match(block[0])[1]
            body = "".join(f"<p>{_inline(part)}</p>" for part in parts[1:])
            out.append(f'<li id="{rule}">{_inline(parts[0][2:])}{body}</li>')
        block.clear()
        kind = None

    for line in markdown.splitlines():
        stripped = line.strip()
        if not stripped or line.startswith("#") or _RULE.match(line):
            close()
        if line.startswith("#"):
            if in_list:
                out.append("</ul>")
                in_list = False
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{_inline(line.lstrip('#').strip())}</h{level}>")
        elif _RULE.match(line):
            if not in_list:
                out.append("<ul>")
                in_list = True
            block.append(line)
            kind = "li"
        elif stripped:
            if kind == "li" and stripped.startswith("- "):
                block.append("\0 " + stripped[2:])
            elif kind == "li":
                block.append(stripped)
            else:
                if in_list:
                    out.append("</ul>")
                    in_list = False
                block.append(stripped)
                kind = "p"
    close()
    if in_list:
        out.append("</ul>")
    out.append("</body></html>\n")
    return "\n".join(out)


@lru_cache(maxsize=1)
def rule_book_html() -> str | None:
    """The rule book page, or None where ``docs/rules.md`` is not beside the package (an installed wheel)."""
    if not RULE_BOOK.is_file():
        return None
    return render(RULE_BOOK.read_text(encoding="utf-8"))
