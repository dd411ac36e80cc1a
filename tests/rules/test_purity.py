"""app/rules is a pure library: it imports nothing from the web, the database or the app."""

from __future__ import annotations

import ast
from pathlib import Path

import app.rules

FORBIDDEN = ("fastapi", "starlette", "sqlmodel", "sqlalchemy", "alembic", "jinja2", "uvicorn")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_rules_import_only_the_standard_library_pydantic_yaml_and_themselves() -> None:
    package = Path(app.rules.__file__).parent
    offenders = {}
    for module in package.glob("*.py"):
        bad = {
            name
            for name in _imports(module)
            if name.split(".")[0] in FORBIDDEN
            or (name.startswith("app.") and not name.startswith("app.rules"))
        }
        if bad:
            offenders[module.name] = bad
    assert offenders == {}
