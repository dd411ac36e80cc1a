"""Reading a BattleScribe roster (``.ros`` XML, or ``.rosz``: a zip holding one ``.ros``; New
Recruit exports the same) into plain values. Pure: bytes in, a ParsedRoster or a typed
refusal out; nothing here touches the database.

The XML is parsed by defusedxml with DTDs forbidden, so entity tricks (billion laughs,
external entities) are refused before any expansion; a zip is read entry by entry with a
hard cap on what it may inflate to, whatever its headers claim.
"""

from __future__ import annotations

import io
import math
import re
import zipfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import BinaryIO
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from app.errors import DomainError
from app.services.rosters.roster_factions import Setting, fill_placeholders, placeholder_of, resolve

NS = "{http://www.battlescribe.net/schema/rosterSchema}"
# The 9th-edition game system (BSData wh40k, also what New Recruit writes).
GAME_SYSTEM_ID = "28ec-711c-d87f-3aeb"
GAME_SYSTEM_EDITION = "9th edition"
MAX_ROSTER_BYTES = 4 * 1024 * 1024  # one .ros, once unzipped
MAX_ZIP_ENTRIES = 8
MAX_UNITS = 200
PL = "PL"
# Primary categories that are not a unit's Battlefield Role: the roster's own settings.
NOT_A_ROLE = {"configuration", "no force org slot"}
BATTLEFIELD_ROLES = {
    "hq",
    "troops",
    "elites",
    "fast attack",
    "heavy support",
    "flyer",
    "dedicated transport",
    "lord of war",
    "fortification",
    "fortifications",
}
ROLE_NAMES = {"fortification": "Fortifications"}
# Chosen per battle, not a keyword of the unit: "Warlord", and the data's own markers for
# it ("Asuryani Warlord", "Mortarion Warlord").
SKIPPED_WORD = "warlord"
# What a card can hold (the JSON API's CardCreate limits).
MAX_NAME = 120
MAX_KEYWORDS = 40
MAX_KEYWORD = 40
MAX_WARGEAR = 4000
MAX_POWERS = 2000
MAX_POWER_RATING = 200
MAX_POINTS = 10000
# Selections inside selections: real rosters nest a handful deep (unit, model, wargear,
# option); a file nested past this is refused rather than walked.
MAX_DEPTH = 64
# New Recruit's ids (a 24-hex database id), as against BattleScribe's "1a2b-3c4d-5e6f-7a8b"
_HEX_ID = re.compile(r"[0-9a-f]{24}", re.IGNORECASE)


@dataclass(frozen=True)
class RosterUnit:
    """One unit read from the roster, with what a Crusade card needs."""

    key: str  # its place in the roster ("2.5": force 2, selection 5), stable for one file
    name: str
    datasheet: str
    power_rating: int
    keywords: tuple[str, ...]
    faction_keywords: tuple[str, ...]
    battlefield_role: str
    points: int | None = None
    models: tuple[str, ...] = ()
    wargear: tuple[str, ...] = ()
    psychic_powers: tuple[str, ...] = ()
    warlord_trait: str | None = None
    relic: str | None = None
    warlord: bool = False
    detachment: str = ""
    # An option of the unit makes it a CHARACTER (a Knight Lance / Traitoris Lance upgrade)
    character_option: bool = False


@dataclass(frozen=True)
class UnreadableUnit:
    key: str
    name: str
    reason: str
    power_rating: int = 0  # the Power it carries, to explain the roster's total


