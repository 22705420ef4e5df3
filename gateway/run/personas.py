"""Building a run's persona driver, and the log-backed model client that makes an LLM persona
resumable: every model response is logged (`persona_llm`); on resume the logged responses are
replayed, in order, before the live model is called again — so the persona's context is
rebuilt exactly, with no lost or doubled turn.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from gateway.log.events import Event, PersonaTurn
from gateway.run.setting_keys import persona_key_problems
from persona.benchmark.ladder import without_distractors
from persona.benchmark.model import Benchmark
from persona.drivers.give_up import GiveUp
from persona.drivers.ladder import LadderDriver
from persona.drivers.llm import LLMPersonaDriver
from persona.drivers.persona_compaction import Compaction
from persona.drivers.protocol import PersonaDriver
from persona.drivers.scripted import ScriptedDriver
from persona.grading.judge import Judge, LLMJudge
from persona.llm.select import make_client
from persona.llm.types import LLMClient, LLMRequest, LLMResponse, probe
from persona.phrases import phrases_for

type Log = Callable[[Event], Event]


class LoggedClient:
    """Replays `replay` responses first, then calls `inner` and logs each live response."""

    def __init__(self, inner: LLMClient, log: Log, replay: list[dict[str, Any]] | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self._log = log
        self._replay = deque(replay or [])
        self.replayed = 0
        self.last_replayed = False  # the last response came from the log, not the model

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.last_replayed = bool(self._replay)
        if self._replay:
            self.replayed += 1
            return LLMResponse.from_record(self._replay.popleft())
        response = await self.inner.complete(request)
        self._log(PersonaTurn(client=self.name, response=response.to_record()))
        return response

    async def probe(self) -> int | None:
        return await probe(self.inner)

    async def close(self) -> None:
        await self.inner.close()


def driver_name(settings: dict[str, Any]) -> str:
    return str(settings.get("driver", "scripted"))


def build_driver(
    settings: dict[str, Any], benchmark: Benchmark, log: Log, replay: list[dict[str, Any]] | None = None
) -> PersonaDriver:
    """`driver`: scripted | anthropic:MODEL | openai:URL#MODEL | replay (`from`: a run). LLM settings: `base_url`,
    `api_key_env`, `temperature` (default: 0.2 for OpenAI-compatible endpoints, the provider's
    default for Anthropic, whose current API takes none), `compaction: {max_tokens, trim_to_tokens}`,
    `context_tokens` (the model's window: compaction defaults that fit it), `give_up: {repeats,
    idle_messages}` (when a model that can't play is stopped: `persona.drivers.give_up`)."""
    name = driver_name(settings)
    if name == "scripted":
        return ScriptedDriver(
            benchmark,
            facts_per_message=int(settings.get("facts_per_message", 3)),
            judge=_live_judge(settings, log, replay),
        )
    evidence: PersonaDriver
    if name == "replay":  # `marathon replay`: a recorded persona side, on any rung
        from gateway.run.replay import ReplayDriver

        evidence = ReplayDriver(str(settings["from"]), without_distractors(benchmark))
    else:
        evidence = _llm_driver(name, settings, without_distractors(benchmark), log, replay)
    # the LLM (or recorded) persona plays the evidence; the scripted one the rung's distractors
    return LadderDriver(evidence, benchmark) if benchmark.distractors else evidence


def _llm_driver(
    name: str, settings: dict[str, Any], benchmark: Benchmark, log: Log, replay: list[dict[str, Any]] | None
) -> LLMPersonaDriver:
    client = _client(name, settings)
    limits = settings.get("compaction") or benchmark.settings.get("compaction") or {}
    window = settings.get("context_tokens")  # the persona model's window, where the config says it
    default = Compaction.for_window(int(window)) if window else Compaction()
    compaction = Compaction(
        int(limits.get("max_tokens", default.max_tokens)), int(limits.get("trim_to_tokens", default.trim_to_tokens))
    )
    temperature = settings.get("temperature", None if name.startswith("anthropic:") else 0.2)
    driver = LLMPersonaDriver(
        benchmark,
        LoggedClient(client, log, replay),
        compaction=compaction,
        temperature=None if temperature is None else float(temperature),
        give_up=GiveUp.from_settings(settings.get("give_up")),
    )
    driver.window_known = bool(window or settings.get("compaction") or benchmark.settings.get("compaction"))
    driver.window = int(window) if window else None
    return driver


def _judge_settings(settings: dict[str, Any]) -> dict[str, Any]:
    grading = settings.get("grading") or {}
    if not isinstance(grading, dict):
        raise ValueError("persona `grading` must be an object: {judge: anthropic:MODEL | openai:URL#MODEL}")
    return grading


def _live_judge(settings: dict[str, Any], log: Log, replay: list[dict[str, Any]] | None) -> Judge | None:
    """`grading: {judge: SPEC, base_url, api_key_env}`: the judge that decides, live, what the
    exact grader is not sure of. Its responses are logged (`persona_llm`) and replayed on
    resume, as an LLM persona's are, so a resumed run never asks it twice."""
    grading = _judge_settings(settings)
    spec = grading.get("judge")
    return LLMJudge(LoggedClient(_client(str(spec), grading), log, replay)) if spec else None


def _client(spec: str, settings: dict[str, Any]) -> LLMClient:
    """The model client of a persona's or a judge's settings (`base_url`, `api_key_env`)."""
    import os

    key_env = settings.get("api_key_env")
    api_key = os.environ.get(str(key_env)) if key_env else None
    return make_client(spec, base_url=settings.get("base_url"), api_key=api_key)


def _key_problem(spec: str, settings: dict[str, Any], who: str) -> str | None:
    from persona.llm.select import missing_key

    key_env = settings.get("api_key_env")
    return missing_key(spec, str(key_env) if key_env else None, who=who)


def check_persona_settings(settings: dict[str, Any], benchmark: Benchmark) -> None:
    """Raise ValueError for a persona that can't work on `benchmark`, before a run starts."""
    for _, message in persona_key_problems(settings):  # `--persona` given as settings, an experiment's
        raise ValueError(message)
    name = driver_name(settings)
    if name == "replay":
        from gateway.run.replay import ReplayDriver, recorded_log

        source = recorded_log(str(settings.get("from", "")))
        if not source.is_file():
            raise ValueError(f"replay: no run log at {source}")
        ReplayDriver(source, without_distractors(benchmark))  # a recording of another benchmark fails here
        return
    grading = _judge_settings(settings)
    if grading.get("judge") and (problem := _key_problem(str(grading["judge"]), grading, "the judge")):
        raise ValueError(problem)
    if name != "scripted" and (problem := _key_problem(name, settings, "the persona")):
        raise ValueError(problem)
    if name != "scripted":
        GiveUp.from_settings(settings.get("give_up"))  # names the field
        window = settings.get("context_tokens")
        if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 2000):
            raise ValueError("persona `context_tokens` must be the model's window in tokens (at least 2,000)")
    if name == "scripted" or benchmark.rung:  # the scripted words, or a rung's distractor intros
        phrases_for(benchmark.language)  # UnknownLanguage (a ValueError) names the files there are
