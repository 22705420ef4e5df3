"""The LLM persona, driven by a scripted fake model served over loopback in the exact
Anthropic and OpenAI wire formats, through the official SDKs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.http_server import ServedApp, serve
from fakes.persona_model import FakePersonaModel
from gateway.log.events import (
    Asked,
    Evaluation,
    FactsMarked,
    PersonaSlip,
    PersonaTurn,
    PhaseEntered,
    Replied,
    Said,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.loader import load_benchmark
from persona.drivers.llm import LLMPersonaDriver
from persona.llm.anthropic_client import AnthropicClient
from persona.llm.types import ToolUse
from tests.conftest import DEMO, BenchFactory
from tests.persona.drivers.settings import persona
from tests.run_logs import cut_after


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_demo_en_with_the_llm_persona_completes(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path, kind: str
) -> None:
    model, served = fake
    outcome = await run_spec(
        RunSpec("llm", DEMO, {"adapter": "reference"}, persona(kind, served.url)), tmp_path
    )
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "llm" / EVENTS_FILE)
    graded = [e for e in log.events if isinstance(e, Evaluation)]
    assert len(graded) == 15 and len({e.question_id for e in graded}) == 15
    assert all(e.grader.startswith("llm:") for e in graded)
    assert sum(len(e.fact_ids) for e in log.events if isinstance(e, FactsMarked)) == 40
    assert not [e for e in log.events if isinstance(e, PersonaSlip)]
    report = (tmp_path / "llm" / "report.md").read_text()
    assert "coverage complete" in report
    assert "| persona | " in report and "price unknown for fake-persona" in report  # never a guessed cost
    first = model.requests[0]
    if kind == "anthropic":
        system = first["system"]
        assert system[0]["text"].startswith("# You are a person talking with an AI assistant")
        assert "This scenario is in English (`en`)" in system[0]["text"]  # told, never assumed
        assert any(b["text"].startswith("# Your scenario") and "Maya Keller" in b["text"] for b in system)
        assert any(
            b["text"].startswith("# Your profile") and "1.3 I moved to Lisbon" in b["text"] for b in system
        )
        # four cache breakpoints where a prefix reaches the model's minimum: the last part that
        # never changes (the scenario, not the live profile), the last three messages — the
        # conversation is the bulk of it; none on the tools alone, which reach no minimum
        assert [b.get("cache_control") for b in system] == [None, {"type": "ephemeral"}, None]
        later = model.requests[5]
        marked = [m for m in later["messages"] if any("cache_control" in b for b in m["content"])]
        assert marked == later["messages"][-3:]
        assert [t["name"] for t in first["tools"]] == [
            "next_phase",
            "facts_read",
            "facts_mark_told",
            "facts_get_untold",
            "facts_edit",
            "facts_add",
            "ask_again",
            "log_evaluation",
        ]
        assert not [t for t in first["tools"] if "cache_control" in t]
    else:
        assert len(first["tools"]) == 8 and "# Your scenario" in first["messages"][0]["content"]


async def test_a_killed_llm_persona_run_resumes_without_lost_or_doubled_turns(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    model, served = fake
    spec = RunSpec("llm", DEMO, {"adapter": "reference"}, persona("anthropic", served.url))
    await run_spec(spec, tmp_path)
    path = tmp_path / "llm" / EVENTS_FILE
    full = read_log(path)
    calls_before = len(model.requests)
    cut_after(path, "say", 9)
    kept = read_log(path)
    outcome = await run_spec(spec, tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED and outcome.resumed
    log = read_log(path)
    assert len([e for e in log.events if isinstance(e, Evaluation)]) == 15
    replies = [e.text for e in log.events if isinstance(e, Replied)]
    assert (
        len(replies) == len([e for e in full.events if isinstance(e, Replied)]) + 0
    )  # same conversation length
    # the persona's logged model turns were replayed, not asked again
    replayed = len([e for e in kept.events if isinstance(e, PersonaTurn)])
    assert (
        len(model.requests) - calls_before
        == len([e for e in full.events if isinstance(e, PersonaTurn)]) - replayed
    )


async def test_persona_compaction_cuts_at_a_phase_and_keeps_the_profile(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    model, served = fake
    settings = persona("anthropic", served.url, compaction={"max_tokens": 2500, "trim_to_tokens": 800})
    outcome = await run_spec(RunSpec("small", DEMO, {"adapter": "reference"}, settings), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    trimmed = [r for r in model.requests if "was trimmed" in json.dumps(r["messages"][0])]
    assert trimmed, "the persona's context was never trimmed"
    first = trimmed[0]["messages"][0]["content"][0]["text"]
    assert "Your profile, current values:" in first and "1.1 My name is Maya Keller" in first
    assert "Phase " in first  # the cut is at a phase boundary: the phase's text comes along
    assert all(len(json.dumps(r["messages"])) // 4 <= 2500 + 2000 for r in model.requests)


def offline_driver(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> LLMPersonaDriver:
    """A driver on the tiny benchmark whose tools are exercised directly (no model call made)."""
    return LLMPersonaDriver(
        load_benchmark(make_benchmark()), AnthropicClient("m", base_url=fake[1].url, api_key="k")
    )


async def tool(driver: LLMPersonaDriver, name: str, **args: object) -> tuple[str, bool]:
    result = driver._run_tool(ToolUse("t", name, dict(args)))
    return str(result["content"]), bool(result["is_error"])


async def test_next_phase_refuses_until_the_phase_is_done(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    driver = offline_driver(make_benchmark, fake)
    driver._enter(0)
    text, error = await tool(driver, "next_phase")
    assert error and "2 facts of profile are not marked told yet (1.1, 1.2)" in text
    driver._send("My name is Ada and I am 36. I live in Porto.")
    await tool(driver, "facts_read", file="profile")
    driver._send("My name is Ada and I am 36. I live in Porto.")
    assert (await tool(driver, "facts_mark_told", file="profile", ids=["1.1", "1.2"]))[1] is False
    text, error = await tool(driver, "next_phase")
    assert not error and text.startswith("Phase 2 of 3: Pets")
    await driver.client.close()


async def test_bad_tool_input_is_a_tool_error_never_an_exception(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    driver = offline_driver(make_benchmark, fake)
    driver._enter(2)
    assert (await tool(driver, "facts_read", file="hobbies"))[1]
    assert (await tool(driver, "facts_mark_told", file="pets", ids="1.1"))[1]
    assert (await tool(driver, "facts_edit", file="pets", id="9.9", text="x"))[1]
    assert (
        "has not been asked"
        in (await tool(driver, "log_evaluation", question_id="q1", score=10, comment=""))[0]
    )
    driver._send("What is my cat called?")
    assert "outside 0–10" in (await tool(driver, "log_evaluation", question_id="q1", score=11, comment=""))[0]
    assert (
        "must be a number"
        in (await tool(driver, "log_evaluation", question_id="q1", score="ten", comment=""))[0]
    )
    assert (await tool(driver, "no_such_tool"))[1]
    assert (await tool(driver, "facts_add", file="pets", section="1", text="Miso likes boxes"))[
        0
    ] == "Added pets 1.4."
    await driver.client.close()


async def test_a_fact_marked_told_but_never_said_is_a_slip(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    driver = offline_driver(make_benchmark, fake)
    driver._enter(1)
    await tool(driver, "facts_read", file="pets")
    driver._send("I have a cat called Miso.")
    await tool(driver, "facts_mark_told", file="pets", ids=["1.1", "1.2"])
    slips = [a for a in driver.queue if type(a).__name__ == "Slip"]
    assert len(slips) == 1 and "pets:1.2" in slips[0].detail and "4" in slips[0].detail  # type: ignore[attr-defined]
    await driver.client.close()


async def test_a_second_attempt_is_the_personas_decision_and_weighted_by_the_engine(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    from persona.drivers.actions import AgentReply, Evaluate, Say

    driver = offline_driver(make_benchmark, fake)
    driver._enter(2)
    driver.queue.clear()
    assert "has not been asked" in (await tool(driver, "ask_again", question_id="q1", message="Look again?"))[0]
    driver._send("What is my cat called?")
    driver._take_reply(AgentReply("Hmm, that doesn't ring a bell."))  # no regex needs to know this
    await tool(driver, "ask_again", question_id="q1", message="Could you search your memory?")
    nudge = next(a for a in driver.queue if isinstance(a, Say) and a.purpose == "nudge")
    assert (nudge.text, nudge.question_id) == ("Could you search your memory?", "q1")
    assert "already asked again" in (await tool(driver, "ask_again", question_id="q1", message="Again?"))[0]
    driver._take_reply(AgentReply("Found it: Miso."))
    await tool(driver, "log_evaluation", question_id="q1", score=10, comment="right on retry")
    evaluation = next(a for a in driver.queue if isinstance(a, Evaluate))
    assert (evaluation.score, evaluation.attempts, evaluation.answer) == (5.0, 2, "Found it: Miso.")
    await driver.client.close()


async def test_without_ask_again_a_follow_up_is_no_second_attempt(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    """A "you never told me" the persona chose not to treat as one is graded as the first
    answer: the ×0.5 follows the persona's decision, not a pattern in the reply."""
    from persona.drivers.actions import AgentReply, Evaluate

    driver = offline_driver(make_benchmark, fake)
    driver._enter(2)
    driver.queue.clear()
    driver._send("What is my cat called?")
    driver._take_reply(AgentReply("You never told me about a cat."))
    driver._send("Oh well, never mind.")
    await tool(driver, "log_evaluation", question_id="q1", score=0, comment="did not know")
    evaluation = next(a for a in driver.queue if isinstance(a, Evaluate))
    assert (evaluation.attempts, evaluation.answer) == (1, "You never told me about a cat.")
    await driver.client.close()