@dataclass(frozen=True)
class ParsedRoster:
    name: str
    game_system: str
    factions: tuple[str, ...]  # each detachment's catalogue, e.g. "Necrons"
    detachments: tuple[str, ...]
    units: tuple[RosterUnit, ...] = ()
    unreadable: tuple[UnreadableUnit, ...] = field(default_factory=tuple)
    # The roster's own totals, as BattleScribe wrote them (None: the file gives none)
    total_power: int | None = None
    total_points: int | None = None
    options_power: int = 0  # Power of detachment and army settings, on no unit
    # How the file writes costs (ruling 76): True when a selection's cost already holds
    # everything inside it (New Recruit, BlueScribe), False when each selection gives only
    # its own and a unit's cost is the sum (BattleScribe)
    costs_include_children: bool = False

    @property
    def unexplained_power(self) -> int:
        """Power the roster's own total has that neither its units (read or not) nor its
        settings account for: the file's total is out of date (e.g. a unit deleted)."""
        if self.total_power is None:
            return 0
        carried = sum(u.power_rating for u in self.unreadable)
        return self.total_power - self.read_power - carried - self.options_power

    @property
    def read_power(self) -> int:
        return sum(u.power_rating for u in self.units)


def _problem(code: str, message: str, status: int = 422) -> DomainError:
    return DomainError(code, message, status=status, field="file")


def _unreadable(why: str) -> DomainError:
    return _problem("roster_unreadable", f"The roster file could not be read: {why}.")


# --- the file ------------------------------------------------------------------------------


def read_upload(stream: BinaryIO) -> bytes:
    """An uploaded file, read to at most MAX_ROSTER_BYTES: no roster, zipped or not, is
    larger, so a bigger upload is refused without being read whole."""
    data = stream.read(MAX_ROSTER_BYTES + 1)
    if len(data) > MAX_ROSTER_BYTES:
        raise _problem(
            "roster_too_large",
            f"A roster file may be {MAX_ROSTER_BYTES // (1024 * 1024)} MB at most.",
            status=413,
        )
    return data


def roster_xml(data: bytes) -> bytes:
    """The ``.ros`` XML of an upload, unzipping a ``.rosz`` (told apart by its content)."""
    if not data.startswith(b"PK"):
        return data
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise _unreadable("it looks like a zip but is damaged or cut short") from None
    if len(entries) > MAX_ZIP_ENTRIES:
        raise _problem(
            "roster_too_large",
            f"A .rosz holds one roster; this one has {len(entries)} entries.",
            status=413,
        )
    rosters = [e for e in entries if e.filename.lower().endswith(".ros")]
    if len(rosters) != 1:
        raise _unreadable(f"a .rosz must hold exactly one .ros file, this one holds {len(rosters)}")
    return _inflate(archive, rosters[0])


def _inflate(archive: zipfile.ZipFile, entry: zipfile.ZipInfo) -> bytes:
    """Read at most MAX_ROSTER_BYTES, whatever size the entry's header declares."""
    if entry.flag_bits & 0x1:  # BattleScribe never encrypts; zipfile would ask a password
        raise _unreadable("its .ros entry is encrypted (password-protected)")
    try:
        with archive.open(entry) as stream:
            data = stream.read(MAX_ROSTER_BYTES + 1)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        raise _unreadable("the zip is damaged or cut short") from None
    except RuntimeError:  # zipfile's word for "encrypted" found late
        raise _unreadable("its .ros entry is encrypted (password-protected)") from None
    if len(data) > MAX_ROSTER_BYTES:
        raise _problem(
            "roster_too_large",
            f"The roster unpacks to more than {MAX_ROSTER_BYTES // (1024 * 1024)} MB.",
            status=413,
        )
    return data


