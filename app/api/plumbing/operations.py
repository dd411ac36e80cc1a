"""Each operation's ``operationId``: a chosen snake_case verb phrase, so that a client
generated from /openapi.json reads ``client.record_result(...)`` rather than the framework's
``record_result_api_v1_battles__battle_id__result_post``. A route without a name here fails
at start (``name_operations``), and tests/api/test_contract.py holds them unique."""

from __future__ import annotations

from collections.abc import Iterable

from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

OPERATION_IDS: dict[tuple[str, str], str] = {
    ("POST", "/api/v1/auth/signup"): "sign_up",
    ("POST", "/api/v1/auth/login"): "log_in",
    ("POST", "/api/v1/auth/logout"): "log_out",
    ("GET", "/api/v1/auth/csrf"): "get_csrf_token",
    ("GET", "/api/v1/auth/me"): "get_me",
    ("POST", "/api/v1/auth/password"): "change_password",
    ("POST", "/api/v1/auth/pin"): "set_pin",
    ("POST", "/api/v1/auth/reset-password"): "reset_password",
    ("GET", "/api/v1/auth/tokens"): "list_tokens",
    ("POST", "/api/v1/auth/tokens"): "create_token",
    ("DELETE", "/api/v1/auth/tokens/{token_id}"): "revoke_token",
    ("GET", "/api/v1/rules"): "list_rule_tables",
    ("GET", "/api/v1/rules/numbers"): "get_rule_numbers",
    ("GET", "/api/v1/rules/ranks"): "list_ranks",
    ("GET", "/api/v1/rules/battle-sizes"): "list_battle_sizes",
    ("GET", "/api/v1/rules/battle-traits"): "list_battle_traits",
    ("GET", "/api/v1/rules/battle-traits/{unit_type}"): "get_battle_trait_table",
    ("GET", "/api/v1/rules/weapon-enhancements"): "list_weapon_enhancements",
    ("GET", "/api/v1/rules/weapon-enhancements/{weapon_type}"): "get_weapon_enhancement_table",
    ("GET", "/api/v1/rules/psychic-fortitudes"): "list_psychic_fortitudes",
    ("GET", "/api/v1/rules/crusade-relics"): "list_crusade_relics",
    ("GET", "/api/v1/rules/battle-scars"): "list_battle_scars",
    ("GET", "/api/v1/rules/battle-scars/{unit_type}"): "get_battle_scar_table",
    ("GET", "/api/v1/rules/requisitions"): "list_requisitions",
    ("GET", "/api/v1/rules/agendas"): "list_agendas",
    ("GET", "/api/v1/rules/missions"): "list_missions",
    ("GET", "/api/v1/rules/missions/{mission_id}"): "get_mission",
    ("POST", "/api/v1/campaigns"): "create_campaign",
    ("GET", "/api/v1/campaigns"): "list_campaigns",
    ("GET", "/api/v1/campaigns/{campaign_id}"): "get_campaign",
    ("PATCH", "/api/v1/campaigns/{campaign_id}"): "update_campaign",
    ("POST", "/api/v1/campaigns/{campaign_id}/forces"): "create_force",
    ("GET", "/api/v1/campaigns/{campaign_id}/forces"): "list_forces",
    ("GET", "/api/v1/forces/{force_id}"): "get_force",
    ("PATCH", "/api/v1/forces/{force_id}"): "update_force",
    ("POST", "/api/v1/forces/{force_id}/cards"): "add_card",
    ("POST", "/api/v1/forces/{force_id}/cards/batch"): "add_cards",
    ("GET", "/api/v1/cards/{card_id}"): "get_card",
    ("PATCH", "/api/v1/cards/{card_id}"): "update_card",
    ("DELETE", "/api/v1/cards/{card_id}"): "remove_card",
    ("GET", "/api/v1/campaigns/{campaign_id}/history"): "list_history",
    ("GET", "/api/v1/campaigns/{campaign_id}/export"): "export_campaign",
    ("GET", "/api/v1/campaigns/{campaign_id}/standings"): "get_standings",
    ("GET", "/api/v1/campaigns/{campaign_id}/members"): "list_members",
    ("DELETE", "/api/v1/campaigns/{campaign_id}/members/{user_id}"): "remove_member",
    ("POST", "/api/v1/campaigns/{campaign_id}/invites"): "create_invite",
    ("GET", "/api/v1/campaigns/{campaign_id}/invites"): "list_invites",
    ("DELETE", "/api/v1/campaigns/{campaign_id}/invites/{code}"): "withdraw_invite",
    ("POST", "/api/v1/invites/{code}/accept"): "accept_invite",
    ("POST", "/api/v1/campaigns/{campaign_id}/join"): "join_campaign",
    (
        "POST",
        "/api/v1/campaigns/{campaign_id}/members/{user_id}/reset-link",
    ): "create_reset_link",
    ("POST", "/api/v1/campaigns/{campaign_id}/battles"): "muster_battle",
    ("GET", "/api/v1/campaigns/{campaign_id}/battles"): "list_battles",
    ("GET", "/api/v1/battles/{battle_id}"): "get_battle",
    ("PUT", "/api/v1/battles/{battle_id}/report"): "write_report",
    ("POST", "/api/v1/battles/{battle_id}/result"): "record_result",
    ("POST", "/api/v1/battles/{battle_id}/confirm"): "confirm_result",
    ("POST", "/api/v1/battles/{battle_id}/dispute"): "dispute_result",
    ("POST", "/api/v1/battles/{battle_id}/revert"): "revert_battle",
    ("POST", "/api/v1/battles/{battle_id}/call-off"): "call_off_battle",
    ("GET", "/api/v1/forces/{force_id}/decisions"): "list_decisions",
    ("GET", "/api/v1/decisions/{decision_id}"): "get_decision",
    ("POST", "/api/v1/decisions/{decision_id}/answer"): "answer_decision",
    ("POST", "/api/v1/forces/{force_id}/requisitions"): "purchase_requisition",
    ("POST", "/api/v1/battles/{battle_id}/photos"): "add_photo",
    ("DELETE", "/api/v1/battles/{battle_id}/photos/{photo_id}"): "delete_photo",
    ("GET", "/api/v1/battles/{battle_id}/photos/{photo_id}/{width}"): "get_photo",
    ("POST", "/api/v1/forces/{force_id}/roster"): "import_roster",
    ("GET", "/api/v1/campaigns/{campaign_id}/events"): "list_events",
    ("POST", "/api/v1/campaigns/{campaign_id}/webhooks"): "create_webhook",
    ("GET", "/api/v1/campaigns/{campaign_id}/webhooks"): "list_webhooks",
    ("GET", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}"): "get_webhook",
    ("DELETE", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}"): "delete_webhook",
    (
        "GET",
        "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries",
    ): "list_deliveries",
    (
        "POST",
        "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend",
    ): "resend_delivery",
    ("GET", "/api/v1/campaigns/{campaign_id}/territories"): "list_territories",
    ("POST", "/api/v1/campaigns/{campaign_id}/territories"): "add_territory",
    ("PATCH", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): "update_territory",
    ("DELETE", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): "delete_territory",
    ("GET", "/api/v1/rule-packs/schema"): "get_rule_pack_schema",
    ("GET", "/api/v1/rule-packs/examples"): "list_rule_pack_examples",
    ("GET", "/api/v1/campaigns/{campaign_id}/rule-packs"): "list_rule_packs",
    ("POST", "/api/v1/campaigns/{campaign_id}/rule-packs"): "attach_rule_pack",
    ("GET", "/api/v1/campaigns/{campaign_id}/rules"): "get_campaign_rules",
    ("GET", "/api/v1/campaigns/{campaign_id}/rule-packs/{pack_id}"): "get_rule_pack",
    ("DELETE", "/api/v1/campaigns/{campaign_id}/rule-packs/{pack_id}"): "detach_rule_pack",
}


def name_operations(routes: Iterable[BaseRoute], *, prefix: str) -> None:
    """Give every operation of a router included under ``prefix`` its chosen id; a route
    left out is a bug found at start."""
    for route in routes:
        if not isinstance(route, APIRoute):
            continue
        for method in route.methods or ():
            key = (method, prefix + route.path)
            if key not in OPERATION_IDS:
                raise RuntimeError(
                    f"{method} {key[1]} has no operationId in app/api/plumbing/operations.py"
                )
            route.operation_id = OPERATION_IDS[key]
