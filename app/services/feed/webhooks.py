"""Webhooks: organizers register URLs to be told of a campaign's events.

Each event recorded for a campaign writes one delivery row per matching webhook in the same
transaction (``enqueue``, called by ``history.record``): a rolled-back change sends nothing
and a committed one is never lost. ``app/services/feed/webhook_worker.py`` sends the rows.

A webhook belongs to the account that registered it (not to the token it used): it sends
only while that account may still organize the campaign (an organizer of it, or a site
admin). Once its owner is removed, nothing more is queued for it, what was queued is
marked failed unsent, and the webhook says ``suspended`` (issue 46)."""

from __future__ import annotations

import ipaddress
import secrets
import socket
from functools import cache
from urllib.parse import urlsplit

from sqlalchemy import ColumnElement, and_, bindparam, exists, insert, or_
from sqlmodel import Session, col, delete, select
from sqlmodel.sql.expression import SelectOfScalar

from app.config import get_settings
from app.db import locks
from app.db.models import Campaign, CampaignMember, User, Webhook, WebhookDelivery, insert_values
from app.errors import DomainError, NotFound

MAX_PER_CAMPAIGN = 10
# What history.record writes (the feed's kinds); a webhook may ask for any of them.
KINDS = (
    "campaign_created",
    "campaign_settings_changed",
    "force_created",
    "army_keywords_changed",
    "card_added",
    "card_removed",
    "card_transformed",
    "battle_mustered",
    "result_proposed",
    "result_confirmed",
    "result_disputed",
    "battle_recorded",
    "battle_reverted",
    "battle_called_off",
    "report_written",
    "report_edited",
    "photo_added",
    "territory_taken",
    "rule_pack_attached",
    "rule_pack_updated",
    "rule_pack_detached",
    "decision_pending",
    "decision_answered",
    "decision_cancelled",
    "rank_gained",
    "honour_gained",
    "scar_gained",
    "counter_changed",
    "threshold_reached",
    "quest_started",
    "quest_progressed",
    "quest_step_done",
    "quest_completed",
    "quest_failed",
    "quest_put_back",
    "requisition_purchased",
    "member_joined",
    "member_removed",
    "invite_created",
    "invite_withdrawn",
)


FORMATS = ("generic", "discord")


def register(
    session: Session,
    *,
    campaign_id: int,
    url: str,
    events: list[str],
    by: User | None,
    format: str | None = None,
) -> Webhook:
    """A new webhook with a fresh secret (shown to the organizer once, by the caller).
    ``format`` left out: Discord's for a Discord webhook URL, the generic feed item else."""
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
    # Registrations of one campaign take turns, so parallel ones cannot all count 9 and each
    # add a tenth (PostgreSQL let 15 through before; SQLite writers already take turns).
    locks.serialize(session, f"webhooks:{campaign_id}")
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
        format=format or ("discord" if is_discord(url) else "generic"),
    )
    session.add(webhook)
    session.flush()
    return webhook


def format_of(webhook: Webhook) -> str:
    """generic or discord: as registered, or by the URL for a webhook older than the choice."""
    return webhook.format or ("discord" if is_discord(webhook.url) else "generic")


def is_discord(url: str) -> bool:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    discord = host in ("discord.com", "discordapp.com") or host.endswith(".discord.com")
    return discord and parts.path.startswith("/api/webhooks/")


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
    campaigns = sorted({campaign_id for _id, campaign_id, _kind in events})
    hooks = session.exec(_active_hooks(), params={"campaigns": campaigns}).all()
    rows = [
        insert_values(WebhookDelivery, webhook_id=int(hook.id or 0), event_id=event_id)
        for hook in hooks
        for event_id, campaign_id, kind in events
        if hook.campaign_id == campaign_id and (not hook.events or kind in hook.events)
    ]
    if rows:
        session.execute(insert(WebhookDelivery), rows)


