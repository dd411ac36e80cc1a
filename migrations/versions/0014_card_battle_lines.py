"""issue 14: kept per-card battle lines (reserved)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-23 21:40:00.000000

Each unit's line in a battle (its part of its side's report: kills, Out of Action test,
XP, promotions) is kept on its `card_battle` row when the result is recorded, so a Crusade
card's battle list no longer reads each side's whole report. Existing rows are filled here
from the reports, as `crusade totals rebuild` does. Decisions get an index on their unit,
which the card page asks about.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('card_battle', schema=None) as batch_op:
        batch_op.add_column(sa.Column('line', sa.JSON(), nullable=True))
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_decision_card_id'), ['card_id'], unique=False)
    from app.services.campaigns.kept_totals import fill_lines

    fill_lines(op.get_bind())


def downgrade() -> None:
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_decision_card_id'))
    with op.batch_alter_table('card_battle', schema=None) as batch_op:
        batch_op.drop_column('line')
