"""The page checks themselves, on small made-up pages served from the live server's
origin (so axe loads as it does on real pages): each catches what it is for, names the
offending element, and passes a page that is fine."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Route

from tests.browser import checks

GOOD = """
<main>
  <h1>Good</h1>
  <h2>Section</h2>
  <p>Read the <a href="/rules">rules</a> first.</p>
  <form>
    <label for="n">Name <input id="n" name="n"></label>
    <label><input type="checkbox" name="c"> Keep</label>
    <button type="submit">Save</button>
  </form>
  <div class="table-wrap"><table><tr><td>%s</td></tr></table></div>
</main>
""" % ("wide " * 200)


def show(page: Page, body: str) -> None:
    """Serve `body` as a page at the live server's /__check__ and open it."""
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Check</title><style>"
        "html { overflow-x: hidden; } body { margin: 0; font: 16px/1.5 sans-serif; }"
        "a, button, input, summary { min-height: 44px; }"
        "button, input { display: block; box-sizing: border-box; height: 48px; }"
        "label:has(> input[type=checkbox]) { display: flex; min-height: 44px; }"
        "input[type=checkbox] { height: 20px; min-height: 0; }"
        ".table-wrap { overflow-x: auto; }"
        ".visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; }"
        f"</style></head><body>{body}</body></html>"
    )

    def fulfil(route: Route) -> None:
        route.fulfill(status=200, content_type="text/html", body=html)

    page.route("**/__check__", fulfil)
    page.goto("/__check__")


def test_a_good_page_passes_every_check(phone: Page) -> None:
    show(phone, GOOD)
    checks.assert_page_ok(phone)


def test_sideways_overflow_is_caught_even_when_clipped(phone: Page) -> None:
    show(
        phone,
        '<main><h1>Wide</h1><div class="too-wide">x</div></main>'
        "<style>.too-wide { width: 600px; }</style>",
    )
    with pytest.raises(AssertionError, match=r"div\.too-wide.*right edge at 600 px"):
        checks.assert_no_horizontal_scroll(phone)


def test_small_targets_are_caught_but_text_links_are_not(phone: Page) -> None:
    show(
        phone,
        "<main><h1>Small</h1><p>See the <a href='/a'>first</a> page.</p>"
        "<p><a href='/b'>In a paragraph</a> · <a href='/c'>Also</a></p>"
        "<ul><li>Read <a href='/e'>this</a> first</li>"
        "<li><a href='/d' class='listed'>Listed</a></li></ul>"
        "<h2><a href='/f'>Heading link</a></h2>"
        "<table><tr><td><a href='/g'>Cell</a></td></tr></table>"
        "<button class='tiny'>Go</button>"
        "<button class='narrow'>+</button></main>"
        "<style>main button.tiny { height: 20px; min-height: 0; }"
        " main button.narrow { width: 36px; padding: 0; }"
        " main a { min-height: 0; }</style>",
    )
    with pytest.raises(AssertionError) as caught:
        checks.assert_tap_targets(phone)
    message = str(caught.value)
    offenders = ('a.listed "Listed"', '"Heading link"', '"Cell"', 'button.tiny "Go" is ')
    for offender in (*offenders, 'button.narrow "+" is 36 × '):  # too narrow counts too
        assert offender in message, message
    assert re.search(r'button\.tiny "Go" is [\d.]+ × 20 px', message), message
    for text_link in ('"first"', '"In a paragraph"', '"Also"', '"this"'):
        assert text_link not in message, message


def test_unlabelled_inputs_are_caught(phone: Page) -> None:
    show(
        phone,
        "<main><h1>Form</h1><label for='a'>A</label><input id='a' name='a'>"
        "<input name='nolabel' placeholder='A placeholder is not a label'>"
        "<input name='aria' aria-label='Named'></main>",
    )
    with pytest.raises(AssertionError, match=r"name=nolabel") as caught:
        checks.assert_labels(phone)
    assert "name=a)" not in str(caught.value) and "name=aria" not in str(caught.value)


@pytest.mark.parametrize(
    ("headings", "problem"),
    [
        ("<h2>First</h2><h1>Late</h1>", "the first heading is h2"),
        ("<h1>One</h1><h1>Two</h1>", "2 <h1> elements"),
        ("<h1>One</h1><h2>Two</h2><h4>Four</h4>", "h2 is followed by h4 'Four'"),
    ],
)
def test_headings_out_of_order_are_caught(phone: Page, headings: str, problem: str) -> None:
    show(phone, f"<main>{headings}</main>")
    with pytest.raises(AssertionError, match=problem):
        checks.assert_headings(phone)


def test_axe_reports_serious_problems_readably(phone: Page) -> None:
    show(
        phone,
        "<main><h1>Axe</h1><p class='faint'>Hard to read</p>"
        "<button class='empty'></button></main>"
        "<style>.faint { color: #ccc; background: #fff; }</style>",
    )
    with pytest.raises(AssertionError) as caught:
        checks.axe_scan(phone)
    message = str(caught.value)
    assert "[serious] color-contrast" in message and "Hard to read" in message
    assert "[critical] button-name" in message and 'class="empty"' in message
