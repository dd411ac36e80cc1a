"""Webhooks: organizers register URLs to be told of a campaign's events.

Each event recorded for a campaign writes one delivery row per matching webhook in the same
transaction (``enqueue``, called by ``history.record``): a rolled-back change sends nothing
and a committed one is never lost. ``app/services/webhook_worker.py`` sends the rows."""

from __future__ import annotations

import ipaddress
import secrets
import socket
from urllib.parse import urlsplit

from sqlalchemy import insert
from sqlmodel import Session, col, delete, select

from app.config import get_settings
from app.db.models import Campaign, User, Webhook, WebhookDelivery
from app.errors import DomainError, NotFound

MAX_PER_CAMPAIGN = 10
# What history.record writes (the feed's kinds); a webhook may ask for any of them.
KINDS = (
    "campaign_created",
    "campaign_settings_changed",
    "force_created",
    "card_added",
    "card_removed",
    "battle_mustered",
    "result_proposed",
    "result_confirmed",
    "result_disputed",
    "battle_recorded",
    "battle_reverted",
    "battle_called_off",
    "decision_pending",
    "decision_answered",
    "rank_gained",
    "honour_gained",
    "scar_gained",
    "requisition_purchased",
    "member_joined",
    "member_removed",
    "invite_created",
    "invite_withdrawn",
)


def register(
    session: Session, *, campaign_id: int, url: str, events: list[str], by: User | None
) -> Webhook:
    """A new webhook with a fresh secret (shown to the organizer once, by the caller)."""
    get_campaign(session, campaign_id)
    check_url(url)
    for index, kind in enumerate(events):
        if kind not in KINDS:
            raise DomainError(
                "webhook_event_unknown",
                f"events: '{kind}' is not an event kind; choose from: {', '.join(KINDS)}.",
                status=422,
                field=f"events[{index}]",
            )
    if len(list_webhooks(session, campaign_id=campaign_id)) >= MAX_PER_CAMPAIGN:
        raise DomainError(
            "webhook_limit",
            f"A campaign has at most {MAX_PER_CAMPAIGN} webhooks; delete one first.",
            status=409,
        )
    webhook = Webhook(
        campaign_id=campaign_id,
        url=url,
        events=sorted(set(events)),
        secret=secrets.token_urlsafe(32),
        created_by=by.id if by else None,
    )
    session.add(webhook)
    session.flush()
    return webhook


def list_webhooks(session: Session, *, campaign_id: int) -> list[Webhook]:
    get_campaign(session, campaign_id)
    query = select(Webhook).where(Webhook.campaign_id == campaign_id).order_by(col(Webhook.id))
    return list(session.exec(query).all())


def get_webhook(session: Session, *, campaign_id: int, webhook_id: int) -> Webhook:
    webhook = session.get(Webhook, webhook_id)
    if webhook is None or webhook.campaign_id != campaign_id:
        raise NotFound("webhook_not_found", f"This campaign has no webhook {webhook_id}.")
    return webhook


def delete_webhook(session: Session, *, campaign_id: int, webhook_id: int) -> Webhook:
    """Remove the webhook; what was not yet sent is dropped with its delivery log."""
    webhook = get_webhook(session, campaign_id=campaign_id, webhook_id=webhook_id)
    session.execute(delete(WebhookDelivery).where(col(WebhookDelivery.webhook_id) == webhook_id))
    session.delete(webhook)
    session.flush()
    return webhook


def deliveries(
    session: Session, *, campaign_id: int, webhook_id: int, before: int | None, limit: int
) -> list[WebhookDelivery]:
    """The delivery log, newest first, paged by id (``before``: the last id seen)."""
    get_webhook(session, campaign_id=campaign_id, webhook_id=webhook_id)
    query = select(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook_id)
    if before is not None:
        query = query.where(col(WebhookDelivery.id) < before)
    return list(session.exec(query.order_by(col(WebhookDelivery.id).desc()).limit(limit)).all())


def resend(
    session: Session, *, campaign_id: int, webhook_id: int, delivery_id: int
) -> WebhookDelivery:
    """Send an event again: a new delivery (the old one stays in the log as it was)."""
    get_webhook(session, campaign_id=campaign_id, webhook_id=webhook_id)
    old = session.get(WebhookDelivery, delivery_id)
    if old is None or old.webhook_id != webhook_id:
        raise NotFound("delivery_not_found", f"This webhook has no delivery {delivery_id}.")
    again = WebhookDelivery(webhook_id=webhook_id, event_id=old.event_id)
    session.add(again)
    session.flush()
    return again


def enqueue(session: Session, events: list[tuple[int, int, str]]) -> None:
    """Outbox rows for the events just recorded (id, campaign, kind), one per webhook that
    wants their kind, in the caller's transaction: one indexed query for the campaigns'
    webhooks, and one INSERT for the deliveries."""
    campaigns = {campaign_id for _id, campaign_id, _kind in events}
    hooks = session.exec(select(Webhook).where(col(Webhook.campaign_id).in_(campaigns))).all()
    rows = [
        WebhookDelivery(webhook_id=int(hook.id or 0), event_id=event_id).model_dump(exclude={"id"})
        for hook in hooks
        for event_id, campaign_id, kind in events
        if hook.campaign_id == campaign_id and (not hook.events or kind in hook.events)
    ]
    if rows:
        session.execute(insert(WebhookDelivery), rows)


def get_campaign(session: Session, campaign_id: int) -> Campaign:
    # Not forces.get_campaign: history imports this module, and forces imports history.
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise NotFound("campaign_not_found", f"There is no campaign {campaign_id}.")
    return campaign


def check_url(url: str) -> None:
    """Refuse a URL that is not http(s), or whose host resolves to a private, loopback,
    link-local or otherwise internal address (a webhook must not reach into the server's
    own network) unless WEBHOOK_ALLOW_PRIVATE is set."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DomainError(
            "webhook_url_invalid",
            "url: give an http:// or https:// address.",
            status=422,
            field="url",
        )
    if get_settings().webhook_allow_private:
        return
    for address in resolve(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)):
        if not address.is_global:
            raise DomainError(
                "webhook_url_private",
                f"url: {parts.hostname} is a private, loopback or link-local address "
                f"({address}); webhooks only go to public addresses.",
                status=422,
                field="url",
            )


def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise DomainError(
            "webhook_url_unresolvable", f"url: {host} does not resolve.", status=422, field="url"
        ) from None
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
