"""issue 23: a battle's report (title, date and place played, narrative, unit notes)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25 21:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'battle_report',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('battle_id', sa.Integer(), nullable=False),
        sa.Column('title', sa.String(length=120), nullable=False),
        sa.Column('played_on', sa.Date(), nullable=True),
        sa.Column('location', sa.String(length=120), nullable=False),
        sa.Column('narrative', sa.String(length=20000), nullable=False),
        sa.Column('unit_notes', sa.JSON(), nullable=False),
        sa.Column('written_by', sa.String(length=80), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['battle_id'], ['battle.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('battle_id'),
    )


def downgrade() -> None:
    op.drop_table('battle_report')
