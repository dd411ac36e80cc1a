"""issue 12: confirm on one phone (PIN, QR) and the organizer's confirmation setting

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23 21:40:00.000000

A player may set a short PIN (stored as an argon2 hash) to confirm a result on the
recorder's phone instead of typing their password. A campaign says whether the battles an
organizer plays in wait for the opponent's confirmation (the default) or apply at once.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('pin_hash', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True)
        )
    with op.batch_alter_table('campaign', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                'organizer_results_need_confirmation',
                sa.Boolean(),
                server_default='1',
                nullable=False,
            )
        )


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite 3.35+), not a batch copy: copying `campaign` would drop a
    # table that forces and battles still reference, which foreign keys refuse.
    op.drop_column('campaign', 'organizer_results_need_confirmation')
    op.drop_column('user_account', 'pin_hash')
