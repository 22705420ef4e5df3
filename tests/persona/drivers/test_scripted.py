"""The scripted persona, driven directly through its `PersonaDriver` interface.

The replies come from small scripted agents written inline (the driver has no transport:
feeding it replies is its whole interface, so no server is needed at this level).
"""

from __future__ import annotations

from collections.abc import Callable

from persona.benchmark.loader import load_benchmark
from persona.drivers.actions import (
    AgentReply,
    Ask,
    EditFact,
    EnterPhase,
    Evaluate,
    Finish,
    NewSession,
    PersonaAction,
    Say,
)
from persona.drivers.scripted import ScriptedDriver
from tests.conftest import BenchFactory

type Agent = Callable[[str], str]


async def play(driver: ScriptedDriver, agent: Agent) -> list[tuple[PersonaAction, str | None]]:
    log: list[tuple[PersonaAction, str | None]] = []
    reply: AgentReply | None = None
    while True:
        action = await driver.next_action(reply)
        reply = None
        if isinstance(action, Finish):
            return log
        if isinstance(action, (Say, Ask)):
            reply = AgentReply(agent(action.text))
        log.append((action, reply.text if reply else None))


def knows_everything(message: str) -> str:
    answers = {"cat called": "Miso", "old is Miso": "Miso is 5", "dog": "You never told me about a dog."}
    return next((a for k, a in answers.items() if k in message), "ok")


async def test_tells_all_required_facts_verbatim_in_batches(make_benchmark: BenchFactory) -> None:
    bench = load_benchmark(make_benchmark())
    events = await play(ScriptedDriver(bench, facts_per_message=2), knows_everything)
    facts = [a for a, _ in events if isinstance(a, Say) and a.purpose == "fact"]
    told = [k for a in facts for k in a.fact_ids]
    assert told == ["profile:1.1", "profile:1.2", "pets:1.1", "pets:1.2", "pets:1.3"]
    assert all(len(a.fact_ids) <= 2 for a in facts)
    assert "My cat is called Miso" in facts[1].text
    phases = [i for i, (a, _) in enumerate(events) if isinstance(a, EnterPhase)]
    pets_start, exam_start = phases[1], phases[2]
    assert all(
        pets_start < i < exam_start
        for i, (a, _) in enumerate(events)
        if isinstance(a, Say) and "pets:1.3" in a.fact_ids
    )


async def test_applies_updates_and_starts_a_new_session(make_benchmark: BenchFactory) -> None:
    bench = load_benchmark(make_benchmark())
    driver = ScriptedDriver(bench)
    events = await play(driver, knows_everything)
    edit = next(a for a, _ in events if isinstance(a, EditFact))
    assert (edit.old, edit.new) == ("Miso is 4 years old", "Miso turned 5 years old")
    assert driver.facts.get("pets", "1.2") == "Miso turned 5 years old"
    assert any(isinstance(a, Say) and a.purpose == "update" and "Miso turned 5" in a.text for a, _ in events)
    assert any(isinstance(a, NewSession) for a, _ in events)
    assert bench.facts["pets"].facts["1.2"].text == "Miso is 4 years old"  # the files never change


async def test_questions_are_asked_verbatim_and_graded(make_benchmark: BenchFactory) -> None:
    events = await play(ScriptedDriver(load_benchmark(make_benchmark())), knows_everything)
    asks = [a for a, _ in events if isinstance(a, Ask)]
    assert [a.text for a in asks] == ["What is my cat called?", "How old is Miso?", "What is my dog called?"]
    scores = {a.question_id: a.score for a, _ in events if isinstance(a, Evaluate)}
    assert scores == {"q1": 10, "q2": 10, "q3": 10}


async def test_retry_rule_nudges_once_and_halves_a_correct_second_answer(
    make_benchmark: BenchFactory,
) -> None:
    def forgetful(message: str) -> str:
        if "search your memory" in message:
            return "Found it: Miso."
        if "cat called" in message:
            return "You never told me about a cat."
        return "I don't know."

    events = await play(ScriptedDriver(load_benchmark(make_benchmark())), forgetful)
    nudges = [a for a, _ in events if isinstance(a, Say) and a.purpose == "nudge"]
    assert [n.question_id for n in nudges] == ["q1", "q2"]  # q3 is an abstention: no nudge
    assert "What is my cat called?" in nudges[0].text
    evals = {a.question_id: a for a, _ in events if isinstance(a, Evaluate)}
    assert (evals["q1"].score, evals["q1"].attempts, evals["q1"].first_score) == (5.0, 2, 0.0)
    assert evals["q2"].score == 0 and evals["q2"].attempts == 2
    assert evals["q3"].score == 10


