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
    rule: str | None = None  # the id of the rule being read
    parts: list[list[str]] = []  # its lines: the rule's own, then one list per nested item
    paragraph: list[str] = []
    in_list = False

    def close() -> None:
        nonlocal rule
        if rule is not None:
            head, *nested = (" ".join(lines) for lines in parts)
            body = "".join(f"<p>{_inline(text)}</p>" for text in nested)
            out.append(f'<li id="{rule}">{_inline(head)}{body}</li>')
            rule = None
            parts.clear()
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()

    def end_list() -> None:
        nonlocal in_list
        if in_list:
            out.append("</ul>")
            in_list = False

    for line in markdown.splitlines():
        text = line.strip()
        found = _RULE.match(line)
        if not text or line.startswith("#") or found:
            close()
        if line.startswith("#"):
            end_list()
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{_inline(line.lstrip('#').strip())}</h{level}>")
        elif found:
            if not in_list:
                out.append("<ul>")
                in_list = True
            rule = found[1]
            parts.append([text[2:]])
        elif text and rule is not None:
            if text.startswith("- "):
                parts.append([text[2:]])
            else:
                parts[-1].append(text)
        elif text:
            end_list()
            paragraph.append(text)
    close()
    end_list()
    out.append("</body></html>\n")
    return "\n".join(out)


@lru_cache(maxsize=1)
def rule_book_html() -> str | None:
    """The rule book page, or None where ``docs/rules.md`` is not beside the package (an installed wheel)."""
    if not RULE_BOOK.is_file():
        return None
    return render(RULE_BOOK.read_text(encoding="utf-8"))
