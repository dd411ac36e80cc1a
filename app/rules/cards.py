"""The Crusade card: one unit's record, as immutable values.

Crusade points are never stored: they are derived from the facts on the card (honours with
the points fixed when each was gained, requisition upgrades, scars currently held).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache

from app.rules.data import HonourCategory, Rulebook, UnitType
from app.rules.dice import DieRoll
from app.rules.errors import RuleError


@dataclass(frozen=True)
class CombatTallies:
    """The card's running totals. Enemy units destroyed are kept by how they died."""

    battles_played: int = 0
    battles_survived: int = 0
    destroyed_psychic: int = 0
    destroyed_ranged: int = 0
    destroyed_melee: int = 0

    @property
    def units_destroyed(self) -> int:
        return self.destroyed_psychic + self.destroyed_ranged + self.destroyed_melee


@dataclass(frozen=True)
class BattleHonour:
    """One Battle Honour. ``entry_ids`` holds the trait, fortitude or relic id, or one or two
    Weapon Enhancement ids. ``crusade_points`` is fixed at the moment it was gained."""

    category: HonourCategory
    entry_ids: tuple[str, ...]
    crusade_points: int
    weapon: str | None = None
    model: str | None = None
    dice: tuple[DieRoll, ...] = ()


@dataclass(frozen=True)
class BattleScar:
    entry_id: str
    dice: tuple[DieRoll, ...] = ()


@dataclass(frozen=True)
class Upgrade:
    """A lasting change bought with a requisition that is worth Crusade points."""

    requisition: str
    detail: str
    crusade_points: int
    model: str | None = None
    weapon: str | None = None
    first_founding: bool = False


@dataclass(frozen=True)
class CrusadeCard:
    id: str
    name: str
    power_rating: int
    keywords: frozenset[str] = frozenset()
    # Its points value, when known (a roster gives it); counted only where forces muster by
    # points (a rule pack's house rule).
    points: int | None = None
    battlefield_role: str = ""
    champion: str | None = None
    named_character: bool = False
    summoned: bool = False
    # Cards of one split unit share this label; they are mustered together or not at all.
    split_unit: str | None = None
    datasheet: str = ""  # what it was imported or transformed as (issue 38)
    wargear: str = ""
    psychic_powers: str = ""
    narrative: str = ""
    xp: int = 0
    rank: str = "battle_ready"
    honours: tuple[BattleHonour, ...] = ()
    scars: tuple[BattleScar, ...] = ()
    upgrades: tuple[Upgrade, ...] = ()
    tallies: CombatTallies = field(default_factory=CombatTallies)
    marked_for_greatness: int = 0
    agenda_tallies: Mapping[str, int] = field(default_factory=dict)
    counters: Mapping[str, int] = field(default_factory=dict)  # a rule pack's card counters

    def has(self, keyword: str) -> bool:
        """Whatever spelling the rule or the roster used: SWARM or SWARMS, IMPERIAL KNIGHT or
        IMPERIAL KNIGHTS, any case (``spellings``)."""
        return not spellings(keyword).isdisjoint(self.keywords)

    def has_role(self, role: str) -> bool:
        """Its Battlefield Role, singular or plural, any case (Fortification/Fortifications)."""
        return not spellings(role).isdisjoint(spellings(self.battlefield_role))

    @property
    def crusade_points(self) -> int:
        earned = sum(h.crusade_points for h in self.honours)
        bought = sum(u.crusade_points for u in self.upgrades)
        return earned + bought - len(self.scars)

    @property
    def unit_type(self) -> UnitType:
        """Which Battle Trait and Battle Scar table the unit uses. The CHARACTER tables
        exclude VEHICLE and MONSTER units, so those keywords win."""
        if self.has("VEHICLE"):
            return UnitType.VEHICLE
        if self.has("MONSTER"):
            return UnitType.MONSTER
        if self.has("CHARACTER"):
            return UnitType.CHARACTER
        return UnitType.OTHER

    def honour_ids(self, category: HonourCategory) -> set[str]:
        return {i for h in self.honours if h.category == category for i in h.entry_ids}

    @property
    def enhanced_weapons(self) -> set[str]:
        """Weapons changed by a Weapon Enhancement or a weapon-upgrading Crusade Relic."""
        return {h.weapon.casefold() for h in self.honours if h.weapon}

    @property
    def relic_weapons(self) -> set[str]:
        return {u.weapon.casefold() for u in self.upgrades if u.weapon}

    @property
    def scar_ids(self) -> set[str]:
        return {s.entry_id for s in self.scars}


