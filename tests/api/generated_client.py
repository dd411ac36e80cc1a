"""A Python client generated from the app's OpenAPI schema by openapi-python-client, as a
bot author makes one (issue 46): generated once per test session (each xdist worker) into a
temporary folder, its post-hooks (ruff) left out, and imported as ``crusade_client``."""

from __future__ import annotations

import hashlib
import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

PACKAGE = "crusade_client"
# No post-hooks: the generated code is only imported, never read or linted.
CONFIG = f"post_hooks: []\nproject_name_override: {PACKAGE}\npackage_name_override: {PACKAGE}\n"


class Generator:
    """Generates the client for a schema once, and imports it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made: dict[str, ModuleType] = {}

    def __call__(self, schema: dict[str, Any]) -> ModuleType:
        text = json.dumps(schema, sort_keys=True)
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in self.made:
            assert not self.made, "one schema per test session"
            self.made[key] = self._generate(text, self.folder / key)
        return self.made[key]

    def _generate(self, schema: str, where: Path) -> ModuleType:
        where.mkdir(parents=True)
        (where / "openapi.json").write_text(schema)
        (where / "config.yaml").write_text(CONFIG)
        tool = Path(sys.executable).with_name("openapi-python-client")
        generated = subprocess.run(
            [
                str(tool),
                "generate",
                "--path",
                str(where / "openapi.json"),
                "--config",
                str(where / "config.yaml"),
                "--meta",
                "none",
                "--output-path",
                str(where / PACKAGE),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert generated.returncode == 0, generated.stdout + generated.stderr
        sys.path.insert(0, str(where))
        return importlib.import_module(PACKAGE)
