"""The import rules of docs/architecture.md, held by reading every module under app/ with
``ast`` (imports inside functions count too): a change that breaks one fails here with the
importing line and the rule it breaks."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"
MOST_MODULES_IN_A_FOLDER = 16  # app/rules excepted: the rulebook's library, pure and flat


@dataclass(frozen=True)
class Rule:
    """Modules under ``source`` (but those under ``exempt``) may not import anything under
    one of ``forbidden``, except what is under one of ``allowed``."""

    source: str
    forbidden: tuple[str, ...]
    why: str
    allowed: tuple[str, ...] = ()
    exempt: tuple[str, ...] = ()


RULES = (
    Rule(
        "app.web", ("app.api",), "the website never imports the JSON API: shared code is app.edge"
    ),
    Rule(
        "app.api", ("app.web",), "the JSON API never imports the website: shared code is app.edge"
    ),
    Rule(
        "app.rules",
        ("app",),
        "the rules library is pure: it imports nothing else of the app",
        allowed=("app.rules",),
    ),
    Rule(
        "app.db",
        ("app",),
        "the database layer imports only the rules, the settings and the errors",
        allowed=("app.db", "app.rules", "app.config", "app.errors"),
    ),
    Rule(
        "app.services",
        ("app.api", "app.web", "app.edge", "app.main", "app.cli", "app.routing"),
        "services never import a face (api, web) or the edge: they take plain values",
    ),
    Rule(
        "app.edge",
        ("app.api", "app.web", "app.main", "app.cli"),
        "the edge is shared by both faces, so it imports neither",
    ),
    Rule("app", ("app.main",), "only the CLI assembles the app", exempt=("app.cli", "app.main")),
    Rule("app", ("app.cli",), "nothing imports the command line", exempt=("app.cli",)),
)


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    path: str  # its file, from the project root
    line: int
    target: str  # what it imports, dotted (a name imported from a package counts as its module)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(root: Path) -> Iterator[Import]:
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        where = str(path.relative_to(root.parent))
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(name, where, node.lineno, alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                for alias in node.names:  # `from app.services import forces`: the module
                    yield Import(name, where, node.lineno, f"{target}.{alias.name}")


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def broken_rules(root: Path) -> list[str]:
    found = []
    for imp in imports(root):
        for rule in RULES:
            if not under(imp.module, rule.source) or any(under(imp.module, e) for e in rule.exempt):
                continue
            if any(under(imp.target, a) for a in rule.allowed):
                continue
            if any(under(imp.target, f) for f in rule.forbidden):
                found.append(f"{imp.path}:{imp.line} imports {imp.target}: {rule.why}")
    return found


def crowded_folders(root: Path) -> list[str]:
    found = []
    for folder in sorted({p.parent for p in root.rglob("*.py")}):
        if under(module_name(folder / "__init__.py", root), "app.rules"):
            continue
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > MOST_MODULES_IN_A_FOLDER:
            found.append(
                f"{folder.relative_to(root.parent)}/ holds {len(modules)} modules (at most "
                f"{MOST_MODULES_IN_A_FOLDER}): group them in packages by what they serve"
            )
    return found


def test_every_import_follows_the_rules() -> None:
    broken = broken_rules(APP)
    assert not broken, "Imports against docs/architecture.md:\n" + "\n".join(broken)


def test_no_folder_outgrows_a_glance() -> None:
    crowded = crowded_folders(APP)
    assert not crowded, "\n".join(crowded)


def test_the_faces_share_only_the_edge() -> None:
    """Counted, not only checked: the website and the API import each other nowhere."""
    crossing = [
        i
        for i in imports(APP)
        if (under(i.module, "app.web") and under(i.target, "app.api"))
        or (under(i.module, "app.api") and under(i.target, "app.web"))
    ]
    assert crossing == []


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        (
            "web/pages.py",
            "from app.api.auth import COOKIE\n",
            "app/web/pages.py:1 imports app.api.auth.COOKIE: the website never imports the JSON",
        ),
        (
            "api/battles.py",
            "from app.web import pages\n",
            "app/api/battles.py:1 imports app.web.pages: the JSON API never imports the website",
        ),
        (
            "rules/dice.py",
            "def roll():\n    from app.db.models import Card\n",
            "app/rules/dice.py:2 imports app.db.models.Card: the rules library is pure",
        ),
        (
            "db/models.py",
            "from app.services.forces import forces\n",
            "app/db/models.py:1 imports app.services.forces.forces: the database layer imports",
        ),
        (
            "services/feed/worker.py",
            "from ...api import reports\n",
            "app/services/feed/worker.py:1 imports app.api.reports: services never import a face",
        ),
        (
            "edge/present.py",
            "import app.web.pages\n",
            "app/edge/present.py:1 imports app.web.pages: the edge is shared by both faces",
        ),
    ],
)
def test_a_broken_rule_is_named_with_its_line(
    tmp_path: Path, module: str, line: str, expected: str
) -> None:
    root = tmp_path / "app"
    (root / module).parent.mkdir(parents=True)
    (root / module).write_text(line)
    assert [b for b in broken_rules(root) if b.startswith(expected)] != []


def test_allowed_imports_pass(tmp_path: Path) -> None:
    root = tmp_path / "app"
    files = {
        "db/models.py": "from app.rules.data import rulebook\nfrom app.config import settings\n",
        "web/pages.py": "from app.edge.sessions import COOKIE\nfrom app.services import forces\n",
        "cli.py": "from app.main import create_app\n",
        "rules/cards.py": "from app.rules import data\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert broken_rules(root) == []


def test_a_crowded_folder_is_named(tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / "services").mkdir(parents=True)
    (root / "rules").mkdir()
    for n in range(MOST_MODULES_IN_A_FOLDER + 1):
        (root / "services" / f"m{n}.py").write_text("")
        (root / "rules" / f"m{n}.py").write_text("")
    assert crowded_folders(root) == [
        f"app/services/ holds {MOST_MODULES_IN_A_FOLDER + 1} modules (at most "
        f"{MOST_MODULES_IN_A_FOLDER}): group them in packages by what they serve"
    ]
