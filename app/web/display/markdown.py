"""A battle report's Markdown as HTML that is safe to put in a page (issue 23).

CommonMark with raw HTML turned off (markdown-it escapes any tag a player types, `<script>`
included), images off (a report's pictures are its uploaded photos, never a remote address
that could track readers), and every link marked `rel="nofollow noopener"`. A link goes only
to a web or mail address, or a path on this site: markdown-it alone would still let
`data:image/...` through (issue 45), and no story needs `javascript:`, `file:` or any
other scheme."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

_md = MarkdownIt("commonmark", {"html": False}).disable("image")
_SCHEME = re.compile(r"^\s*([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
# A browser drops tabs and newlines anywhere in an address and controls or spaces at its ends.
_IGNORED_BY_BROWSERS = re.compile(r"[\x00-\x20\x7f]")
_LINKABLE = frozenset({"http", "https", "mailto"})


def _allowed_link(url: str) -> bool:
    """http(s) and mailto, or no scheme at all (a path or an anchor); anything else stays
    text. markdown-it checks the target after decoding entities (``data&#58;`` is ``data:``)
    and percent-encoding what is left, so no hidden scheme gets past."""
    scheme = _SCHEME.match(_IGNORED_BY_BROWSERS.sub("", url))
    return scheme is None or scheme.group(1).lower() in _LINKABLE


_md.validateLink = _allowed_link  # type: ignore[method-assign]


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "nofollow noopener")
    return str(self.renderToken(tokens, idx, options, env))


_md.add_render_rule("link_open", _link_open)


def markdown(text: str) -> Markup:
    return Markup(_md.render(text or ""))  # safe: markdown-it escaped all raw HTML
