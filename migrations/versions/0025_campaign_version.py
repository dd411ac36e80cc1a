"""issue 50: a campaign's version, raised by every change to what its reads show

Revision ID: 0025
Revises: 0024_army_keywords
Create Date: 2026-11-28 19:50:00.000000

The read caches (app/api/plumbing/cache.py) key a campaign's bodies by it; existing
campaigns start at 0 (nothing is cached across a restart).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0025'
down_revision: str | None = '0024_army_keywords'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Not a batch: a rebuilt campaign table would break every row that refers to it.
    op.add_column(
        'campaign', sa.Column('version', sa.Integer(), server_default='0', nullable=False)
    )


def downgrade() -> None:
    op.drop_column('campaign', 'version')
