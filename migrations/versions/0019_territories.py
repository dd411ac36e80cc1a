"""issue 23: the campaign map's territories, and the one a battle is fought over

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-25 21:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0019'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'territory',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=80), nullable=False),
        sa.Column('description', sa.String(length=2000), nullable=False),
        sa.Column('neighbours', sa.JSON(), nullable=False),
        sa.Column('bonus', sa.String(length=40), nullable=False),
        sa.Column('holder_force_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id']),
        sa.ForeignKeyConstraint(['holder_force_id'], ['force.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_territory_campaign_id', 'territory', ['campaign_id'])
    # Plain ADD COLUMN (no table copy: rows refer to battles); the service checks the id,
    # as it does the Warlord's card id.
    op.add_column('battle', sa.Column('territory_id', sa.Integer(), nullable=True))
    op.add_column('battle', sa.Column('territory_holder_before', sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column('battle', 'territory_holder_before')
    op.drop_column('battle', 'territory_id')
    op.drop_index('ix_territory_campaign_id', table_name='territory')
    op.drop_table('territory')
