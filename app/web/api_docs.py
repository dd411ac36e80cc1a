"""/docs: Swagger UI for the JSON API, served from this site's own files.

FastAPI's built-in page loads Swagger UI from a CDN and starts it with an inline script,
which our Content-Security-Policy (script-src 'self') blocks: the page stayed blank. Here
Swagger UI is the npm package swagger-ui-dist, copied into /static/vendor by `npm run
vendor`, and its start-up is /static/api-docs.js, so the site-wide CSP holds unchanged.
ReDoc is turned off (it would need the same, for a second view of the same schema)."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from app.web.pages import templates


def install_api_docs(app: FastAPI) -> None:
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def api_docs(request: Request) -> HTMLResponse:
        context = {"title": app.title, "openapi_url": openapi_url}
        return templates.TemplateResponse(request, "api_docs.html", context)
