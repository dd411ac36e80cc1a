"""issue 34: a webhook says its format (generic or discord); each target's queue is indexed

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27 10:00:00.000000

A registration may choose Discord's message format or the generic feed item, whatever the
host; a webhook registered before keeps today's choice (NULL: Discord's format when the URL is
a Discord webhook's, the feed item otherwise).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0022'
down_revision: str | None = '0021'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('webhook', schema=None) as batch_op:
        batch_op.add_column(sa.Column('format', sa.String(length=20), nullable=True))
    # The worker reads each target's queue head (its first pending delivery) every round.
    op.create_index(
        'ix_webhook_delivery_queue', 'webhook_delivery', ['webhook_id', 'status', 'id']
    )


def downgrade() -> None:
    op.drop_index('ix_webhook_delivery_queue', table_name='webhook_delivery')
    with op.batch_alter_table('webhook', schema=None) as batch_op:
        batch_op.drop_column('format')
