"""issue 15: event feed, webhooks and their outbox

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 19:00:00.000000

The feed reads the existing event table; campaign_visit keeps the newest event each member
has seen on a campaign's page ("since your last visit"). Webhooks are registered per campaign; each event
recorded for a campaign with webhooks writes one webhook_delivery row per webhook in the
same transaction (the outbox), which the worker sends and keeps as the delivery log.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('webhook',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('url', sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
    sa.Column('events', sa.JSON(), nullable=False),
    sa.Column('secret', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id'], name='fk_webhook_campaign_id'),
    sa.ForeignKeyConstraint(['created_by'], ['user_account.id'], name='fk_webhook_created_by'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_webhook_campaign_id'), 'webhook', ['campaign_id'], unique=False)
    op.create_table('webhook_delivery',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('webhook_id', sa.Integer(), nullable=False),
    sa.Column('event_id', sa.Integer(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('claimed_until', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    sa.Column('last_status_code', sa.Integer(), nullable=True),
    sa.Column('last_error', sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('delivered_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    sa.ForeignKeyConstraint(['event_id'], ['event.id'], name='fk_webhook_delivery_event_id'),
    sa.ForeignKeyConstraint(['webhook_id'], ['webhook.id'], name='fk_webhook_delivery_webhook_id'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_webhook_delivery_next_attempt_at'), 'webhook_delivery', ['next_attempt_at'], unique=False)
    op.create_index(op.f('ix_webhook_delivery_status'), 'webhook_delivery', ['status'], unique=False)
    op.create_index(op.f('ix_webhook_delivery_webhook_id'), 'webhook_delivery', ['webhook_id'], unique=False)
    op.create_table('campaign_visit',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('last_event_id', sa.Integer(), nullable=False),
    sa.Column('seen_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id'], name='fk_campaign_visit_campaign_id'),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name='fk_campaign_visit_user_id'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('user_id', 'campaign_id', name='uq_campaign_visit')
    )
    op.create_index(op.f('ix_campaign_visit_user_id'), 'campaign_visit', ['user_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_campaign_visit_user_id'), table_name='campaign_visit')
    op.drop_table('campaign_visit')
    op.drop_index(op.f('ix_webhook_delivery_webhook_id'), table_name='webhook_delivery')
    op.drop_index(op.f('ix_webhook_delivery_status'), table_name='webhook_delivery')
    op.drop_index(op.f('ix_webhook_delivery_next_attempt_at'), table_name='webhook_delivery')
    op.drop_table('webhook_delivery')
    op.drop_index(op.f('ix_webhook_campaign_id'), table_name='webhook')
    op.drop_table('webhook')
