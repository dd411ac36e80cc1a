"""battle drafts

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('battle_draft',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('battle_id', sa.Integer(), nullable=True),
    sa.Column('step', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('updated_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id'], name='fk_battle_draft_campaign_id'),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name='fk_battle_draft_user_id'),
    sa.ForeignKeyConstraint(['battle_id'], ['battle.id'], name='fk_battle_draft_battle_id'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('battle_draft', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_battle_draft_campaign_id'), ['campaign_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_battle_draft_user_id'), ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('battle_draft', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_battle_draft_user_id'))
        batch_op.drop_index(batch_op.f('ix_battle_draft_campaign_id'))

    op.drop_table('battle_draft')