def _root(xml: bytes) -> Element:
    if len(xml) > MAX_ROSTER_BYTES:
        raise _problem("roster_too_large", "The roster file is too large.", status=413)
    try:
        root = fromstring(xml, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException:
        raise _unreadable("it declares a DTD or entities, which rosters never need") from None
    except (ParseError, ValueError):
        raise _unreadable("it is not well-formed XML (perhaps cut short)") from None
    except LookupError:  # the XML declaration names an encoding Python does not know
        raise _unreadable("its XML declaration names an unknown text encoding") from None
    if root.tag != f"{NS}roster":
        raise _unreadable("it is XML but not a BattleScribe roster")
    return root


def _check_game_system(root: Element) -> str:
    name = root.get("gameSystemName", "")
    if root.get("gameSystemId") != GAME_SYSTEM_ID or GAME_SYSTEM_EDITION not in name.casefold():
        raise _problem(
            "roster_wrong_game_system",
            f"The roster is for '{name or 'an unknown game'}'; only Warhammer 40,000 9th "
            "Edition rosters can join a Crusade force.",
        )
    return name


# --- the roster ----------------------------------------------------------------------------


def parse_roster(data: bytes) -> ParsedRoster:
    """Every unit of every detachment; anything that looks like a unit but cannot become a
    card is listed with the reason."""
    root = _root(roster_xml(data))
    system = _check_game_system(root)
    units: list[RosterUnit] = []
    unreadable: list[UnreadableUnit] = []
    factions: list[str] = []
    detachments: list[str] = []
    options = 0.0
    rolled = _costs_include_children(root)
    for f_index, force in enumerate(root.iter(f"{NS}force"), start=1):
        detachment = force.get("name", "")
        detachments.append(detachment)
        if force.get("catalogueName") and force.get("catalogueName") not in factions:
            factions.append(force.get("catalogueName", ""))
        chosen = _sub_factions(force)
        for s_index, selection in enumerate(_children(force), start=1):
            key = f"{f_index}.{s_index}"
            wrapped = _wrapped_units(selection, rolled)
            if wrapped:
                role = _role(_primary(selection))
                for w_index, inner in enumerate(wrapped, start=1):
                    inner_key = key if len(wrapped) == 1 else f"{key}.{w_index}"
                    read = _unit(inner, inner_key, detachment, chosen, rolled)
                    if isinstance(read, RosterUnit):
                        units.append(
                            read if read.battlefield_role else replace(read, battlefield_role=role)
                        )
                    elif read is not None:
                        unreadable.append(read)
                options += _cost(selection, PL, rolled) - sum(
                    _cost(inner, PL, rolled) for inner in wrapped
                )
                continue
            read = _unit(selection, key, detachment, chosen, rolled)
            if isinstance(read, RosterUnit):
                units.append(read)
            elif read is not None:
                unreadable.append(read)
            else:  # a detachment or army setting; some cost Power (e.g. a Specialist option)
                options += _cost(selection, PL, rolled)
    if len(units) > MAX_UNITS:
        raise _problem(
            "roster_too_large", f"A roster may hold {MAX_UNITS} units at most.", status=413
        )
    return ParsedRoster(
        total_power=_total(root, PL),
        total_points=_total(root, "pts"),
        options_power=round(options) if 0 < options <= MAX_POWER_RATING else 0,
        name=root.get("name", "").strip()[:MAX_NAME],
        game_system=system,
        factions=tuple(factions),
        detachments=tuple(detachments),
        units=tuple(units),
        unreadable=tuple(unreadable),
        costs_include_children=rolled,
    )


def _total(root: Element, name: str) -> int | None:
    """One of the roster's own totals (its ``costs``), if the file gives it."""
    for cost in root.findall(f"{NS}costs/{NS}cost"):
        if cost.get("name", "").strip() == name.strip():
            try:
                value = float(cost.get("value", ""))
            except ValueError:
                return None
            return round(value) if math.isfinite(value) and abs(value) < 1e6 else None
    return None


def _costs_include_children(root: Element) -> bool:
    """Whether the file writes each selection's cost with everything inside it already
    added (New Recruit, BlueScribe) rather than its own cost only (BattleScribe); ruling 76.
    The file's own totals (the roster's ``costs``, and a force's if it has any) tell: they
    equal the sum of the force-level selections' costs in the first way, of every
    selection's cost in the second. When the totals cannot tell (they match both, or
    neither: a file out of date), the writer does: New Recruit signs ``generatedBy`` with
    its address and gives 24-hex ids; BattleScribe's ids are four groups of four."""
    votes: set[bool] = set()
    for holder in (root, *root.iter(f"{NS}force")):
        tops = [s for force in holder.iter(f"{NS}force") for s in _children(force)]
        for name in (PL, "pts"):
            total = _own_total(holder, name)
            if total is None or not tops:
                continue
            top = sum(_power(s, name) for s in tops)
            every = top + sum(_power(d, name) for s in tops for d in _descendants(s))
            if abs(total - top) < 0.5 <= abs(total - every):
                votes.add(True)
            elif abs(total - every) < 0.5 <= abs(total - top):
                votes.add(False)
    if len(votes) == 1:
        return votes.pop()
    return "newrecruit" in root.get("generatedBy", "").casefold() or bool(
        _HEX_ID.fullmatch(root.get("id", ""))
    )


def _own_total(holder: Element, name: str) -> float | None:
    found = [c for c in holder.findall(f"{NS}costs/{NS}cost") if c.get("name", "").strip() == name]
    if not found:
        return None
    try:
        value = float(found[0].get("value", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _cost(selection: Element, name: str, rolled: bool) -> float:
    """A selection's whole cost named ``name``: as written when the file's costs already
    hold their children's (``rolled``), else its own plus everything inside it."""
    own = _power(selection, name)
    if rolled:
        return own
    return own + sum(_power(d, name) for d in _descendants(selection))


def _children(element: Element) -> list[Element]:
    return element.findall(f"{NS}selections/{NS}selection")


def _descendants(selection: Element) -> list[Element]:
    """Every selection inside ``selection``, depth first, walked without recursion (a
    hostile file may nest thousands deep) and refused past MAX_DEPTH."""
    found: list[Element] = []
    stack = [(child, 1) for child in reversed(_children(selection))]
    while stack:
        child, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _problem(
                "roster_too_deep",
                f"Selections are nested more than {MAX_DEPTH} deep; no roster needs that.",
            )
        found.append(child)
        stack.extend((grandchild, depth + 1) for grandchild in reversed(_children(child)))
    return found


def _categories(selection: Element) -> list[Element]:
    return selection.findall(f"{NS}categories/{NS}category")


def _primary(selection: Element) -> str:
    for category in _categories(selection):
        if category.get("primary") == "true":
            return category.get("name", "").strip()
    return ""


def _power(selection: Element, cost_name: str = PL) -> float:
    """The selection's own cost named ``cost_name`` (Power Level by default, or "pts")."""
    total = 0.0
    for cost in selection.findall(f"{NS}costs/{NS}cost"):
        if cost.get("name", "").strip() == cost_name:
            try:
                value = float(cost.get("value", "0"))
            except ValueError:
                continue
            if not math.isfinite(value):  # nan, inf: no cost a roster can have
                raise _unreadable(
                    f"a {cost_name} cost is '{cost.get('value', '')[:20]}', not a number"
                )
            total += max(min(value, 1e6), -1e6)  # far past any cap, and never an overflow
    return total


def _sub_factions(force: Element) -> dict[str, str]:
    """The sub-factions a detachment chose, by the placeholder they fill (rulings 51, 74
    and 76): its settings are the force-level selections that hold options but no unit, or
    hold nothing and are named "Setting: Choice". A force nested in another reads its
    own settings only."""
    settings = []
    placeholders = set()
    for selection in _children(force):
        inner = _descendants(selection)
        for part in (selection, *inner):
            for category in _categories(part):
                found = placeholder_of(category.get("name", ""))
                if found:
                    placeholders.add(found)
        if selection.get("type") in ("unit", "model") or any(
            d.get("type") in ("unit", "model") for d in inner
        ):
            continue
        options = tuple(" ".join(o.get("name", "").split()) for o in _children(selection))
        if options:
            settings.append(Setting(selection.get("name", ""), options))
        elif not inner:  # the choice written as the setting's own name (ruling 76):
            head, colon, value = selection.get("name", "").partition(":")  # "Chapter
            if colon and value.strip():  # Selection: Black Templars", no option inside
                settings.append(Setting(head, (" ".join(value.split()),)))
    return fill_placeholders(settings, placeholders)


def _unit(
    selection: Element,
    key: str,
    detachment: str,
    chosen: Mapping[str, str] | None = None,
    rolled: bool = False,
) -> RosterUnit | UnreadableUnit | None:
    """A unit selection as a RosterUnit; a detachment setting is None; anything else that
    costs Power is listed as unreadable so the player sees it was not silently dropped."""
    kind = selection.get("type", "")
    name = " ".join(selection.get("name", "").split())
    primary = _primary(selection)
    power = _cost(selection, PL, rolled)
    points = _cost(selection, "pts", rolled)
    if primary.casefold() == "configuration" or (kind not in ("unit", "model") and not power):
        return None
    carried = round(power) if 0 < power <= MAX_POWER_RATING else 0
    if kind not in ("unit", "model") and not _written_as_upgrade(selection, primary):
        return UnreadableUnit(key, name, f"it is a '{kind}' selection, not a unit", carried)
    if not name:
        return UnreadableUnit(key, "(no name)", "the unit has no name", carried)
    if len(name) > MAX_NAME:
        return UnreadableUnit(
            key, name[:MAX_NAME], f"its name is over {MAX_NAME} characters", carried
        )
    if round(power) < 1:
        return UnreadableUnit(key, name, "the roster gives it no Power Rating (PL)")
    if round(power) > MAX_POWER_RATING:
        return UnreadableUnit(
            key, name, f"its Power Rating {round(power)} is over {MAX_POWER_RATING}"
        )
    descendants = _descendants(selection)
    keywords, factions = _keywords(selection, descendants, chosen or {})
    if len(keywords) > MAX_KEYWORDS:
        return UnreadableUnit(key, name, f"it has more than {MAX_KEYWORDS} keywords", carried)
    return RosterUnit(
        key=key,
        name=name,
        datasheet=name,
        power_rating=round(power),
        points=round(points) if 0 < points <= MAX_POINTS else None,
        keywords=keywords,
        faction_keywords=factions,
        battlefield_role=_role(primary),
        models=_models(selection, descendants),
        wargear=_wargear(descendants),
        psychic_powers=_profile_names(descendants, "Psychic Power"),
        warlord_trait=_prefixed(descendants, "warlord trait"),
        relic=_prefixed(descendants, "relic"),
        warlord=any(
            c.get("name", "").strip().casefold() == "warlord"
            for s in (selection, *descendants)
            for c in _categories(s)
        ),
        character_option=any(
            d.get("type") == "upgrade" and any(_name(c) == "character" for c in _categories(d))
            for d in descendants
        ),
        detachment=detachment,
    )


def _wrapped_units(selection: Element, rolled: bool = False) -> list[Element]:
    """The units a force-level selection that is not a unit itself holds: a Necron
    "Dynastic Advisors" upgrade holding a Technomancer, a "Bound Creation" holding
    Cryptothralls (written as an upgrade, or as a 'unit' with no keyword of its own whose
    child is the unit). Each is read as the unit it is, by its own name and categories; a
    child model counts when it carries keywords of its own (a character on its own).
    A wrapper with no keyword of its own around two or more CHARACTER models, each with
    its own keywords and Power ("Lieutenants" holding two Lieutenants, "Lieutenant(s)"
    two Ravenwing Talonmasters), holds that many units: the datasheet makes each its own
    unit (ruling 76)."""
    kind = selection.get("type")
    own = any(_is_keyword(c) for c in _categories(selection))
    if kind != "model" and not own:
        models = [child for child in _children(selection) if child.get("type") == "model"]
        if len(models) >= 2 and all(_is_character_of_its_own(m, rolled) for m in models):
            return models
    if kind == "unit":
        if own:
            return []
        return [child for child in _children(selection) if child.get("type") == "unit"]
    if kind == "model" or _written_as_upgrade(selection, _primary(selection)):
        return []
    return [
        child
        for child in _children(selection)
        if child.get("type") == "unit"
        or (child.get("type") == "model" and any(_is_keyword(c) for c in _categories(child)))
    ]


def _is_character_of_its_own(model: Element, rolled: bool) -> bool:
    """A model that carries CHARACTER among keywords of its own and a Power of its own."""
    return (
        _count(model) == 1
        and any(_is_keyword(c) and _name(c) == "character" for c in _categories(model))
        and _cost(model, PL, rolled) > 0
    )


def _written_as_upgrade(selection: Element, primary: str) -> bool:
    """A unit BattleScribe's data writes as a force-level 'upgrade' (a Death Guard Daemon
    Prince, Plagueburst Crawlers, Necron Bound Creations): it has a Battlefield Role as its
    primary category and a Unit profile, as every unit's datasheet does."""
    if primary.casefold() not in BATTLEFIELD_ROLES:
        return False
    return any(
        _profile_type(profile).casefold() == "unit"
        for part in (selection, *_descendants(selection))
        for profile in _profiles(part)
    )


def _role(primary: str) -> str:
    if primary.casefold() in NOT_A_ROLE:
        return ""
    return ROLE_NAMES.get(primary.casefold(), primary)[:MAX_KEYWORD]


def _keyword_categories(selection: Element, descendants: list[Element]) -> list[Element]:
    """The categories that give a unit its keywords (ruling 76, which replaces ruling 73's
    principal model): a unit has every keyword of every model in it, as the core rules
    say of a unit whose models differ. So its own categories, those of every model in it
    (Celestine's CELESTINE and LIVING SAINT beside her Geminae Superia's; Aun'Va's
    ETHEREAL beside her Ethereal Guard's), any upgrade's ``Faction:`` one (e.g. a Knight
    household), and the other categories of the options chosen for the unit or its models
    (``_option_categories``), but never a Knight Lance's CHARACTER, which Crusade forbids.
    One exception: drones that ride with models of another kind (a Commander's Gun Drones,
    a Stealth team's Marker Drone) add models and wargear, never keywords, so the unit is
    no DRONE and gains XP as its datasheet says (ruling 45)."""
    found = list(_categories(selection))
    for child in descendants:
        if child.get("type") != "model":
            found.extend(c for c in _categories(child) if _name(c).startswith("faction:"))
    models = _keyword_models(selection, descendants)
    for model in models:
        if model is not selection:
            found.extend(_categories(model))
    found.extend(_option_categories(selection, models))
    return found


def _keyword_models(selection: Element, descendants: list[Element]) -> list[Element]:
    """The unit's models whose keywords are the unit's: all of them, but for drones riding
    with models of another kind."""
    models = [m for m in (selection, *descendants) if m.get("type") == "model"]
    others = [m for m in models if "drone" not in _kind_of(m)]
    return others if others else models


def _option_categories(selection: Element, models: list[Element]) -> list[Element]:
    """The keywords a unit's options give it (ruling 73): a Jump Pack's FLY and JUMP PACK,
    Smoke Launchers' SMOKESCREEN, a Chapter Command upgrade's CHAPTER MASTER, a Chaos
    Knight's KHORNE - from an option of the unit itself or of a model whose keywords are the
    unit's (any but a drone riding with models of another kind). Never CHARACTER: a Knight
    Lance makes no CHARACTER in Crusade (rulings 31 and 35)."""
    counted = {id(m) for m in models}
    found: list[Element] = []
    stack = [(child, selection) for child in _children(selection)]
    while stack:  # depth already bounded by _descendants, which the caller has walked
        child, owner = stack.pop()
        if child.get("type") == "model":
            owner = child
        elif child.get("type") == "upgrade" and (owner is selection or id(owner) in counted):
            found.extend(c for c in _categories(child) if _name(c) != "character")
        stack.extend((grandchild, owner) for grandchild in _children(child))
    return found


def _kind_of(model: Element) -> frozenset[str]:
    return frozenset(_name(c) for c in _categories(model) if c.get("primary") != "true")


def _name(category: Element) -> str:
    return " ".join(category.get("name", "").split()).casefold()


def _is_keyword(category: Element) -> bool:
    """A category that is a keyword of the unit's own (not its role or faction)."""
    return category.get("primary") != "true" and not _name(category).startswith("faction:")


def _keywords(
    selection: Element, descendants: list[Element], chosen: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Keywords from categories: ``Faction: X`` gives the faction keyword X; a placeholder
    like ``<SEPT>`` is filled with the sub-faction the detachment chose (``chosen``) or
    left out, never kept as written; the primary category (the Battlefield Role) and the
    per-battle WARLORD are left out."""
    keywords: list[str] = []
    factions: list[str] = []
    for category in _keyword_categories(selection, descendants):
        if category.get("primary") == "true":
            continue
        raw = " ".join(category.get("name", "").split())
        is_faction = raw.casefold().startswith("faction:")
        word = raw.split(":", 1)[1].strip().upper() if is_faction else raw.upper()
        word = resolve(word, chosen)
        if not word or word.startswith("<") or SKIPPED_WORD in word.casefold().split():
            continue
        if word.casefold() in BATTLEFIELD_ROLES or word.casefold() in NOT_A_ROLE:
            continue  # a role, even when the data lists it again as a plain category
        word = word[:MAX_KEYWORD]
        if is_faction and word not in factions:
            factions.append(word)
        if word not in keywords:
            keywords.append(word)
    return tuple(keywords), tuple(factions)


def _count(selection: Element) -> int:
    try:
        return max(int(selection.get("number", "1")), 1)
    except ValueError:
        return 1


def _counted(names: Counter[str]) -> tuple[str, ...]:
    return tuple(f"{n}x {name}" if n > 1 else name for name, n in names.items())


def _models(selection: Element, descendants: list[Element]) -> tuple[str, ...]:
    models: Counter[str] = Counter()
    for child in descendants:
        if child.get("type") == "model":
            models[" ".join(child.get("name", "").split())] += _count(child)
    if not models and selection.get("type") == "model":
        models[" ".join(selection.get("name", "").split())] += _count(selection)
    return _counted(models)


def _profiles(selection: Element) -> list[Element]:
    return selection.findall(f"{NS}profiles/{NS}profile")


def _profile_type(profile: Element) -> str:
    return (profile.get("typeName") or profile.get("profileTypeName") or "").strip()


def _wargear(descendants: list[Element]) -> tuple[str, ...]:
    """Upgrade selections with a Weapon profile, counted across the unit."""
    wargear: Counter[str] = Counter()
    for child in descendants:
        if child.get("type") != "upgrade":
            continue
        if any(_profile_type(p) == "Weapon" for p in _profiles(child)):
            wargear[" ".join(child.get("name", "").split())] += _count(child)
    return _counted(wargear)


def _profile_names(descendants: list[Element], profile_type: str) -> tuple[str, ...]:
    names: list[str] = []
    for child in descendants:
        for profile in _profiles(child):
            name = " ".join(profile.get("name", "").split())
            if _profile_type(profile) == profile_type and name and name not in names:
                names.append(name)
    return tuple(names)


def _prefixed(descendants: list[Element], prefix: str) -> str | None:
    """A selection named ``Warlord Trait: X`` / ``Warlord Trait (Codex 1): X`` / ``Relic: X``
    gives X (BSData's naming for 9th edition)."""
    for child in descendants:
        name = " ".join(child.get("name", "").split())
        head, colon, tail = name.partition(":")
        if colon and head.casefold().startswith(prefix) and tail.strip():
            return tail.strip()[:MAX_NAME]
    return None


def join_lines(items: tuple[str, ...], limit: int) -> str:
    """A card's text field from a list, cut to what the field can hold."""
    text = "\n".join(items)
    return text if len(text) <= limit else text[: limit - 1] + "…"
