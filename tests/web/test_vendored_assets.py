"""The front-end files the site serves are the npm packages package.json pins, copied by
`npm run vendor`: a hand edit or a forgotten re-copy after a version bump fails here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = json.loads((ROOT / "package.json").read_text())
PINNED = {**PACKAGES["dependencies"], **PACKAGES["devDependencies"]}
LOCKED = json.loads((ROOT / "package-lock.json").read_text())["packages"]

VENDORED = {
    "@picocss/pico": (ROOT / "app/web/static/vendor/pico.min.css", "Pico CSS ✨ v{v} "),
    "axe-core": (ROOT / "tests/browser/vendor/axe.min.js", "axe v{v}\n"),
    "swagger-ui-dist": (
        ROOT / "app/web/static/vendor/swagger-ui-bundle.js",
        'PACKAGE_VERSION:"{v}"',
    ),
}
# swagger-ui.css names no version: its SHA-256 as published in each pinned version.
SWAGGER_CSS_SHA256 = {"5.35.0": "5ed08757e53da3e026d6cbecc61fe5d43585c9560b302d534ad56692519a273d"}


def test_every_package_is_pinned_exactly_and_locked() -> None:
    for name, version in PINNED.items():
        assert version[0].isdigit(), f"{name} is not pinned to one version: {version}"
        assert LOCKED[f"node_modules/{name}"]["version"] == version


def test_vendored_files_are_the_pinned_versions() -> None:
    assert set(VENDORED) == set(PINNED)
    for name, (path, marker) in VENDORED.items():
        text = path.read_text(encoding="utf-8")
        assert marker.format(v=PINNED[name]) in text, f"{path.name} is not {name} {PINNED[name]}"
    css = (ROOT / "app/web/static/vendor/swagger-ui.css").read_bytes()
    version = PINNED["swagger-ui-dist"]
    assert hashlib.sha256(css).hexdigest() == SWAGGER_CSS_SHA256.get(version), (
        f"swagger-ui.css is not swagger-ui-dist {version} (a new pin: add its hash here)"
    )


def test_the_site_serves_them_without_a_cdn(site: TestClient) -> None:
    page = site.get("/login").text
    assert "/static/vendor/pico.min.css" in page and "/static/app.js" in page
    assert "http://" not in page.split("<body")[0] and "https://" not in page.split("<body")[0]
    assert site.get("/static/vendor/pico.min.css").status_code == 200
    assert "htmx" not in page  # not used by any page, so not loaded (issue 12)


def test_the_api_docs_use_them_and_no_inline_script(site: TestClient) -> None:
    """/docs was blank: FastAPI's page loads Swagger UI from a CDN and starts it inline."""
    page = site.get("/docs")
    assert (
        page.status_code == 200 and "script-src 'self';" in page.headers["content-security-policy"]
    )
    assert "/static/vendor/swagger-ui-bundle.js" in page.text and "/static/api-docs.js" in page.text
    assert "http://" not in page.text and "https://" not in page.text
    assert "<script>" not in page.text and "<script src=" in page.text
    for asset in ("vendor/swagger-ui-bundle.js", "vendor/swagger-ui.css", "api-docs.js"):
        assert site.get(f"/static/{asset}").status_code == 200, asset
    assert site.get("/redoc").status_code == 404


def test_the_site_can_be_added_to_a_phone_home_screen(site: TestClient) -> None:
    home = site.get("/").text
    assert '<link rel="manifest" href="/static/manifest.json">' in home
    served = site.get("/static/manifest.json")
    assert served.status_code == 200 and served.headers["content-type"] == "application/json"
    manifest = served.json()
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert f'<meta name="theme-color" content="{manifest["theme_color"]}">' in home
    for icon in manifest["icons"]:
        assert site.get(icon["src"]).status_code == 200, icon["src"]