async def test_a_wrong_answer_without_never_told_gets_no_nudge(make_benchmark: BenchFactory) -> None:
    events = await play(
        ScriptedDriver(load_benchmark(make_benchmark())), lambda m: "Your cat is Tom, aged 9."
    )
    assert not [a for a, _ in events if isinstance(a, Say) and a.purpose == "nudge"]


async def test_agent_errors_score_zero_with_the_reason(make_benchmark: BenchFactory) -> None:
    driver = ScriptedDriver(load_benchmark(make_benchmark()))
    reply: AgentReply | None = None
    evaluations = []
    while not isinstance(action := await driver.next_action(reply), Finish):
        reply = AgentReply("", error="timeout: no reply") if isinstance(action, (Say, Ask)) else None
        if isinstance(action, Evaluate):
            evaluations.append(action)
    assert evaluations and all(
        e.score == 0 and "agent error: timeout" in e.reason for e in evaluations if e.question_id != "q3"
    )


async def test_same_replies_give_the_same_actions(make_benchmark: BenchFactory) -> None:
    bench = load_benchmark(make_benchmark())
    first = await play(ScriptedDriver(bench), knows_everything)
    second = await play(ScriptedDriver(bench), knows_everything)
    assert first == second


async def test_russian_benchmark_uses_russian_phrases() -> None:
    from tests.conftest import ARTICLE_RU

    events = await play(ScriptedDriver(load_benchmark(ARTICLE_RU)), lambda m: "Не знаю")
    first_say = next(a for a, _ in events if isinstance(a, Say))
    assert "запомни" in first_say.text and "Лене 31 год" in first_say.text
    nudge = next(a for a, _ in events if isinstance(a, Say) and a.purpose == "nudge")
    assert nudge.text.startswith("Поищи")


async def test_a_message_that_failed_is_sent_again_and_counts_once_delivered(
    make_benchmark: BenchFactory,
) -> None:
    driver = ScriptedDriver(load_benchmark(make_benchmark()), facts_per_message=5)
    failures = 1
    sent: list[Say | Ask] = []
    reply: AgentReply | None = None
    while not isinstance(action := await driver.next_action(reply), Finish):
        reply = None
        if isinstance(action, (Say, Ask)):
            sent.append(action)
            reply = AgentReply("", error="timeout") if failures else AgentReply("ok")
            failures = max(0, failures - 1)
    assert sent[0] == sent[1]  # the first message, re-sent after its error
    assert "profile:1.1" in driver.facts.told


async def test_facts_that_never_got_through_stay_untold(make_benchmark: BenchFactory) -> None:
    driver = ScriptedDriver(load_benchmark(make_benchmark()))
    reply: AgentReply | None = None
    sends = 0
    while not isinstance(action := await driver.next_action(reply), Finish):
        reply = None
        if isinstance(action, (Say, Ask)):
            sends += 1
            reply = AgentReply("", error="HTTP 500")
    assert not driver.facts.told
    assert sends < 100  # gave up on each message after a few attempts instead of looping


async def test_a_facts_heading_is_never_put_inside_a_sentence_with_its_capital() -> None:
    """`Some things about The flat` read as a slip: the heading stands where its capital fits."""
    from tests.conftest import DEMO

    bench = load_benchmark(DEMO)
    driver = ScriptedDriver(bench)
    played = await play(driver, lambda text: "Noted.")
    intros = [a.text.split("\n", 1)[0] for a, _ in played if isinstance(a, Say) and a.purpose == "fact"]
    titles = set(driver.facts.titles.values())
    assert intros and titles
    for intro in intros:
        title = next(t for t in titles if t in intro)
        before = intro[: intro.index(title)]
        if title[:1].isupper() and title[1:2].islower():  # a capitalised heading: not after a word
            assert not before or before.endswith(("— ", ": ", ". ")), intro


async def test_a_reply_that_only_promises_to_look_gets_go_ahead_once_and_what_follows_is_graded(
    make_benchmark: BenchFactory,
) -> None:
    said: list[str] = []

    def agent(text: str) -> str:
        said.append(text)
        if text.startswith("What is my cat called"):
            return "Let me check my notes — one moment!"
        if text == "Go ahead, I'm waiting.":
            return "Your cat is Miso."
        return "Noted."

    played = await play(ScriptedDriver(load_benchmark(make_benchmark())), agent)
    grade = next(a for a, _ in played if isinstance(a, Evaluate) and a.question_id == "q1")
    assert grade.score == 10 and grade.attempts == 1 and grade.answer == "Your cat is Miso."
    assert said.count("Go ahead, I'm waiting.") == 1
