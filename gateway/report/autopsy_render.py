"""The memory autopsy as people read it: the per-question table and stage counts (`marathon
autopsy`), one question's timeline with the records that decided its stage (`--fact`), and
report.md's section. The verdicts themselves are gateway/report/autopsy.py's."""

from __future__ import annotations

from collections import Counter

from gateway.report.autopsy import NoStage, QuestionAutopsy, RunAutopsy, Stage
from gateway.report.operation_figures import operation_figures
from gateway.report.question_order import question_order


def render_autopsy(result: RunAutopsy, stand_in: bool = False, status: str = "") -> str:
    """The per-question table (Markdown) and the stage counts."""
    lines = [f"# Memory autopsy: {result.run_id}", ""]
    if stand_in:
        lines += ["The agent ran on the offline rule-based model stand-in, not an LLM.", ""]
    lines.append(
        "Memory files: "
        + (f"not read — {result.memory_unseen}" if result.memory_unseen else result.memory_read_when)
    )
    if result.memory_not_read:
        lines.append(f"Left unread (what they hold is unsure): {'; '.join(result.memory_not_read[:10])}")
    lines += ["", "| question | fact | expected | score | stage |", "|---|---|---|---|---|"]
    for q in sorted(result.questions, key=lambda q: question_order(q.question_id)):  # q1 before q11
        expected = q.expected.replace("|", "\\|")[:60]
        lines.append(
            f"| {q.question_id} | {', '.join(q.facts) or '—'} | {expected} | {q.score:g} | {q.verdict} |"
        )
    if not result.questions:  # nothing to trace is said, never printed as an empty result
        lines += [
            "",
            f"no graded question to trace: {status or 'the run graded none'} (a run stopped before its exam "
            "is traced once it is resumed; a teaching run's exam is its forks)",
        ]
        return "\n".join(lines) + "\n"
    counts = Counter(str(q.stage) if q.stage else str(q.no_stage) for q in result.questions)
    lines += ["", "stages: " + "; ".join(f"{k} {v}" for k, v in counts.most_common())]
    lines += ["", "operations:", *(f"- {f}" for f in operation_figures([q.links for q in result.questions]))]
    return "\n".join(lines) + "\n"


def render_timeline(q: QuestionAutopsy) -> str:
    """One question's value through the run, step by step (`seq`: the log record, as
    `marathon inspect` numbers them; "end": the memory files after the run)."""
    facts = f" (fact {', '.join(q.facts)})" if q.facts else ""
    lines = [f"{q.question_id}{facts}: expected {q.expected!r} — {q.verdict}"]
    if q.stage is not None and q.stage is not Stage.UNKNOWN:
        lines.append(f"  decided by: {q.evidence}")
    for step in q.steps:
        at = "end" if step.at is None else str(step.at)
        lines.append(f"  {at:>6}  {step.kind:<22} {' '.join(step.detail.split())[:140]}")
    return "\n".join(lines) + "\n"


def render_autopsy_section(result: RunAutopsy) -> list[str]:
    """report.md's section: the wrong answers by stage and the operation figures."""
    wrong = [q for q in result.questions if q.stage is not None]
    stages = Counter(str(q.stage) for q in wrong)
    out = ["### Memory autopsy", ""]
    if wrong:
        listed = "; ".join(f"{stage} {n}" for stage, n in stages.most_common())
        out.append(f"- where the {len(wrong)} wrong answer(s) were lost: {listed}")
    else:
        out.append("- no wrong answer to trace")
    apart = Counter(str(q.no_stage) for q in result.questions if q.no_stage not in (None, NoStage.RIGHT))
    if apart:
        out.append("- answers not right, with no stage: " + "; ".join(f"{why} {n}" for why, n in apart.most_common()))
    if result.memory_unseen:
        out.append(f"- memory files not read: {result.memory_unseen}")
    if result.memory_not_read:  # what they hold is unsure: no stage decided on their absence
        out.append(f"- memory files left unread: {'; '.join(result.memory_not_read[:10])}")
    out += [f"- {figure}" for figure in operation_figures([q.links for q in result.questions])]
    out.append(
        "- each question's timeline (told, written, read, in input, graded): `marathon autopsy RUN --fact ID`"
    )
    return out
