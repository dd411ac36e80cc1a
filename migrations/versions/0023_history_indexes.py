"""issue 41: indexes for reads that grew with a campaign's history on PostgreSQL

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-26 22:00:00.000000

`bench/plans.py` on the 50-force league at 1,922 battles showed the dashboard's two history
reads sorting every event of the campaign (28 ms and 13 ms) and every page's "waiting for
you" count reading every decision (8 ms): a campaign's events by (campaign, id), and
decisions by (status, force).
"""

from collections.abc import Sequence

from alembic import op


revision: str = '0023'
down_revision: str | None = '0022'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_event_campaign_newest', 'event', ['campaign_id', 'id'])
    op.create_index('ix_decision_status_force', 'decision', ['status', 'force_id'])


def downgrade() -> None:
    op.drop_index('ix_decision_status_force', table_name='decision')
    op.drop_index('ix_event_campaign_newest', table_name='event')
