"""What the review reads as the brief: the scenario's fields about the user and the persona trait played, labelled."""

from __future__ import annotations

from dialogcheck.scenario.model import Scenario, UserProfile
from dialogcheck.scenario.traits import TRAITS
from dialogcheck.simulate.review import Prompts, brief_of, review_user
from dialogcheck.simulate.review.model import Line

USER = UserProfile(persona="A retired teacher, polite, not at ease with apps.", unknown_info="Your PIN and your account number.")


def scenario(user: UserProfile = UserProfile()) -> Scenario:
    return Scenario(slug="s", name="S", simulation_context="You want a new card; yours has a cracked chip.", user=user)


def test_the_brief_is_the_context_alone_without_user_fields_or_trait():
    brief = brief_of(scenario())
    assert brief.passages == ("You want a new card; yours has a cracked chip.",)


def test_user_fields_and_the_trait_join_the_brief_labelled():
    brief = brief_of(scenario(USER), "impatient")
    assert brief.extra == (
        "Who you are: A retired teacher, polite, not at ease with apps.",
        "What you do not know and must not invent: Your PIN and your account number.",
        f"How you come across: {TRAITS['impatient']}",
    )


def test_a_user_who_recites_its_trait_is_caught_as_a_brief_copy_only_when_the_trait_is_in_the_brief():
    recited = " ".join(TRAITS["impatient"].split()[:24])
    said = [Line("user", "Hi, I need a new card, my chip is cracked.", 1), Line("agent", "Sure, let me help.", 1), Line("user", recited, 2)]
    prompts = Prompts.bundled()
    with_trait = review_user(said, brief_of(scenario(), "impatient"), prompts)
    assert with_trait.rules() == ("brief_copy",) and with_trait.reasons[0].turn == 2
    assert not review_user(said, brief_of(scenario()), prompts).suspect
