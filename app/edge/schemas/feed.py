"""Bodies of a campaign's history, its feed pages and webhooks (the feed's item is
app/services/feed/feed_items.py: the webhook worker sends it too)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from app.edge.schemas.common import Id, Input
from app.services.feed.feed_items import EventDetails, FeedEventPublic


class EventPublic(BaseModel):
    id: int
    kind: str
    force_id: Id | None
    battle_id: int | None
    payload: EventDetails
    created_at: datetime


class FeedPage(BaseModel):
    items: list[FeedEventPublic]
    next: str = Field(description="The cursor to send as `after` for the following page")
    more: bool = Field(description="True when more events are already waiting")


class WebhookCreate(Input):
    url: Annotated[str, StringConstraints(strip_whitespace=True, min_length=8, max_length=2000)]
    events: list[Annotated[str, StringConstraints(max_length=60)]] = Field(
        default_factory=list,
        max_length=40,
        description="Event kinds to send (see the feed); leave out or empty for all",
    )
    format: Literal["generic", "discord"] | None = Field(
        default=None,
        description="generic: each event as the feed's item; discord: Discord's message. "
        "Left out: discord for a Discord webhook URL, generic otherwise",
    )


class WebhookPublic(BaseModel):
    id: int
    campaign_id: int
    url: str
    events: list[str]
    format: Literal["generic", "discord"] = Field(description="The body's format")
    discord: bool = Field(description="True: deliveries use Discord's message format")
    created_at: datetime
    status: Literal["active", "suspended"] = Field(
        default="active",
        description="suspended: the account that registered it no longer organizes the "
        "campaign, so nothing is sent (queued deliveries are marked failed)",
    )
    status_reason: str | None = Field(
        default=None, description="Why it is suspended, in a sentence; null while active"
    )


class WebhookCreated(WebhookPublic):
    secret: str = Field(
        description="Shown this once: verify X-Crusade-Signature (sha256=HMAC-SHA256 of the "
        "body with this secret, hex)"
    )


class DeliveryPublic(BaseModel):
    id: int
    webhook_id: int
    event_id: int
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    next_attempt_at: datetime
    last_status_code: int | None
    last_error: str
    created_at: datetime
    delivered_at: datetime | None
