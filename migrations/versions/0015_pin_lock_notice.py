"""issue 19: the PIN's owner hears of a lockout

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24 19:35:00.000000

When wrong PINs lock an account's PIN, the time (and the battle it was tried on) is kept on
the account, so its owner sees a notice the next time they open the site, until they change
the PIN or dismiss it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.add_column(sa.Column('pin_locked_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('pin_locked_battle_id', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.drop_column('pin_locked_battle_id')
        batch_op.drop_column('pin_locked_at')
