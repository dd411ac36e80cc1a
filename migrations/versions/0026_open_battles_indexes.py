"""issue 50: indexes for per-viewer reads that grew with a campaign's battles

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29 11:00:00.000000

Every page's "waiting for you" count looked for proposed and disputed battles among all of
a campaign's battles, and a force's last battle (the rematch, "same as last time", the
purchase window) sorted every battle the force had fought: battles by (status, campaign),
and a force's sides by (force, battle), which replaces the index on the force alone.
"""

from collections.abc import Sequence

from alembic import op


revision: str = '0026'
down_revision: str | None = '0025'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_battle_status_campaign', 'battle', ['status', 'campaign_id'])
    op.create_index('ix_battle_side_force_battle', 'battle_side', ['force_id', 'battle_id'])
    op.drop_index('ix_battle_side_force_id', table_name='battle_side')


def downgrade() -> None:
    op.create_index('ix_battle_side_force_id', 'battle_side', ['force_id'])
    op.drop_index('ix_battle_side_force_battle', table_name='battle_side')
    op.drop_index('ix_battle_status_campaign', table_name='battle')
