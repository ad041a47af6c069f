"""The review of each run's simulated user in the batch runner: suspect runs, retries, scripted users left alone."""

from __future__ import annotations

import asyncio

from dialogcheck.checks.base import Outcome
from dialogcheck.runner.batch import BatchSettings, RunSpec, run_batch
from dialogcheck.runner.review import RunReviewer
from dialogcheck.simulate.review import Prompts
from dialogcheck.simulate.user import ScriptedUser, UserTurn
from tests.runner.test_batch import Agent, scenario

#: A broken simulator's message: the bundled prompt's own words.
BROKEN = "Write your next message. Answer with one JSON object and nothing else"
SOUND = "I want a new card, order please"


class Simulator:
    """An LLM-like user (not a script): says `attempts[n]` on its n-th attempt, then is done."""

    def __init__(self, attempts: list[str]):
        self.attempts, self.made = attempts, 0

    def make(self, scenario):
        said = self.attempts[min(self.made, len(self.attempts) - 1)]
        self.made += 1
        return _Once(said)


class _Once:
    def __init__(self, said: str):
        self.said = said

    async def next_turn(self, transcript: str) -> UserTurn:
        return UserTurn(self.said, True)


def go(tmp_path, make_user, *, retry=1, reviewer=RunReviewer(Prompts.bundled())):
    finished = []
    specs = [RunSpec(scenario(tmp_path), 1)]
    runs = asyncio.run(run_batch(specs, Agent(), make_user, None, BatchSettings(retry_suspect=retry), finished.append, reviewer))
    assert finished == runs  # only the last attempt is handed on
    return runs[0]


def test_a_sound_user_is_reviewed_ok_and_the_checks_decide(tmp_path):
    run = go(tmp_path, Simulator([SOUND]).make)
    assert run.verdict is Outcome.PASS
    assert (run.user_review.verdict, run.user_review.reasons, run.suspect_attempts) == ("ok", (), 0)


def test_a_suspect_run_is_retried_and_the_sound_retry_is_kept(tmp_path):
    simulator = Simulator([BROKEN, SOUND])
    run = go(tmp_path, simulator.make)
    assert simulator.made == 2
    assert run.verdict is Outcome.PASS and run.user_review.verdict == "ok"
    assert run.suspect_attempts == 1
    assert [line.text for line in run.transcript if line.role == "user"] == [SOUND]


def test_a_user_suspect_on_every_attempt_leaves_the_run_suspect_after_the_retries(tmp_path):
    simulator = Simulator([BROKEN])
    run = go(tmp_path, simulator.make, retry=2)
    assert simulator.made == 3
    assert run.verdict is Outcome.SUSPECT and run.suspect_attempts == 3
    assert run.user_review.rules() == ("prompt_wording", "goal_unstated")
    assert run.conversation is not None and run.conversation.verdict is Outcome.FAIL  # judged all the same; not the verdict


def test_no_retry_runs_a_suspect_run_once(tmp_path):
    simulator = Simulator([BROKEN, SOUND])
    run = go(tmp_path, simulator.make, retry=0)
    assert simulator.made == 1 and run.verdict is Outcome.SUSPECT and run.suspect_attempts == 1


def test_a_scripted_user_is_never_reviewed(tmp_path):
    run = go(tmp_path, lambda s: ScriptedUser([BROKEN, "order please"]))
    assert run.user_review is None and run.verdict is Outcome.PASS


def test_without_a_reviewer_nothing_is_reviewed(tmp_path):
    run = go(tmp_path, Simulator([BROKEN]).make, reviewer=None)
    assert run.user_review is None and run.verdict is Outcome.FAIL
