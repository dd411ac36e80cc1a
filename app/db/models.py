"""SQLModel tables. The campaign tables arrive with the campaign service; Alembic reads
this metadata to compare models with migrations."""

from __future__ import annotations

from sqlmodel import SQLModel

metadata = SQLModel.metadata
