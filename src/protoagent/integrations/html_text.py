"""HTML reduced to readable text with the standard library's parser: no scripts, styles or tags."""

from __future__ import annotations

import re
from html.parser import HTMLParser

SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe"})
"""Elements whose content is never text a reader sees (all have required end tags)."""
BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
        "td", "th", "tr", "ul",
    }
)  # fmt: skip
"""Elements that start a new line of text."""


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skipping: list[str] = []
        self._in_title = False
        self._pre_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag == "pre":
            self._pre_depth += 1
        elif tag in SKIPPED:
            self._skipping.append(tag)
        if tag in BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        elif self._skipping and tag == self._skipping[-1]:
            self._skipping.pop()
        if tag in BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skipping:
            # Outside <pre>, line breaks in the source are just spaces.
            self.parts.append(data if self._pre_depth else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """The visible text of ``html``: the title first, then one line per block (``<pre>`` keeps its
    lines), runs of spaces collapsed and blank lines dropped."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    lines = (re.sub(r"[ \t\f\v]+", " ", line).strip() for line in "".join(collector.parts).splitlines())
    body = "\n".join(line for line in lines if line)
    title = re.sub(r"\s+", " ", "".join(collector.title)).strip()
    if title and not body.startswith(title):
        return f"{title}\n\n{body}" if body else title
    return body
