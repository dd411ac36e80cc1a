"""issue 12: confirm on one phone (PIN, QR) and the organizer's confirmation setting

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23 21:40:00.000000

Reserved so that work on two branches can land in order; empty until that work fills it.
"""

from collections.abc import Sequence


revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
