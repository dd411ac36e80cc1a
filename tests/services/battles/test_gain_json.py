"""A unit's XP gain as the battle's report keeps it: the hand-written copy must hold every
field of the rule's value, as dataclasses.asdict did (a new field would otherwise be lost
from every report)."""

from dataclasses import asdict

from app.rules.experience import ExperienceGain
from app.services.battles.lifecycle import _gain_json


def test_a_gain_is_kept_as_asdict_kept_it() -> None:
    gain = ExperienceGain(
        battle_experience=1,
        marked_for_greatness=3,
        dealers_of_death=1,
        agendas={"assassins": 2, "sentinel": 1},
        cap=2,
    )
    kept = _gain_json(gain)
    assert kept == asdict(gain)
    assert list(kept) == list(asdict(gain))  # the same keys in the same order
    assert kept["agendas"] is not gain.agendas  # a copy, not the rule's own mapping
