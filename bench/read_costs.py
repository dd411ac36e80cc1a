"""CPU time a read costs, in process (TestClient), on the demo campaign, with and without
If-None-Match (issue 50). Process time, not wall time: a figure a busy machine moves less
than bench/ratios.py's throughput. Includes the TestClient's own cost (the /health line).

    .venv/bin/python bench/read_costs.py [requests per read, default 200]

Run it against an older checkout with PYTHONPATH=<checkout> to compare before and after."""

from __future__ import annotations

import os
import sys
import tempfile
import time

folder = tempfile.mkdtemp()
os.environ["DATABASE_URL"] = f"sqlite:///{folder}/c.db"
os.environ["PHOTO_DIR"] = f"{folder}/photos"
os.environ.setdefault("SECRET_KEY", "x" * 40)
os.environ["LOG_LEVEL"] = "warning"

from fastapi.testclient import TestClient  # noqa: E402

from app.config import get_settings  # noqa: E402
from app.db import migrate  # noqa: E402
from app.db.session import session_scope  # noqa: E402
from app.main import create_app  # noqa: E402
from app.services.campaigns import demo  # noqa: E402
from app.services.campaigns.kept_totals import install_kept_totals  # noqa: E402

migrate.upgrade(get_settings().effective_database_url)
install_kept_totals()
with session_scope() as s:
    cid = demo.load_demo(s).id
client = TestClient(create_app())
card = client.get("/api/v1/forces/1").json()["cards"][0]["id"]
reads = {
    "/health": "/health",
    "Order of Battle JSON": "/api/v1/forces/1",
    "standings JSON": f"/api/v1/campaigns/{cid}/standings",
    "battles list JSON": f"/api/v1/campaigns/{cid}/battles",
    "Crusade card JSON": f"/api/v1/cards/{card}",
    "dashboard page": f"/campaigns/{cid}",
    "card page": f"/cards/{card}",
    "battles list page": f"/campaigns/{cid}/battles",
}
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
for name, path in reads.items():
    for _ in range(20):
        r = client.get(path)
        assert r.status_code == 200, (path, r.status_code)
    start = time.process_time()
    for _ in range(n):
        client.get(path)
    cpu = (time.process_time() - start) / n * 1000
    etag = r.headers.get("etag")
    line = f"{name:24} {cpu:6.2f} ms CPU"
    if etag:
        start = time.process_time()
        for _ in range(n):
            assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
        line += f"   304: {(time.process_time() - start) / n * 1000:6.2f} ms"
    print(line, flush=True)
