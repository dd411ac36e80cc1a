"""issue 14: per-card and per-force aggregates kept at resolution

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 19:00:00.000000

Standings lines, each side's totals before its battle and each card's battles, kept when a
battle is recorded or reverted (app/services/campaigns/kept_totals.py). On a database that already holds
campaigns they are computed here from the cards and battles, exactly as
`crusade totals rebuild` does.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('force_standing',
    sa.Column('force_id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('crusade_points', sa.Integer(), nullable=False),
    sa.Column('supply_used', sa.Integer(), nullable=False),
    sa.Column('units', sa.Integer(), nullable=False),
    sa.Column('xp', sa.Integer(), nullable=False),
    sa.Column('wins', sa.Integer(), nullable=False),
    sa.Column('draws', sa.Integer(), nullable=False),
    sa.Column('losses', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id'], name='fk_force_standing_campaign_id'),
    sa.ForeignKeyConstraint(['force_id'], ['force.id'], name='fk_force_standing_force_id'),
    sa.PrimaryKeyConstraint('force_id')
    )
    with op.batch_alter_table('force_standing', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_force_standing_campaign_id'), ['campaign_id'], unique=False)
    op.create_table('side_totals',
    sa.Column('battle_id', sa.Integer(), nullable=False),
    sa.Column('force_id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('crusade_points', sa.Integer(), nullable=False),
    sa.Column('xp', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['battle_id'], ['battle.id'], name='fk_side_totals_battle_id'),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id'], name='fk_side_totals_campaign_id'),
    sa.ForeignKeyConstraint(['force_id'], ['force.id'], name='fk_side_totals_force_id'),
    sa.PrimaryKeyConstraint('battle_id', 'force_id')
    )
    with op.batch_alter_table('side_totals', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_side_totals_campaign_id'), ['campaign_id'], unique=False)
    op.create_table('card_battle',
    sa.Column('card_id', sa.Integer(), nullable=False),
    sa.Column('battle_id', sa.Integer(), nullable=False),
    sa.Column('force_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['battle_id'], ['battle.id'], name='fk_card_battle_battle_id'),
    sa.ForeignKeyConstraint(['card_id'], ['crusade_card.id'], name='fk_card_battle_card_id'),
    sa.ForeignKeyConstraint(['force_id'], ['force.id'], name='fk_card_battle_force_id'),
    sa.PrimaryKeyConstraint('card_id', 'battle_id')
    )
    with op.batch_alter_table('card_battle', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_card_battle_battle_id'), ['battle_id'], unique=False)
    # Existing campaigns: computed once from their cards and battles (plain SQL over named
    # columns, so later migrations that add columns do not change what this reads).
    from app.services.campaigns.kept_totals import rebuild

    rebuild(op.get_bind())


def downgrade() -> None:
    with op.batch_alter_table('card_battle', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_card_battle_battle_id'))
    op.drop_table('card_battle')
    with op.batch_alter_table('side_totals', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_side_totals_campaign_id'))
    op.drop_table('side_totals')
    with op.batch_alter_table('force_standing', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_force_standing_campaign_id'))
    op.drop_table('force_standing')
