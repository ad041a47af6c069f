"""An optional check against a real model server; skipped unless one is named in the environment.

Run it with a local OpenAI-compatible server (Ollama, vLLM, llama.cpp; docs/llm-judge.md's "Trying the judge on a real
model" serves SmolLM2-135M with llama-cpp-python):

    DIALOGCHECK_TEST_LLM_BASE_URL=http://localhost:11434/v1 DIALOGCHECK_TEST_LLM_MODEL=qwen3 \\
        .venv/bin/python -m pytest tests/llm/test_real_model.py

The first test wants a model that can judge; the end-to-end test wants only one that answers (a model as small
as SmolLM2-135M judges badly, and that is what calibration is for): whatever it says, every criterion comes out
pass, fail or a judge error that says why, never a crash, and a calibration is written.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dialogcheck.checks.judged import JudgeRequest
from dialogcheck.config import LLMSettings
from dialogcheck.events import load_conversation
from dialogcheck.judge.chat_judge import ChatJudge
from dialogcheck.llm.factory import make_client
from tests.conftest import EXAMPLE

BASE_URL = os.environ.get("DIALOGCHECK_TEST_LLM_BASE_URL")
MODEL = os.environ.get("DIALOGCHECK_TEST_LLM_MODEL")

pytestmark = pytest.mark.skipif(not (BASE_URL and MODEL), reason="set DIALOGCHECK_TEST_LLM_BASE_URL and _MODEL")


@pytest.fixture(autouse=True)
def _clean_env():
    """The loopback fixtures of this folder clear proxy and key variables; a real server needs none cleared."""


def test_a_real_model_judges_an_obvious_criterion():
    settings = LLMSettings(provider="openai_compatible", model=MODEL, base_url=BASE_URL, timeout=120, options={"temperature": 0})
    judge = ChatJudge(make_client(settings, cache=None, max_in_flight=1), settings)
    conversation = load_conversation(EXAMPLE / "conversations" / "damaged_card_express.jsonl")
    holds = asyncio.run(judge.judge(conversation, JudgeRequest("The agent ordered a replacement card")))
    fails = asyncio.run(judge.judge(conversation, JudgeRequest("The agent transferred money to another account")))
    assert (holds.passed, fails.passed) == (True, False), (holds.reasoning, fails.reasoning)


def test_check_and_calibrate_end_to_end_against_the_real_server(tmp_path):
    conversations = EXAMPLE / "conversations"
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(
        f"evaluation:\n  llm: {{provider: openai_compatible, base_url: '{BASE_URL}', model: '{MODEL}', timeout: 300, max_retries: 1, temperature: 0}}\n"
    )
    (tmp_path / "eval" / "scenarios" / "card.yml").write_text(
        "scenario:\n  name: Card\n  simulation_context: You want a new card.\n  goals:\n"
        "    criteria: [The agent ordered a replacement card]\n"
    )
    labels = [("damaged_card_express.jsonl", "pass"), ("transfer_tracker.json", "fail")]
    (tmp_path / "labels.jsonl").write_text("".join(
        json.dumps({"source": str(conversations / name), "criterion": "The agent ordered a replacement card", "label": label}) + "\n"
        for name, label in labels
    ))
    command = Path(sys.executable).parent / "dialogcheck"
    checked = subprocess.run(
        [command, "check", "--format", "json", "--scenario", "eval/scenarios/card.yml", *(str(conversations / n) for n, _ in labels)],
        capture_output=True, text=True, cwd=tmp_path, timeout=1800,
    )
    assert checked.returncode in (0, 1, 3), checked.stderr
    for conversation in json.loads(checked.stdout)["conversations"]:
        (criterion,) = conversation["criteria"]
        assert criterion["outcome"] in ("pass", "fail", "error") and criterion["detail"], criterion
    calibrated = subprocess.run(
        [command, "calibrate", "--format", "json", "--scenario", "eval/scenarios/card.yml", "--labels", "labels.jsonl"],
        capture_output=True, text=True, cwd=tmp_path, timeout=1800,
    )
    assert calibrated.returncode == 0, calibrated.stderr
    document = json.loads(calibrated.stdout)
    assert document["pairs"] == 2 and Path(document["calibration_file"]).is_file()
