"""issue 22: rule packs a campaign plays with, counters on forces and cards, and the packs
a battle was recorded under

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-25 23:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0020'
down_revision: str | None = '0019'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'rule_pack',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('pack_id', sa.String(length=60), nullable=False),
        sa.Column('name', sa.String(length=80), nullable=False),
        sa.Column('pack_version', sa.String(length=20), nullable=False),
        sa.Column('document', sa.JSON(), nullable=False),
        sa.Column('active', sa.Boolean(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('attached_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('campaign_id', 'pack_id', 'pack_version'),
    )
    op.create_index('ix_rule_pack_campaign_id', 'rule_pack', ['campaign_id'])
    # Plain ADD COLUMN (rows refer to these tables); existing rows start empty.
    op.add_column('force', sa.Column('counters', sa.JSON(), nullable=False, server_default='{}'))
    op.add_column(
        'crusade_card', sa.Column('counters', sa.JSON(), nullable=False, server_default='{}')
    )
    op.add_column('battle', sa.Column('rule_packs', sa.JSON(), nullable=False, server_default='{}'))


def downgrade() -> None:
    op.drop_column('battle', 'rule_packs')
    op.drop_column('crusade_card', 'counters')
    op.drop_column('force', 'counters')
    op.drop_index('ix_rule_pack_campaign_id', table_name='rule_pack')
    op.drop_table('rule_pack')
