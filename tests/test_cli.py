"""app/cli.py: the app as `crusade serve` runs it in each server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.cli import FULL_COLLECTION_EVERY, YOUNG_COLLECTION_AFTER


def test_a_served_process_hides_its_start_up_and_collects_rarely(tmp_path: Path) -> None:
    """In a process of its own: freezing and the collector's thresholds are the process's."""
    probe = (
        "import gc, json; from app.cli import served_app; served_app(); "
        "print(json.dumps([gc.get_freeze_count(), gc.get_threshold()]))"
    )
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'c.db'}", "LOG_LEVEL": "warning"}
    shown = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    frozen, thresholds = json.loads(shown.stdout.strip().splitlines()[-1])
    assert frozen > 50_000  # the rule tables, routes and templates made at start-up
    assert thresholds[0] == YOUNG_COLLECTION_AFTER == 20_000
    assert thresholds[2] == FULL_COLLECTION_EVERY == 100
