"""issue 12: versioned battle drafts and table-side confirmation

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 19:00:00.000000

A battle draft carries a version, raised by every save: a page sent from an older version
(another tab, the other player) is refused with a conflict instead of overwriting.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('battle_draft', schema=None) as batch_op:
        batch_op.add_column(sa.Column('version', sa.Integer(), server_default='1', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('battle_draft', schema=None) as batch_op:
        batch_op.drop_column('version')
