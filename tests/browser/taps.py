"""Counting taps as the tap-budget tests do (issues 12, 21 and 40): every click or tap 1, a
native <select> 2 (open it, pick), a typed field 1 tap (to focus it) and 1 keyboard entry
(counted apart), opening a page by its address 1 (as tapping its link would)."""

from __future__ import annotations

from dataclasses import dataclass, field

from playwright.sync_api import Locator, Page


@dataclass
class Taps:
    """Taps and keyboard entries, by phase."""

    phase: str = ""
    taps: dict[str, int] = field(default_factory=dict)
    keys: dict[str, int] = field(default_factory=dict)

    def count(self, taps: int, keys: int = 0) -> None:
        self.taps[self.phase] = self.taps.get(self.phase, 0) + taps
        self.keys[self.phase] = self.keys.get(self.phase, 0) + keys

    def tap(self, target: Locator) -> None:
        target.click()
        self.count(1)

    def go(self, page: Page, target: Locator) -> None:
        """A tap that opens another page."""
        with page.expect_navigation(timeout=30_000):
            target.click()
        self.count(1)

    def open(self, page: Page, url: str) -> None:
        page.goto(url)
        self.count(1)

    def select(self, target: Locator, value: str) -> None:
        target.select_option(value=value)
        self.count(2)

    def type(self, target: Locator, text: str) -> None:
        target.fill(text)
        target.dispatch_event("change")
        self.count(1, keys=1)

    def total(self, *phases: str) -> int:
        return sum(self.taps.get(p, 0) + self.keys.get(p, 0) for p in phases)

    def report(self) -> str:
        lines = [f"{'phase':<34} taps keys"]
        lines += [f"{p:<34} {self.taps[p]:>4} {self.keys.get(p, 0):>4}" for p in self.taps]
        return "\n".join(lines)


SCROLLED = """() => {
  let last = window.scrollY;
  window.__scrolled = 0;
  addEventListener('scroll', () => {
    window.__scrolled += Math.abs(window.scrollY - last);
    last = window.scrollY;
  }, {passive: true});
}"""


def watch_scrolling(page: Page) -> None:
    """From now on the page adds up how far it is scrolled, up or down (issue 49: the
    after-the-game step's scrolling, measured as a thumb would travel)."""
    page.evaluate(SCROLLED)


def screens_scrolled(page: Page, screen: int) -> float:
    """How far the page was scrolled since `watch_scrolling`, in screens of `screen` px."""
    return float(page.evaluate("window.__scrolled || 0")) / screen
