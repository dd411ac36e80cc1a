"""What every page must pass in a real browser, as plain functions on a Playwright page:
no sideways scrolling on a phone, thumb-sized tap targets, an accessible name on every
input, headings in order, and no serious or critical axe-core findings.

Each check fails with a readable list of the offending elements (a short CSS-like path,
their size or text), so a failure says what to fix without opening the browser.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
TAP = 44  # px: the smallest comfortable tap target (Apple HIG; WCAG 2.5.5 AAA)

# A short, readable path for an element in failure messages: main > form > button"Log in".
_DESCRIBE = """
function describe(el) {
  const parts = [];
  for (let node = el; node && node.nodeType === 1 && parts.length < 4; node = node.parentElement) {
    let part = node.tagName.toLowerCase();
    if (node.id) { part += '#' + node.id; parts.unshift(part); break; }
    const cls = [...node.classList].slice(0, 2);
    if (cls.length) part += '.' + cls.join('.');
    parts.unshift(part);
  }
  const text = (el.innerText || el.value || el.getAttribute('aria-label') || '')
    .trim().replace(/\\s+/g, ' ').slice(0, 40);
  return parts.join(' > ') + (text ? ' "' + text + '"' : '');
}
"""


def assert_no_horizontal_scroll(page: Page) -> None:
    """The page fits the viewport's width: nothing to scroll sideways to, and nothing cut
    off at the right edge either (app.css sets `html { overflow-x: hidden }`, which would
    otherwise hide an overflow by clipping it instead of scrolling). Content inside its own
    scrolling box (`.table-wrap`, any overflow-x: auto/scroll/hidden ancestor) is fine: it
    scrolls in its box, the page does not."""
    found: dict[str, Any] = page.evaluate(
        "() => {"
        + _DESCRIBE
        + """
      const root = document.documentElement;
      const width = root.clientWidth;
      const clipped = [];
      const scrolls = (node) => {
        for (let a = node.parentElement; a && a !== document.body; a = a.parentElement) {
          const o = getComputedStyle(a).overflowX;
          if (o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip') return true;
        }
        return false;
      };
      for (const el of document.body.querySelectorAll('*')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || r.right <= width + 1) continue;
        if (!el.checkVisibility({visibilityProperty: true})) continue;
        if (scrolls(el)) continue;
        clipped.push(describe(el) + ` (right edge at ${Math.round(r.right)} px)`);
      }
      return {scrollWidth: root.scrollWidth, width, clipped: clipped.slice(0, 8)};
    }"""
    )
    problems = []
    if found["scrollWidth"] > found["width"]:
        problems.append(f"page is {found['scrollWidth']} px wide in a {found['width']} px viewport")
    problems += [f"sticks out past the right edge: {c}" for c in found["clipped"]]
    assert not problems, f"{page.url} scrolls sideways:\n  " + "\n  ".join(problems)


def assert_tap_targets(page: Page, minimum: int = TAP) -> None:
    """Every visible link, button, summary, input, select and textarea in the page's main
    content and the site header is at least `minimum` px tall and wide (issue 21: a 36 px
    wide − or ⋯ is as hard to hit as a 36 px tall one).

    Exempt, and why:
    - text links: an inline `<a>` in a paragraph (`<p>`), or in any block that also holds
      words that are not link text (e.g. "Already have an account? Log in." in a list
      item). Their height is the line of text's (WCAG 2.5.8 exempts targets in a
      sentence); making them taller would break the text's lines;
    - a checkbox or radio is measured with its `<label>`: tapping the label ticks it, so
      the label is the real target;
    - anything not rendered (hidden inputs, closed `<details>`, `display: none`) and the
      visually-hidden helpers (1 px boxes for screen readers, not meant to be tapped).
    NOT exempt: a link that is all of a heading, list item or table cell (a unit's name on
    the Order of Battle, a row of a table): such lists are what thumbs tap, again and again.
    """
    small: list[str] = page.evaluate(
        "(minimum) => {"
        + _DESCRIBE
        + """
      const selector = 'a[href], button, summary, input:not([type=hidden]), select, textarea, '
        + '[role=button], [tabindex]:not([tabindex="-1"])';
      const scopes = document.querySelectorAll('main, body > header');
      const letters = /\\p{L}/u;
      const inSentence = (el) => {
        if (el.tagName !== 'A' || getComputedStyle(el).display !== 'inline') return false;
        let block = el.parentElement;
        while (block && getComputedStyle(block).display.startsWith('inline')) {
          block = block.parentElement;
        }
        if (!block) return false;
        if (block.tagName === 'P') return true;
        let words = block.innerText || '';
        for (const link of block.querySelectorAll('a')) {
          words = words.split(link.innerText).join(' ');
        }
        return letters.test(words);
      };
      const out = [];
      const seen = new Set();
      for (const scope of scopes) {
        for (const el of scope.querySelectorAll(selector)) {
          if (seen.has(el)) continue;
          seen.add(el);
          if (!el.checkVisibility({visibilityProperty: true, opacityProperty: false})) continue;
          if (el.closest('.visually-hidden')) continue;
          const box = el.getBoundingClientRect();
          let height = box.height;
          let width = box.width;
          if (height === 0) continue;
          if (el.matches('input[type=checkbox], input[type=radio]') && el.labels) {
            for (const label of el.labels) {
              const around = label.getBoundingClientRect();
              height = Math.max(height, around.height);
              width = Math.max(width, around.width);
            }
          }
          if (Math.min(height, width) + 0.5 >= minimum || inSentence(el)) continue;
          const size = (n) => Math.round(n * 10) / 10;
          out.push(describe(el) + ` is ${size(width)} × ${size(height)} px`);
        }
      }
      return out;
    }""",
        minimum,
    )
    assert not small, f"{page.url}: tap targets under {minimum} px:\n  " + "\n  ".join(small)


def assert_labels(page: Page) -> None:
    """Every visible form control has an accessible name from a `<label>` (wrapping, or
    `for=`), or from aria-label / aria-labelledby. A placeholder is not a label."""
    unlabelled: list[str] = page.evaluate(
        "() => {"
        + _DESCRIBE
        + """
      const out = [];
      const controls = document.querySelectorAll(
        'input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=reset]), '
        + 'select, textarea');
      for (const el of controls) {
        if (!el.checkVisibility({visibilityProperty: true})) continue;
        const named = [...(el.labels || [])].some((l) => l.innerText.trim())
          || (el.getAttribute('aria-label') || '').trim()
          || (el.getAttribute('aria-labelledby') || '').split(/\\s+/).some((id) => {
               const ref = id && document.getElementById(id);
               return ref && ref.textContent.trim();
             });
        if (!named) out.push(describe(el) + ` (name=${el.name || '?'})`);
      }
      return out;
    }"""
    )
    assert not unlabelled, f"{page.url}: controls without a label:\n  " + "\n  ".join(unlabelled)


def assert_headings(page: Page) -> None:
    """Exactly one `<h1>`, first, and no level skipped on the way down (h2 then h4 is a
    gap a screen-reader user notices; going back up any number of levels is fine)."""
    levels: list[list[Any]] = page.evaluate(
        """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
          .filter((h) => h.checkVisibility() || h.closest('details'))
          .map((h) => [Number(h.tagName[1]), h.innerText.trim().slice(0, 50)])"""
    )
    problems = []
    ones = [text for level, text in levels if level == 1]
    if len(ones) != 1:
        problems.append(f"{len(ones)} <h1> elements ({ones}); a page has exactly one")
    if levels and levels[0][0] != 1:
        problems.append(f"the first heading is h{levels[0][0]} {levels[0][1]!r}, not the h1")
    for (before, _), (level, text) in itertools.pairwise(levels):
        if level > before + 1:
            problems.append(f"h{before} is followed by h{level} {text!r}")
    assert not problems, f"{page.url}: headings out of order:\n  " + "\n  ".join(problems)


def axe_scan(page: Page, *, impacts: tuple[str, ...] = ("serious", "critical")) -> list[Any]:
    """Run axe-core (vendored from npm, tests/browser/vendor/axe.min.js) on the page as it
    is now, and fail on any violation of the given impacts, listing rule, help text, where.

    The page's Content-Security-Policy (`script-src 'self'`) blocks inline scripts, and
    `add_script_tag` injects one; turning CSP off (`bypass_csp`) would also hide the app's
    own CSP mistakes. So axe's source is evaluated as a function through Playwright, which
    CSP does not govern: CSP stays on for the page's own scripts. Returns all violations
    (any impact) for callers that want to look further."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # Evaluated through the browser's debugging protocol, which the page's CSP does not
        # govern (a same-origin URL answered by page.route() used to serve it, but once the
        # wizard's service worker controls the page its requests bypass Playwright's routes
        # and reach the server: a 404 and a failed check, depending on timing).
        page.evaluate("() => {" + AXE.read_text() + "\n}")
    violations: list[Any] = page.evaluate(
        """async () => {
          const result = await axe.run(document, {resultTypes: ['violations']});
          return result.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help, url: v.helpUrl,
            nodes: v.nodes.map((n) => ({
              target: n.target.join(' '), summary: (n.failureSummary || '').trim(),
              html: n.html.slice(0, 160),
            })),
          }));
        }"""
    )
    bad = [v for v in violations if v["impact"] in impacts]
    if bad:
        lines = []
        for v in bad:
            lines.append(f"[{v['impact']}] {v['id']}: {v['help']} ({v['url']})")
            for node in v["nodes"][:6]:
                lines.append(f"    at {node['target']}: {node['html']}")
                for reason in node["summary"].splitlines()[:4]:
                    lines.append(f"        {reason.strip()}")
            if len(v["nodes"]) > 6:
                lines.append(f"    ... and {len(v['nodes']) - 6} more")
        raise AssertionError(f"{page.url}: axe found {len(bad)} problem(s):\n" + "\n".join(lines))
    return violations


def assert_page_ok(page: Page) -> None:
    """All of the above on one loaded page, reporting every failing check at once."""
    failures = []
    for check in (
        assert_no_horizontal_scroll,
        assert_tap_targets,
        assert_labels,
        assert_headings,
        axe_scan,
    ):
        try:
            check(page)
        except AssertionError as error:
            failures.append(str(error))
    assert not failures, "\n\n".join(failures)
