"""server-side sessions; idempotency claims that expire

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 16:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('user_session',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('secret_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('expires_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name='fk_user_session_user_id'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('user_session', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_user_session_secret_hash'), ['secret_hash'], unique=True)
        batch_op.create_index(batch_op.f('ix_user_session_user_id'), ['user_id'], unique=False)
    with op.batch_alter_table('idempotency_record', schema=None) as batch_op:
        batch_op.add_column(sa.Column('claim', sqlmodel.sql.sqltypes.AutoString(length=32), server_default='', nullable=False))
        batch_op.create_index(batch_op.f('ix_idempotency_record_created_at'), ['created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('idempotency_record', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_idempotency_record_created_at'))
        batch_op.drop_column('claim')
    with op.batch_alter_table('user_session', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_user_session_user_id'))
        batch_op.drop_index(batch_op.f('ix_user_session_secret_hash'))
    op.drop_table('user_session')
