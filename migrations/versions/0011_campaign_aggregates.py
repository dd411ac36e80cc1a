"""issue 14: per-card and per-force aggregates kept at resolution

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 19:00:00.000000

Reserved so that work on several issues can land in any order; empty until that work needs
schema changes.
"""

from collections.abc import Sequence


revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
