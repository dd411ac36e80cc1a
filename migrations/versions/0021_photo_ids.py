"""issue 33: a photo's id is never used again, on SQLite too

A photo's files are served as immutable for a year, so a browser keeps a deleted photo under
its address; a new photo must never take that address. PostgreSQL's sequences never go back;
SQLite reuses the largest rowid once that row is deleted, unless the table is AUTOINCREMENT.
The table is rebuilt so, its counter starting past every photo id the history names (the
largest of them may have been deleted already).

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26 20:00:00.000000
"""

from collections.abc import Sequence

from alembic import op


revision: str = '0021'
down_revision: str | None = '0020'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    with op.batch_alter_table(
        'battle_photo', recreate='always', table_kwargs={'sqlite_autoincrement': True}
    ):
        pass
    op.execute("DELETE FROM sqlite_sequence WHERE name = 'battle_photo'")
    op.execute(
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'battle_photo', max("
        "coalesce((SELECT max(id) FROM battle_photo), 0), "
        "coalesce((SELECT max(CAST(json_extract(payload, '$.photo_id') AS INTEGER)) "
        "FROM event WHERE kind = 'photo_added'), 0))"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    with op.batch_alter_table(
        'battle_photo', recreate='always', table_kwargs={'sqlite_autoincrement': False}
    ):
        pass
