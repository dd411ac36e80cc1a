"""issue 50: a battle's own version, raised by every change to it, its sides, report or photos

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-30 14:00:00.000000

The API's battles list keeps each battle's body by it, so a result recorded in one battle
rebuilds that battle alone; existing battles start at 1 (nothing is kept across a restart).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0027'
down_revision: str | None = '0026'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Not a batch: a rebuilt battle table would break every row that refers to it.
    op.add_column(
        'battle', sa.Column('version', sa.Integer(), server_default='1', nullable=False)
    )


def downgrade() -> None:
    op.drop_column('battle', 'version')