@cache
def spellings(word: str) -> frozenset[str]:
    """The spellings of one keyword or Battlefield Role the rule texts and real rosters use
    for the same thing: the singular and the plural of its last word, upper case, spaces
    collapsed. The rules write SWARMS, DRONES, IMPERIAL KNIGHTS, Fortification; rosters write
    SWARM, Drone, Imperial Knight, Fortifications. Every keyword test goes through here."""
    upper = " ".join(word.split()).upper()
    singular = upper[:-1] if upper.endswith("S") and not upper.endswith("SS") else upper
    return frozenset({upper, singular, singular + "S"})


def normalise_keywords(keywords: object) -> frozenset[str]:
    if not isinstance(keywords, list | tuple | set | frozenset):
        raise RuleError("keywords_invalid", "Keywords must be a list of words.", field="keywords")
    return frozenset(str(k).strip().upper() for k in keywords if str(k).strip())


def new_card(
    *, id: str, name: str, power_rating: int, keywords: object = (), **details: object
) -> CrusadeCard:
    """A card as it is when a unit joins an Order of Battle: 0 XP, no tallies, no honours."""
    if power_rating < 1:
        raise RuleError(
            "power_rating_invalid",
            "A unit's Power Rating must be at least 1.",
            field="power_rating",
        )
    if not name.strip():
        raise RuleError("unit_name_missing", "Every unit needs a name.", field="name")
    return CrusadeCard(
        id=id,
        name=name.strip(),
        power_rating=power_rating,
        keywords=normalise_keywords(keywords),
        **details,  # type: ignore[arg-type]
    )


def with_own_warlord_trait(card: CrusadeCard, trait: str | None) -> CrusadeCard:
    """Record a named character's own Warlord Trait as it joins: it comes with the model, so
    it costs no RP and adds no Crusade points. Other units get theirs by requisition."""
    if trait is None or not trait.strip():
        return card
    if not card.named_character:
        raise RuleError(
            "warlord_trait_needs_requisition",
            "Only a named character comes with its own Warlord Trait; any other CHARACTER "
            "gains one through the Warlord Trait requisition.",
            field="warlord_trait",
        )
    own = Upgrade("warlord_trait", trait.strip(), 0, model=card.champion or card.name)
    return replace(card, upgrades=(*card.upgrades, own))


def never_gains_xp(card: CrusadeCard, book: Rulebook) -> bool:
    """Named characters, SWARMS, DRONES, Fortifications and summoned units gain no XP,
    no Battle Honours, and pass Out of Action tests without a roll."""
    numbers = book.numbers
    return (
        card.named_character
        or card.summoned
        or any(card.has(k) for k in numbers.never_gain_xp_keywords)
        or any(card.has_role(r) for r in numbers.never_gain_xp_roles)
    )


def honour_crusade_points(card: CrusadeCard, book: Rulebook) -> int:
    """Points a new Battle Honour is worth, by the unit's Power Rating right now."""
    numbers = book.numbers
    if card.power_rating <= numbers.honour_power_rating_threshold:
        return numbers.honour_crusade_points_small
    return numbers.honour_crusade_points_large


def update_narrative(
    card: CrusadeCard, *, name: str | None = None, narrative: str | None = None
) -> CrusadeCard:
    """Names and stories may change at any time; nothing else on a card may (rules:
    a unit's details are fixed once added, except through requisitions)."""
    if name is not None and not name.strip():
        raise RuleError("unit_name_missing", "Every unit needs a name.", field="name")
    return replace(
        card,
        name=card.name if name is None else name.strip(),
        narrative=card.narrative if narrative is None else narrative,
    )
