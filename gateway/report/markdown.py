"""Per-run reports (design §7): `render_markdown()` shows a run's summary
(`gateway.report.summary`). The report of a run lands in `<run>/report.md`, and an entry is
appended to the recordings' `report.md` every time a run ends — failed and interrupted ones
too. A run whose agent ran on the offline stand-in says so at the top, because its scores
measure the platform, not a model.
"""


from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from gateway.display import safe_text
from gateway.log.runlog import RunLog
from gateway.log.vocabulary import ErrorKind
from gateway.report.autopsy import autopsy
from gateway.report.autopsy_render import render_autopsy_section
from gateway.report.deletion_scope import check_scope, render_scope, state_folder
from gateway.report.recordings import RecordedRun
from gateway.report.state import run_state
from gateway.report.summary import RunSummary, mean_range, summarize
from gateway.whole_file import write_whole
from persona.benchmark.model import Benchmark
from persona.outcome import PassRule, is_correct, is_full, passed


def _span(bounds: list[tuple[float, float]]) -> str:
    """A mean over grades' bounds: one figure when every grade is sure, else the range."""
    low, high = mean_range(bounds) or (0.0, 0.0)
    return f"{low:.2f}" if low == high else f"{low:.2f}–{high:.2f} (unresolved: {sum(a != b for a, b in bounds)})"


def _indented(text: str) -> str:
    """An agent's multi-line answer inside a list item: its later lines indented, so none of
    them starts a line of the report (a heading, a fake summary line)."""
    return "\n  ".join(line.rstrip() for line in text.splitlines())


def _early(count: int) -> str:
    """Say how many starts stopped before the agent was up — the log has no RunStart for them."""
    return f" ({count} stopped before the agent was up)" if count else ""


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}"


