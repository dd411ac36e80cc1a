"""JSON routes for rule packs (issue 22): the schema a pack follows, and a campaign's packs:
preview, attach (or update), read, detach."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Query, Response, UploadFile, status

from app.api.plumbing.responses import located
from app.db.models import RulePack
from app.db.session import SessionDep
from app.edge.schemas.packs import (
    CampaignRulebookPublic,
    JsonSchema,
    PackReachPublic,
    PackRefusalPublic,
    RulePackDocumentPublic,
    RulePackExamplePublic,
    RulePackPreviewPublic,
    RulePackPublic,
    SettingChange,
)
from app.routing import OneHopRoute
from app.rules import packs
from app.services.packs import campaign_packs, examples

router = APIRouter(tags=["rule packs"], route_class=OneHopRoute)
Breaking = Annotated[
    bool,
    Query(description="Go ahead although cards or forces use what the change takes away"),
]


@router.get(
    "/rule-packs/schema",
    summary="The JSON Schema of a rule pack (docs/rule-packs.md explains each field)",
    response_model_exclude_unset=True,
)
def pack_schema() -> JsonSchema:
    return JsonSchema.model_validate(packs.schema())


@router.get(
    "/rule-packs/examples",
    summary="The example packs shipped with the tracker: what each adds, and its file to "
    "attach as it is or to start from",
)
def pack_examples() -> list[RulePackExamplePublic]:
    return [
        RulePackExamplePublic(
            example=e.slug,
            pack_id=e.pack.id,
            name=e.pack.name,
            version=e.pack.version,
            description=e.pack.description,
            factions=list(e.factions),
            settings=e.pack.settings,
            adds=e.adds,
            withdraws=e.withdraws,
            requisition_costs=e.repriced,
            yaml=e.text,
        )
        for e in examples.gallery()
    ]


@router.get("/campaigns/{campaign_id}/rule-packs", summary="The rule packs a campaign plays with")
def list_packs(campaign_id: int, session: SessionDep) -> list[RulePackPublic]:
    return [_public(r) for r in campaign_packs.list_packs(session, campaign_id)]


@router.get(
    "/campaigns/{campaign_id}/rules",
    summary="The rules the campaign plays with: the core with its rule packs applied "
    "(settings, Battle sizes, Agendas, Requisitions, Crusade Relics, pack honours, counters)",
)
def campaign_rules(campaign_id: int, session: SessionDep) -> CampaignRulebookPublic:
    versions, book = campaign_packs.rules_in_play(session, campaign_id)
    return CampaignRulebookPublic(
        rule_packs=versions,
        numbers=book.numbers,
        battle_sizes=list(book.battle_sizes),
        agendas=list(book.agendas),
        requisitions=list(book.requisitions),
        crusade_relics=list(book.honours.crusade_relics),
        counters=list(book.counters),
        missions=list(book.missions),
        pack_battle_traits=list(book.honours.pack_battle_traits),
        pack_psychic_fortitudes=list(book.honours.pack_psychic_fortitudes),
        pack_battle_scars=list(book.scars.pack_scars),
        pack_weapon_enhancements=list(book.honours.pack_weapon_enhancements),
        triggers=list(book.triggers),
        thresholds=list(book.thresholds),
        pack_tables=list(book.pack_tables),
        quests=list(book.quests),
        pack_warlord_traits=list(book.pack_warlord_traits),
    )


@router.post(
    "/campaigns/{campaign_id}/rule-packs",
    status_code=status.HTTP_201_CREATED,
    summary="Attach a rule pack, or a new version of one (an organizer): multipart `file`, "
    "YAML or JSON; `preview=true` answers what it adds and changes and attaches nothing",
    responses={200: {"model": RulePackPreviewPublic, "description": "A preview"}},
)
def attach_pack(
    campaign_id: int,
    session: SessionDep,
    response: Response,
    file: Annotated[UploadFile, File(description="The pack: YAML or JSON, at most 256 KB")],
    preview: Annotated[bool, Query(description="Only answer what it would add and change")] = False,
    accept_breaking: Breaking = False,
) -> RulePackPreviewPublic:
    data = file.file.read(packs.MAX_BYTES + 1)
    if preview:
        response.status_code = status.HTTP_200_OK
        return _preview(
            campaign_packs.preview(
                session, campaign_id=campaign_id, data=data, accept_breaking=accept_breaking
            )
        )
    row, changes = campaign_packs.attach(
        session, campaign_id=campaign_id, data=data, accept_breaking=accept_breaking
    )
    located(response, f"/campaigns/{campaign_id}/rule-packs/{row.pack_id}")
    return _preview(changes, attached=_public(row))


@router.get(
    "/campaigns/{campaign_id}/rule-packs/{pack_id}",
    summary="One of the campaign's rule packs, with its document",
)
def get_pack(campaign_id: int, pack_id: str, session: SessionDep) -> RulePackDocumentPublic:
    row = campaign_packs.get_pack(session, campaign_id, pack_id)
    return RulePackDocumentPublic(
        **_public(row).model_dump(), document=packs.RulePack.model_validate(row.document)
    )


@router.delete(
    "/campaigns/{campaign_id}/rule-packs/{pack_id}",
    summary="Stop playing with a rule pack (an organizer); battles recorded under it keep it",
)
def detach_pack(
    campaign_id: int, pack_id: str, session: SessionDep, accept_breaking: Breaking = False
) -> RulePackPublic:
    row = campaign_packs.detach(
        session, campaign_id=campaign_id, pack_id=pack_id, accept_breaking=accept_breaking
    )
    return _public(row)


def _public(row: RulePack) -> RulePackPublic:
    pack = packs.RulePack.model_validate(row.document)
    return RulePackPublic(
        id=row.id or 0,
        pack_id=row.pack_id,
        name=row.name,
        version=row.pack_version,
        description=pack.description,
        position=row.position,
        attached_at=row.attached_at,
        settings=pack.settings,
        adds=campaign_packs.content_names(pack),
    )


def _preview(
    changes: campaign_packs.PackChanges, attached: RulePackPublic | None = None
) -> RulePackPreviewPublic:
    return RulePackPreviewPublic(
        pack_id=changes.pack.id,
        name=changes.pack.name,
        version=changes.pack.version,
        replaces_version=changes.replaces_version,
        settings={k: SettingChange(before=b, after=a) for k, (b, a) in changes.settings.items()},
        adds=changes.added,
        removes=changes.removed,
        breaks=changes.breaks,
        withdraws=changes.withdraws,
        requisition_costs={
            name: SettingChange(before=b, after=a) for name, (b, a) in changes.costs.items()
        },
        attached=attached,
        reach=(
            PackReachPublic(
                factions=list(changes.reach[0]),
                forces=changes.reach[1],
                other_forces=changes.reach[2],
            )
            if changes.reach
            else None
        ),
        refusal=(
            PackRefusalPublic(
                code=changes.refusal.code,
                status=changes.refusal.status,
                detail=changes.refusal.message,
                field=changes.refusal.field,
            )
            if changes.refusal is not None
            else None
        ),
    )
