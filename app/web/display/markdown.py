"""A battle report's Markdown as HTML that is safe to put in a page (issue 23).

CommonMark with raw HTML turned off (markdown-it escapes any tag a player types, `<script>`
included), images off (a report's pictures are its uploaded photos, never a remote address
that could track readers), and every link marked `rel="nofollow noopener"`; markdown-it
already refuses `javascript:`, `vbscript:`, `file:` and `data:` link targets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

_md = MarkdownIt("commonmark", {"html": False}).disable("image")


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "nofollow noopener")
    return str(self.renderToken(tokens, idx, options, env))


_md.add_render_rule("link_open", _link_open)


def markdown(text: str) -> Markup:
    return Markup(_md.render(text or ""))  # safe: markdown-it escaped all raw HTML