def render_markdown(s: RunSummary) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started))
    out = [f"## {when} — {s.run_id}: {s.benchmark} @ {s.agent_model}", ""]
    if s.stand_in:
        out += [
            "> **Offline stand-in.** The agent's model in this run is the rule-based stand-in, not an "
            "LLM: these scores exercise the platform end to end and say nothing about any real model.",
            "",
        ]
    for lost in [e for e in s.runner_errors if e.kind == ErrorKind.AGENT_STATE_LOST][:1]:
        out += [f"> **The agent's state was lost mid-run.** {_short(lost.message, 400)}", ""]
    sure = [e for e in s.evaluations.values() if e.certain]  # an unresolved grade's score is a guess
    first_try = [e for e in sure if is_correct(PassRule.FIRST_TRY, e.score, e.attempts)]
    nudged = [e for e in sure if e.attempts == 2]
    after_nudge = sum(1 for e in nudged if passed(e.score))
    if s.inherited:
        out += [f"- {s.inherited}"]
    out += [
        f"- status: {s.status}; persona: {s.persona}; starts: {s.starts}{_early(s.starts_before_agent)}; "
        f"re-sent after a stop (a crash or Ctrl-C): {s.resent}",
        f"- run time: {s.active_seconds:.1f} s; phases: {s.phases_entered}/{s.phases_planned}",
        (
            f"- **mean score: {_fmt(s.mean)} / 10** over {len(s.evaluations)} graded questions"
            if not s.unresolved
            else f"- **mean score: between {_fmt((s.mean_range or (0, 0))[0])} and {_fmt((s.mean_range or (0, 0))[1])} / 10** "
            f"over {len(s.evaluations)} graded questions — {len(s.unresolved)} unresolved (the grader was not "
            f"sure): {', '.join(e.question_id for e in s.unresolved)}; the range is each of them at its least … "
            "at its most (wrong … right, or the two tries' grades where the retry rule's reading was unsure). "
            f"Resolve them with `marathon rescore RUN --grader anthropic:MODEL` (or `openai:URL#MODEL`)"
        ),
        f"- first-try accuracy: {len(first_try)}/{len(sure)}; post-nudge accuracy: {after_nudge}/{len(nudged)} "
        "(the mean above blends them, a retry counting ×0.5"
        + (f"; the {len(s.unresolved)} unresolved left out)" if s.unresolved else ")"),
        "",
        "### Score distribution",
        "",
        "| score | questions |",
        "|---|---|",
    ]
    buckets = Counter(int(min(10, max(0, e.score))) for e in sure)
    out += [f"| {b} | {buckets[b]} |" for b in range(10, -1, -1) if buckets[b]]
    if s.unresolved:
        out.append(f"| unresolved | {len(s.unresolved)} |")
    if s.by_tag:
        out += ["", "### By tag", "", "| tag | questions | mean |", "|---|---|---|"]
        out += [f"| {tag} | {len(v)} | {_span(v)} |" for tag, v in sorted(s.by_tag.items())]
    out += ["", "### Coverage audit", ""]
    out.append(
        f"- questions graded: {len(s.evaluations)}/{len(s.planned)}"
        + ("" if not s.ungraded else f"; not graded: {', '.join(q.id for q in s.ungraded)}")
    )
    if s.graded_twice:
        out.append(f"- graded more than once (a bug): {', '.join(s.graded_twice)}")
    told_required = len(s.required_facts) - len(s.untold_required)
    out.append(
        f"- required facts told: {told_required}/{len(s.required_facts)}"
        + ("" if not s.untold_required else f"; untold: {', '.join(s.untold_required[:20])}")
    )
    if s.unplayed_prose:
        out.append(
            f"- phases of prose only, not played by the scripted persona: {', '.join(s.unplayed_prose)}"
        )
    out.append(f"- coverage {'complete' if s.coverage_complete else 'INCOMPLETE'}")
    out += ["", *_traffic_section(s)]
    out += ["", "### Tokens and cost", "", "| role | usage and cost |", "|---|---|"]
    out += [f"| {role} | {cost.describe()} |" for role, cost in s.costs.items()]
    if s.slips:
        out += ["", f"### Persona slips: {len(s.slips)}", ""]
        out += [f"- {slip.kind}: {slip.detail}" for slip in s.slips]
    if s.unscored_persona:
        out += [
            "",
            f"### Unscored (persona): {len(s.unscored_persona)} — left out of the scores, not forgotten",
            "",
        ]
        out += [f"- {qid}: {why}" for qid, why in sorted(s.unscored_persona.items())]
    if s.log_damage:
        out += ["", f"**Log:** {s.log_damage}; the figures above stop there."]
    out += [line for note in s.log_notes for line in ("", f"**Log read:** {note}.")]
    if s.invalid:
        out += [
            "",
            f"### Records skipped as invalid: {len(s.invalid)} (the figures above leave them out)",
            "",
        ]
        out += [f"- record {e.seq}: {e.problem}" for e in s.invalid]
    if s.late_replies:
        out += [
            "",
            f"### Late replies: {len(s.late_replies)} (each kept with its own message, never graded)",
            "",
        ]
        out += [f"- to {_short(r.answers)!r}: {_short(r.text)!r}" for r in s.late_replies]
    if s.initiated:
        out += ["", f"### Messages the agent sent on its own: {len(s.initiated)} (never graded)", ""]
        out += [f"- {_short(m.text)!r} ({m.why})" for m in s.initiated]
    if s.agent_errors or s.runner_errors:
        out += ["", "### Errors (apart from memory failures)", ""]
        # an error's message may quote what the agent sent: one line each, never a line of its own
        out += [f"- {e.source} {e.kind}: {' '.join(e.message.split())}" for e in s.agent_errors]
        out += [f"- runner {e.kind}: {' '.join(e.message.split())}" for e in s.runner_errors]
    imperfect = [
        (q, s.evaluations[q.id])
        for q in s.planned
        if q.id in s.evaluations and not is_full(s.evaluations[q.id].score)
    ]
    if imperfect:
        out += ["", "### Imperfect answers", ""]
        for q, e in imperfect:
            tags = f" [{', '.join(q.tags)}]" if q.tags else ""
            out += [
                (
                    f"**❓ {q.id}{tags} — {e.score:g}/10**"
                    if e.certain
                    else f"**❓ {q.id}{tags} — unresolved: {e.bounds()[0]:g}…{e.bounds()[1]:g}/10** (best guess {e.score:g})"
                )
                + (" (after a nudge)" if e.attempts == 2 else ""),
                f"- question: {q.text}",
                f"- expected: {q.expected or '(that it was never told)'}",
                *(
                    [f"- first answer: {_indented(s.first_answers[q.id].strip()) or '(none)'}"]
                    if e.attempts == 2 and q.id in s.first_answers
                    else []
                ),
                f"- answer{' after the nudge' if e.attempts == 2 else ''}: {_indented(e.answer.strip()) or '(none)'}",
                f"- grader ({e.grader}): {' '.join(e.reason.split())}",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


def _traffic_section(s: RunSummary) -> list[str]:
    out = ["### The agent's LLM traffic", ""]
    if not s.recorded and s.recorder_url:
        out.append(
            f"Not observable: the recorder listened at {s.recorder_url}, but none of the agent's LLM calls "
            "reached it (its LLM base URL must point there), so its compactions, memory calls and what "
            "was still in its context are **not observable** in this run (this is not a count of zero)."
        )
        return out
    if not s.recorded:
        out.append(
            "Not recorded: the agent's LLM calls did not go through the recorder, so its compactions, "
            "memory calls and what was still in its context are **not observable** in this run "
            "(this is not a count of zero)."
        )
        return out
    t = s.tokens
    out.append(
        f"- LLM calls recorded: {s.exchanges} (input {t['input']:,} tokens, output {t['output']:,}, "
        f"cache read {t['cache_read']:,}, cache write {t['cache_write']:,})"
    )
    out.append(f"- compactions seen: {len(s.compactions)}")
    if s.memory_flushes:
        out.append(
            f"- memory flushes seen: {s.memory_flushes} (the agent's silent turns storing memories before it compacts)"
        )
    for c in s.compactions:
        during = f", during question {c.question_id}" if c.question_id else ""
        out.append(
            f"  - {c.kind}: {c.tokens_before:,} → {c.tokens_after:,} tokens (phase {c.phase + 1}{during})"
        )
    reads = sum(1 for m in s.memory_calls if m.operation == "read")
    own = sum(1 for m in s.memory_calls if m.background)
    out.append(  # calls the model made; one whose tool returned an error stored or found nothing
        f"- memory tool calls: {len(s.memory_calls)} ({reads} read, {len(s.memory_calls) - reads} write), "
        f"{s.memory_failed} of them returned an error"
        + (f"; {own} of them in background calls, charged to no question" if own else "")
    )
    if s.background_calls:
        out.append(
            f"- background calls (the agent's own — heartbeats, reviews of the conversation — recorded, "
            f"never read as the conversation or a compaction): {s.background_calls}"
        )
    out.append("- scores by where the evidence was when asked:")
    for where, scores in s.split().items():
        mean = f"mean {sum(scores) / len(scores):.2f}" if scores else "—"
        out.append(f"  - {where}: {len(scores)} questions, {mean}")
    if s.canary_hits:
        out.append(f"- **revoked canaries back in the agent's input: {len(s.canary_hits)}**")
        for h in s.canary_hits:
            during = f" (question {h.question_id})" if h.question_id else ""
            out.append(f"  - {h.marker!r} in LLM call #{h.exchange}{during}")
    out += ["", "| question | score | memory calls | evidence when asked |", "|---|---|---|---|"]
    for q in s.planned:
        e = s.evaluations.get(q.id)
        score = "—" if e is None else f"{e.score:g}"
        out.append(
            f"| {q.id} | {score} | {s.memory_calls_for(q.id)} | {_evidence_label(q.abstain, s.evidence.get(q.id))} |"
        )
    return out


def _evidence_label(abstain: bool, in_context: bool | None) -> str:
    if abstain:
        return "n/a (abstention)"
    if in_context is None:
        return "not observed"
    return "in context" if in_context else "beyond the boundary"


def add_judge_costs(summary: RunSummary, run_dir: Path) -> None:
    """Judges run after the run (`marathon rescore`); their usage is in `rescore-*.json`."""
    for path in sorted(run_dir.glob("rescore-*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        usage = data.get("usage") or {}
        if usage.get("input") or usage.get("output"):
            model = str(data.get("grader", "")).rsplit(":", 1)[-1].rsplit("#", 1)[-1]
            summary.costs["judge"].add(model, usage, calls=int(data.get("calls", 1)))


def refresh_run_report(log: RunLog, benchmark: Benchmark, run_dir: Path) -> None:
    """Rewrite `<run>/report.md` (after a rescore) as the run's end wrote it — every section,
    the autopsy's too, so `marathon verify` finds it current; the recordings' journal is untouched."""
    write_whole(run_dir / "report.md", safe_text(render_run_report(log, benchmark, run_dir)))


def write_reports(log: RunLog, benchmark: Benchmark, run_dir: Path) -> RunSummary:
    """Write `<run>/report.md` and append the same entry to `<recordings>/report.md`."""
    summary, text = _run_report(log, benchmark, run_dir)
    write_whole(run_dir / "report.md", f"# Run report\n\n{text}")  # whole or absent, if interrupted
    # MarathonMemBench's state.json, as its users know it (`marathon state RUN --json` prints it)
    state = json.dumps(run_state(log, benchmark).to_json(), ensure_ascii=False, indent=1)
    write_whole(run_dir / "state.json", state + "\n")
    with (run_dir.parent / "report.md").open("a", encoding="utf-8") as f:
        f.write(f"\n{text}")
    return summary


def reports_behind(run_dir: Path) -> bool:
    """A run's report.md is missing or older than its log: its process was stopped between the
    log's last record and the report (a finished run skipped on the next command writes it then)."""
    try:
        return (run_dir / "report.md").stat().st_mtime < (run_dir / "events.msgpack").stat().st_mtime
    except FileNotFoundError:
        return True


def render_run_report(log: RunLog, benchmark: Benchmark, run_dir: Path) -> str:
    """`<run>/report.md` as the log renders it now (what `write_reports` writes; `marathon
    verify` compares the file with it)."""
    return f"# Run report\n\n{_run_report(log, benchmark, run_dir)[1]}"


def _run_report(log: RunLog, benchmark: Benchmark, run_dir: Path) -> tuple[RunSummary, str]:
    summary = summarize(log, benchmark)
    add_judge_costs(summary, run_dir)
    text = render_markdown(summary)
    scoped = check_scope(benchmark, log.events, state_folder(log.header.agent, run_dir))
    if scoped is not None:  # what the agent's state folder still holds of what it was asked to forget
        text = text.rstrip() + "\n\n" + "\n".join(render_scope(scoped))
    if summary.evaluations:  # where each wrong answer's fact was lost
        traced = autopsy(RecordedRun(run_dir, log, benchmark, summary))
        text = text.rstrip() + "\n\n" + "\n".join(render_autopsy_section(traced)) + "\n"
    return summary, safe_text(text)  # an agent's answers and errors: shown, never obeyed by a terminal or viewer
