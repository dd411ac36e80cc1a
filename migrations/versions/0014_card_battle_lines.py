"""issue 14: kept per-card battle lines (reserved)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-23 21:40:00.000000

Reserved so that work on two branches can land in order; empty until that work fills it.
"""

from collections.abc import Sequence


revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
