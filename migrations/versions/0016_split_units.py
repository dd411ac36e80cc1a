"""issue 20: the cards of one split unit are linked; issue 25: a card's points

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 20:40:00.000000

A split unit (a squadron, a unit with drones that splits in battle) has a Crusade card per
part; the parts share a label so a muster takes all of them or none. A card imported from a
roster keeps the points the roster gives it, shown beside its Power Rating.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ADD/DROP COLUMN (SQLite has both): a batch operation would copy crusade_card into
# a new table and drop the old one, which the rows that refer to the cards forbid.


def upgrade() -> None:
    op.add_column('crusade_card', sa.Column('split_unit', sa.String(length=120), nullable=True))
    op.add_column('crusade_card', sa.Column('points', sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column('crusade_card', 'points')
    op.drop_column('crusade_card', 'split_unit')
