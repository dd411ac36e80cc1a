"""/docs in Chromium: Swagger UI, served from /static/vendor and started by a script file of
ours, renders every operation under the site's own Content-Security-Policy (it was blank:
FastAPI's page loads from a CDN and starts with an inline script, both blocked)."""

from __future__ import annotations

from playwright.sync_api import ConsoleMessage, Page


def test_docs_render_every_operation_under_our_csp(desktop: Page) -> None:
    messages: list[str] = []
    desktop.on("console", lambda message: messages.append(_text(message)))
    response = desktop.goto("/docs")
    assert response is not None and response.status == 200
    assert "script-src 'self';" in response.headers["content-security-policy"]

    desktop.locator(".opblock").first.wait_for(timeout=15_000)
    schema = desktop.request.get("/openapi.json").json()
    operations = sum(len(methods) for methods in schema["paths"].values())
    assert desktop.locator(".opblock").count() == operations

    rules = desktop.locator(".opblock-get:has(.opblock-summary-path[data-path='/api/v1/rules'])")
    rules.locator(".opblock-summary-control").click()
    rules.locator(".responses-wrapper").wait_for()  # opened: its parameters and responses
    assert not [m for m in messages if "Content Security Policy" in m], messages


def test_redoc_is_off(desktop: Page) -> None:
    response = desktop.goto("/redoc")
    assert response is not None and response.status == 404


def _text(message: ConsoleMessage) -> str:
    return f"{message.type}: {message.text}"
