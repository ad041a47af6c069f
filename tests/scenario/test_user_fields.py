"""The simulated user's optional fields (`persona`, `known_info`, `unknown_info`, `user_instructions`) and the
persona matrix (`personas`): read as given, every mistake at its line and column."""

from __future__ import annotations

from dialogcheck.scenario.model import UserProfile
from dialogcheck.scenario.traits import TRAITS, unknown_trait
from tests.scenario.test_load import MINIMAL, error, load

KNOWN = ", ".join(TRAITS)


def test_fields_are_read_as_given(tmp_path):
    scenario = load(
        tmp_path,
        MINIMAL
        + "  persona: A retired teacher, patient, not good with apps.\n"
        + "  known_info: Card ends in 4821.\n"
        + "  unknown_info: The PIN.\n"
        + "  user_instructions: Insist on a replacement; accept a fee only if asked twice.\n"
        + "  personas: [impatient, non_native]\n",
    )
    assert scenario.user == UserProfile(
        "A retired teacher, patient, not good with apps.", "Card ends in 4821.", "The PIN.", "Insist on a replacement; accept a fee only if asked twice."
    )
    assert scenario.personas == ("impatient", "non_native")
    assert scenario.user.given() == {
        "persona": "A retired teacher, patient, not good with apps.",
        "known_info": "Card ends in 4821.",
        "unknown_info": "The PIN.",
        "user_instructions": "Insist on a replacement; accept a fee only if asked twice.",
    }


def test_a_mantle_scenario_has_none(tmp_path):
    scenario = load(tmp_path, MINIMAL)
    assert scenario.user == UserProfile() and scenario.user.given() == {} and scenario.personas == ()


def test_each_mistake_is_named_at_its_place(tmp_path):
    text = MINIMAL + "  persona: 12\n  known_info: ''\n  unknown_info: [a]\n  personas: [terse, impatiant, terse, 3]\n"
    assert error(tmp_path, text) == "\n".join(
        [
            "s.yml:4:12: `persona` in `scenario` must be a string, got an integer",
            "s.yml:5:15: `known_info` in `scenario` must not be empty",
            "s.yml:6:17: `unknown_info` in `scenario` must be a string, got a list",
            "s.yml:7:39: item 4 of `personas` in `scenario` must be a non-empty string, got an integer",
            f"s.yml:7:21: unknown persona trait 'impatiant' (did you mean `impatient`?); known: {KNOWN} (in `personas` of `scenario`)",
            "s.yml:7:32: `personas` in `scenario` names the trait 'terse' twice",
        ]
    )


def test_personas_must_be_a_non_empty_list(tmp_path):
    assert error(tmp_path, MINIMAL + "  personas: terse\n") == "s.yml:4:13: `personas` in `scenario` must be a list, got a string"
    assert error(tmp_path, MINIMAL + "  personas: []\n") == "s.yml:4:13: `personas` in `scenario` must hold at least one item, got 0"


def test_a_misspelt_field_gets_the_nearest_one(tmp_path):
    assert error(tmp_path, MINIMAL + "  known_infos: x\n").startswith("s.yml:4:3: unknown field `known_infos` in `scenario` (did you mean `known_info`?)")


def test_every_trait_is_a_short_instruction():
    assert {"impatient", "confused", "terse", "verbose", "non_native", "skeptical", "adversarial"} <= set(TRAITS)
    for name, text in TRAITS.items():
        assert unknown_trait(name) is None
        assert 40 < len(text) < 400 and text.endswith(".") and "{" not in text, name
    assert unknown_trait("Terse") == f"unknown persona trait 'Terse' (did you mean `terse`?); known: {KNOWN}"
