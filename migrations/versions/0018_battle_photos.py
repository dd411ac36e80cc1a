"""issue 23: a battle's photos

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25 21:35:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'battle_photo',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('battle_id', sa.Integer(), nullable=False),
        sa.Column('width', sa.Integer(), nullable=False),
        sa.Column('height', sa.Integer(), nullable=False),
        sa.Column('widths', sa.JSON(), nullable=False),
        sa.Column('caption', sa.String(length=200), nullable=False),
        sa.Column('uploaded_by', sa.String(length=80), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['battle_id'], ['battle.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_battle_photo_battle_id', 'battle_photo', ['battle_id'])


def downgrade() -> None:
    op.drop_index('ix_battle_photo_battle_id', table_name='battle_photo')
    op.drop_table('battle_photo')
