"""Webhooks of a campaign (organizers): register, list, delete; the delivery log; resend."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response, status
from sqlmodel import Session

from app.api.plumbing.paging import Cursor, KeysetPage, Limit, page_of
from app.api.plumbing.responses import located
from app.db.models import Webhook, WebhookDelivery
from app.db.session import SessionDep
from app.edge.schemas.feed import DeliveryPublic, WebhookCreate, WebhookCreated, WebhookPublic
from app.edge.sessions import CurrentPrincipal
from app.routing import OneHopRoute
from app.services.feed import webhooks

router = APIRouter(tags=["webhooks"], route_class=OneHopRoute)
RowId = Annotated[int, Path(ge=1, lt=2**31)]


def _webhook(session: Session, row: Webhook) -> WebhookPublic:
    assert row.id is not None
    suspended = webhooks.suspended_because(session, row)
    return WebhookPublic(
        id=row.id,
        campaign_id=row.campaign_id,
        url=row.url,
        events=list(row.events),
        format=webhooks.format_of(row),
        discord=webhooks.format_of(row) == "discord",
        created_at=row.created_at,
        status="active" if suspended is None else "suspended",
        status_reason=suspended,
    )


def _delivery(row: WebhookDelivery) -> DeliveryPublic:
    return DeliveryPublic.model_validate(row, from_attributes=True)


@router.post(
    "/campaigns/{campaign_id}/webhooks",
    status_code=status.HTTP_201_CREATED,
    summary="Register a URL to be sent the campaign's events (the secret is shown once)",
)
def register(
    campaign_id: int,
    body: WebhookCreate,
    principal: CurrentPrincipal,
    session: SessionDep,
    response: Response,
) -> WebhookCreated:
    row = webhooks.register(
        session,
        campaign_id=campaign_id,
        url=body.url,
        events=body.events,
        by=principal.user,
        format=body.format,
    )
    located(response, f"/campaigns/{campaign_id}/webhooks/{row.id}")
    return WebhookCreated(**_webhook(session, row).model_dump(), secret=row.secret)


@router.get("/campaigns/{campaign_id}/webhooks", summary="The campaign's webhooks")
def list_webhooks(campaign_id: int, session: SessionDep) -> list[WebhookPublic]:
    return [_webhook(session, w) for w in webhooks.list_webhooks(session, campaign_id=campaign_id)]


@router.get("/campaigns/{campaign_id}/webhooks/{webhook_id}", summary="One webhook")
def get_webhook(campaign_id: int, webhook_id: RowId, session: SessionDep) -> WebhookPublic:
    return _webhook(
        session, webhooks.get_webhook(session, campaign_id=campaign_id, webhook_id=webhook_id)
    )


@router.delete(
    "/campaigns/{campaign_id}/webhooks/{webhook_id}",
    summary="Delete a webhook (what it had not yet been sent is dropped)",
)
def delete_webhook(campaign_id: int, webhook_id: RowId, session: SessionDep) -> WebhookPublic:
    row = webhooks.delete_webhook(session, campaign_id=campaign_id, webhook_id=webhook_id)
    return _webhook(session, row)


@router.get(
    "/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries",
    summary="The webhook's delivery log, newest first (a page by key, like every list)",
)
def deliveries(
    campaign_id: int,
    webhook_id: RowId,
    session: SessionDep,
    request: Request,
    response: Response,
    cursor: Cursor = None,
    before: Annotated[
        int | None,
        Query(
            ge=1,
            lt=2**31,
            deprecated=True,
            description="The last delivery id seen (before issue 46); `cursor` does the same",
        ),
    ] = None,
    limit: Limit = 50,
) -> KeysetPage[DeliveryPublic]:
    rows = webhooks.deliveries(
        session,
        campaign_id=campaign_id,
        webhook_id=webhook_id,
        before=cursor if cursor is not None else before,
        limit=limit + 1,
    )
    return page_of(request, response, rows, limit, lambda d: d.id, _delivery)


@router.post(
    "/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend",
    status_code=status.HTTP_201_CREATED,
    summary="Send a delivery's event again (a new delivery, sent by the worker)",
)
def resend(
    campaign_id: int, webhook_id: RowId, delivery_id: RowId, session: SessionDep
) -> DeliveryPublic:
    row = webhooks.resend(
        session, campaign_id=campaign_id, webhook_id=webhook_id, delivery_id=delivery_id
    )
    return _delivery(row)