async def test_a_correct_abstention_then_the_nudge_the_model_sends_is_not_halved(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    """A real model may still nudge after "you never told me" on an [abstain] question; that
    answer was already right, so the engine does not count a second attempt."""
    from persona.drivers.actions import AgentReply, Evaluate

    driver = offline_driver(make_benchmark, fake)
    driver._enter(2)
    driver.queue.clear()
    driver._send("What is my dog called?")
    driver._take_reply(AgentReply("You never told me about a dog."))
    driver._send("Could you search your memory?")
    driver._take_reply(AgentReply("I searched: you never told me about a dog."))
    await tool(driver, "log_evaluation", question_id="q3", score=10, comment="correct abstention")
    evaluation = next(a for a in driver.queue if isinstance(a, Evaluate))
    assert (evaluation.score, evaluation.attempts) == (10.0, 1)
    await driver.client.close()


def test_an_llm_persona_run_killed_with_sigkill_resumes(tmp_path: Path) -> None:
    """The runner in its own process, the fake persona model served from a thread here."""
    import asyncio
    import os
    import signal
    import subprocess
    import sys
    import threading

    from gateway.log.events import Asked
    from tests.conftest import REPO
    from tests.marathon_cli import count_records

    model = FakePersonaModel()
    ready = threading.Event()
    box: dict[str, object] = {}

    def host() -> None:
        loop = asyncio.new_event_loop()
        served = loop.run_until_complete(serve(model.app()))
        box.update(url=served.url, loop=loop, served=served)
        ready.set()
        loop.run_forever()
        loop.run_until_complete(served.stop())

    thread = threading.Thread(target=host, daemon=True)
    thread.start()
    ready.wait(10)
    config = tmp_path / "config.jsonc"
    config.write_text(
        f"{{runs: [{{id: 'llm', benchmark: '{DEMO}', agent: {{adapter: 'reference'}}, "
        f"persona: {{driver: 'anthropic:fake-persona', base_url: '{box['url']}'}}}}]}}"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "ANTHROPIC_API_KEY": "test-key"}
    command = [sys.executable, "-m", "gateway.cli", "run", str(config)]
    log_path = tmp_path / "recordings" / "llm" / EVENTS_FILE
    try:
        proc = subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        while count_records(log_path) < 400 and proc.poll() is None:
            pass
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        assert count_records(log_path) >= 400, "the run ended before the kill point"
        again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    finally:
        loop = box["loop"]
        assert isinstance(loop, asyncio.AbstractEventLoop)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    assert again.returncode == 0, again.stderr
    assert "[llm] completed: mean" in again.stdout and "graded 15/15, coverage complete" in again.stdout
    log = read_log(log_path)
    evaluations = [e.question_id for e in log.events if isinstance(e, Evaluation)]
    assert sorted(evaluations) == sorted(set(evaluations)) and len(evaluations) == 15
    asked = [e for e in log.events if isinstance(e, Asked) and not e.resent]
    assert len({e.question_id for e in asked}) == len(asked) == 15


async def test_a_question_sharing_words_with_an_earlier_one_is_still_itself(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    from persona.drivers.actions import Ask

    exam = (
        "## Exam\n"
        "❓ w1 When is Harriet's wedding? Correct answer: 14 June\n"
        "❓ w2 What role do I have at Harriet's wedding? Correct answer: maid of honour\n"
    )
    driver = offline_driver(lambda: make_benchmark(ch2__md=exam), fake)
    driver._enter(2)
    driver.queue.clear()
    driver._send("When is Harriet's wedding?")
    driver._send("What role do I have at Harriet's wedding?")
    assert [a.question_id for a in driver.queue if isinstance(a, Ask)] == ["w1", "w2"]
    await driver.client.close()


async def test_on_a_rung_the_llm_persona_plays_the_evidence_and_the_scripted_one_the_distractors(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    from gateway.report.recordings import load_run

    _, served = fake
    runs = {}
    for rung in ("s0", "s2"):
        spec = RunSpec(f"llm-{rung}", DEMO, {"adapter": "reference"}, persona("anthropic", served.url), rung)
        assert (await run_spec(spec, tmp_path)).reason == TerminationReason.COMPLETED
        runs[rung] = load_run(tmp_path / f"llm-{rung}")
    s2 = runs["s2"]
    distractors = [e for e in s2.log.events if isinstance(e, Said) and e.purpose == "distractor"]
    assert len({e.text.splitlines()[0] for e in distractors}) == 8  # one topic per distractor session
    phases = [e.index for e in s2.log.events if isinstance(e, PhaseEntered)]
    assert phases == list(range(len(s2.benchmark.phases)))
    assert s2.summary.coverage_complete and len(s2.summary.evaluations) == 15
    # the fake persona model is deterministic: the evidence it states is the same on both rungs
    assert runs["s0"].evidence_hash == s2.evidence_hash


async def test_an_llm_persona_run_cut_inside_a_distractor_session_resumes_the_same(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    from gateway.log.runlog import iter_records

    _, served = fake
    spec = RunSpec("llm", DEMO, {"adapter": "reference"}, persona("anthropic", served.url), "s1")
    await run_spec(spec, tmp_path)
    path = tmp_path / "llm" / EVENTS_FILE

    def said(p: Path) -> list[str]:
        return [e.text for e in read_log(p).events if isinstance(e, Said | Asked) and not e.resent]

    full = said(path)
    distractors = [
        end for end, r in iter_records(path) if r.get("t") == "say" and r.get("purpose") == "distractor"
    ]
    with open(path, "r+b") as f:  # a crash in the middle of the second distractor session
        f.truncate(distractors[len(distractors) // 2])
    outcome = await run_spec(spec, tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED and outcome.resumed
    assert said(path) == full
    graded = [e.question_id for e in read_log(path).events if isinstance(e, Evaluation)]
    assert sorted(graded) == sorted(set(graded)) and len(graded) == 15


async def test_a_facts_file_reads_as_written_with_its_section_headings(
    make_benchmark: BenchFactory, fake: tuple[FakePersonaModel, ServedApp]
) -> None:
    """So the persona tells facts in context, and `facts_add` can name the right section."""
    driver = offline_driver(make_benchmark, fake)
    await tool(driver, "facts_add", file="pets", section="1", text="Miso sleeps on the radiator")
    text, _ = await tool(driver, "facts_read", file="pets")
    assert text.splitlines() == [
        "# Pets",
        "## 1. Cat",
        "1.1 My cat is called Miso",
        "1.2 Miso is 4 years old",
        "1.3 Miso eats tuna",
        "1.4 Miso sleeps on the radiator",
    ]
    await driver.client.close()


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_a_grade_and_the_next_question_in_one_response_are_one_model_call(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path, kind: str
) -> None:
    """A text beside tool calls was dropped from the chat, so each grade cost a round trip
    more: now the tools run and the text is the next message. The same run, the same grades,
    a model call fewer for each grade followed by a question (13 in the demo's exam)."""
    model, served = fake
    runs = {}
    for combine in (False, True):
        model.combine, model.requests[:] = combine, []
        outcome = await run_spec(
            RunSpec(f"c{combine}", DEMO, {"adapter": "reference"}, persona(kind, served.url)), tmp_path
        )
        assert outcome.reason == TerminationReason.COMPLETED
        log = read_log(tmp_path / f"c{combine}" / EVENTS_FILE)
        runs[combine] = (
            len(model.requests),
            [e.text for e in log.events if isinstance(e, Asked)],
            {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)},
        )
    (plain_calls, plain_asked, plain_scores), (calls, asked, scores) = runs[False], runs[True]
    assert asked == plain_asked and scores == plain_scores and len(scores) == 15
    assert plain_calls - calls >= 13, (plain_calls, calls)
