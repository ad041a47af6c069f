"""The built-in persona traits: short instructions a simulated user plays on top of its scenario's brief.

`--persona TRAIT` on `dialogcheck run`, or `personas: [...]` in a scenario,
runs the scenario once per trait (a matrix), so an agent is tried against an
impatient, a confused or a terse customer with the same goal. The texts are
data, kept here beside the scenario fields that name them: the scenario
loader checks a name, the simulated user's prompt shows the text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import did_you_mean

#: Each trait's instruction to the simulated user, by the name scenarios and `--persona` use.
TRAITS: dict[str, str] = {
    "impatient": (
        "You are in a hurry and short on patience. You want the answer now: if the agent asks more than one"
        " question at a time, repeats itself or stalls, say that you are in a hurry, and push to get to the point."
    ),
    "confused": (
        "You are not sure how things work and easily get lost. You misread some questions, ask what a word means,"
        " and sometimes answer a different question than the one asked, until the agent makes it clear."
    ),
    "terse": (
        "You write as little as possible: a few words a message, no greetings, no full sentences."
        " You answer exactly what is asked and volunteer nothing."
    ),
    "verbose": (
        "You write long, chatty messages: you explain your situation at length, add details that do not matter,"
        " and tell small stories around the facts the agent needs."
    ),
    "non_native": (
        "The language of the chat is not your first language. You write simple sentences with some grammar"
        " mistakes and unusual word choices, and you sometimes ask the agent to say something more simply."
    ),
    "skeptical": (
        "You do not take the agent's word for things. You question its answers, ask how it knows, and want"
        " confirmation before you agree to anything."
    ),
    "adversarial": (
        "You push against the agent's limits: you ask for things outside its rules, insist after a refusal,"
        " and try to talk it into exceptions, while keeping to the goal of your brief."
    ),
    "polite": (
        "You are very polite and patient: you thank the agent often, apologise for bothering it,"
        " and accept its answers without arguing."
    ),
    "frustrated": (
        "You already tried to solve this before and it did not work, so you are annoyed. You say so,"
        " and you are quick to ask for a human if the agent does not help fast."
    ),
}


def unknown_trait(name: str) -> str | None:
    """Why `name` is not a trait (with the nearest one and the list), or None when it is one."""
    if name in TRAITS:
        return None
    return f"unknown persona trait {name!r}{did_you_mean(name, TRAITS)}; known: {', '.join(TRAITS)}"


def trait_list_problems(names: Sequence[str]) -> list[str]:
    """What is wrong with trait names given at once (`--persona`, the library's `personas`): each unknown one,
    and one named twice."""
    problems = [why for name in names if (why := unknown_trait(name)) is not None]
    if len(set(names)) != len(names):
        problems.append("a trait is named twice")
    return problems
