"""What every request and response body shares: bounded text, ids, dice, and Input (a body with
an unknown field is refused)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]


Text = Annotated[str, StringConstraints(max_length=8000)]


Keyword = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]


# Ids fit a 32-bit column on every engine (PostgreSQL refuses larger ones with an error).
Id = Annotated[int, Field(ge=1, lt=2**31)]


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


Count = Annotated[int, Field(ge=0, le=99)]


Die = Annotated[int, Field(ge=1, le=6)]
