"""issue 47: a force's army keywords (the faction keywords a rule pack's scope reads)

Revision ID: 0024_army_keywords
Revises: 0023
Create Date: 2026-11-28 20:10:00.000000

Forces that exist start with none beyond their Crusade faction (docs/rule-packs.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0024_army_keywords'
down_revision: str | None = '0023'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        'force', sa.Column('army_keywords', sa.JSON(), nullable=False, server_default='[]')
    )


def downgrade() -> None:
    # Not a batch: a rebuilt force table would break every row that refers to it (SQLite
    # drops a plain column itself).
    op.drop_column('force', 'army_keywords')
