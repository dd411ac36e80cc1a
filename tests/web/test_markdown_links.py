"""Issue 45, item 8: a battle report's Markdown links only to web or mail addresses or to
this site; a ``data:`` address (which markdown-it alone lets through for images) stays text."""

from __future__ import annotations

import pytest

from app.web.display.markdown import markdown


@pytest.mark.parametrize(
    "typed",
    [
        "[x](data:image/png;base64,iVBORw0KGgo=)",
        "[x](DATA:image/gif;base64,R0lGOD=)",
        "[x](data&#58;image/png;base64,AA)",  # an entity for the colon
        "[x](javascript:alert(1))",
        "[x](vbscript:msgbox)",
        "[x](file:///etc/passwd)",
        "[x](ftp://example.com/a)",
        "<data:image/png;base64,AA>",  # an autolink
    ],
)
def test_a_link_to_another_scheme_stays_text(typed: str) -> None:
    shown = markdown(typed)
    assert "<a " not in shown and "href" not in shown


@pytest.mark.parametrize(
    ("typed", "href"),
    [
        ("[map](https://example.com/map)", "https://example.com/map"),
        ("[old](http://example.com)", "http://example.com"),
        ("[mail](mailto:orga@example.com)", "mailto:orga@example.com"),
        ("[card](/cards/3)", "/cards/3"),
        ("[top](#top)", "#top"),
        ("<https://example.com>", "https://example.com"),
    ],
)
def test_web_mail_and_site_links_still_work(typed: str, href: str) -> None:
    assert f'<a href="{href}" rel="nofollow noopener">' in markdown(typed)