@cache
def _active_hooks() -> SelectOfScalar[Webhook]:
    """The active webhooks of the campaigns bound as ``campaigns``: built once, so the
    statement and its cache key are not made again on every write (0.2 ms each, issue 50)."""
    return select(Webhook).where(
        col(Webhook.campaign_id).in_(bindparam("campaigns", expanding=True)),
        _owner_may_organize(),
    )


def _owner_may_organize() -> ColumnElement[bool]:
    """SQL: the webhook's owner may still organize its campaign (or none is recorded)."""
    organizer = exists().where(
        and_(
            col(CampaignMember.campaign_id) == col(Webhook.campaign_id),
            col(CampaignMember.user_id) == col(Webhook.created_by),
            col(CampaignMember.role) == "organizer",
        )
    )
    admin = exists().where(
        and_(col(User.id) == col(Webhook.created_by), col(User.is_admin).is_(True))
    )
    return or_(col(Webhook.created_by).is_(None), organizer, admin)


def suspended_because(session: Session, webhook: Webhook) -> str | None:
    """Why the webhook sends nothing (its owner may no longer organize the campaign), or
    None while it is active."""
    if webhook.created_by is None:
        return None
    owner = session.get(User, webhook.created_by)
    if owner is not None and owner.is_admin:
        return None
    role = session.exec(
        select(CampaignMember.role).where(
            CampaignMember.campaign_id == webhook.campaign_id,
            CampaignMember.user_id == webhook.created_by,
        )
    ).first()
    if role == "organizer":
        return None
    who = owner.username if owner is not None else f"user {webhook.created_by}"
    return (
        f"{who}, who registered this webhook, no longer organizes the campaign: nothing is "
        "sent any more. An organizer can delete it and register it again."
    )


def get_campaign(session: Session, campaign_id: int) -> Campaign:
    # Not forces.get_campaign: history imports this module, and forces imports history.
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise NotFound("campaign_not_found", f"There is no campaign {campaign_id}.")
    return campaign


def check_url(url: str) -> str | None:
    """Refuse a URL that is not http(s), or whose host resolves to a private, loopback,
    link-local, multicast or otherwise internal address (a webhook must not reach into the
    server's own network) unless WEBHOOK_ALLOW_PRIVATE is set. Returns the address that was
    checked, for the sender to connect to (None when private addresses are allowed)."""
    host, port = _host_and_port(url)
    if get_settings().webhook_allow_private:
        return None
    addresses = resolve(host, port)
    for address in addresses:
        if not is_public(address):
            raise DomainError(
                "webhook_url_private",
                f"url: {host} is a private, loopback, link-local or multicast address "
                f"({address}); webhooks only go to public addresses.",
                status=422,
                field="url",
            )
    return str(addresses[0])


def _host_and_port(url: str) -> tuple[str, int]:
    """The URL's host and port, or a 422: a bracket left open, a port that is not a number
    or beyond 65535 made urllib raise, which used to surface as a 500."""
    try:
        parts = urlsplit(url)
        port = parts.port
        if "[" in parts.netloc:  # a bracketed host must be an IPv6 address (not IPvFuture)
            ipaddress.IPv6Address(parts.hostname or "")
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise DomainError(
            "webhook_url_invalid",
            "url: give an http:// or https:// address with a valid host and port (1-65535).",
            status=422,
            field="url",
        )
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


# IPv6 forms that carry an IPv4 address inside: NAT64 (64:ff9b::/96, RFC 6052) and
# IPv4-compatible (::/96). 6to4, Teredo and IPv4-mapped are unwrapped by ipaddress itself.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a webhook may connect to this address: global, not multicast, and, for IPv6
    forms that embed an IPv4 address, that embedded address public too."""
    if not address.is_global or address.is_multicast:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        embedded = [address.ipv4_mapped, address.sixtofour]
        if address.teredo:
            embedded.append(address.teredo[1])
        if address in _NAT64 or address in _IPV4_COMPATIBLE:
            embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        return all(is_public(v4) for v4 in embedded if v4 is not None)
    return True


def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise DomainError(
            "webhook_url_unresolvable", f"url: {host} does not resolve.", status=422, field="url"
        ) from None
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
