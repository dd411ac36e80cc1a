"""issue 20: the cards of one split unit are linked

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 20:40:00.000000

A split unit (a squadron, a unit with drones that splits in battle) has a Crusade card per
part; the parts share a label so a muster takes all of them or none.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('crusade_card', schema=None) as batch_op:
        batch_op.add_column(sa.Column('split_unit', sa.String(length=120), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('crusade_card', schema=None) as batch_op:
        batch_op.drop_column('split_unit')
