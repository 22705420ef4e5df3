"""A memory regression gate for CI: a new set of runs against a stored baseline, question by
question (`marathon compare RECORDINGS --baseline FILE --gate [--junit FILE] [--json]`).

The candidate's runs and the baseline's (their run lines, as `compare` reads them) are paired by
identity — task, rung, exam mode, question fork, rollout, repeat and arm (`RunLine.identity`) —
the baseline as A, the candidate as B, and compared by `compare`'s rules. Every line of both
sides is compared or named with the reason it wasn't: one side only, or an identity two runs of
one side share (which to compare can't be told). The gate is exact, for deterministic marathons
(a scripted persona, a fixed seed): a question *regressed* when the baseline answered it right
and the candidate did not. Verdicts:
- `regression` (exit 1): in some question group more questions regressed than `tolerance`;
- `no decision` (exit 3): a line could not be compared, a pair has a side that did not
  complete, two exact graders graded its sides (a rule changed between them: `marathon rescore
  RUN --grader exact` grades a run with today's), or a group without a regression holds grades
  the grader was not sure of — never a pass over them;
- `accept` (exit 0): otherwise.
Each group is one JUnit test case (failed: a regression, its questions in the message).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gateway.report.comparison import Comparison, compare, paired_items
from gateway.report.recordings import load_runs
from gateway.report.run_line import Identity, RunLine, lines_jsonl, run_line
from gateway.report.verdict import Clause, Ruling, Verdict


@dataclass
class GroupGate:
    compared: int = 0
    regressed: list[str] = field(default_factory=list)  # "task.rK:question"
    improved: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


@dataclass
class GateResult:
    ruling: Ruling  # the verdict and its clauses (why), as the decision's
    groups: dict[str, GroupGate]
    comparison: Comparison
    unmatched: list[str]

    @property
    def verdict(self) -> Verdict:
        return self.ruling.verdict

    @property
    def why(self) -> list[str]:
        return [c.text for c in self.ruling.clauses]

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def to_json(self) -> dict[str, Any]:
        c = self.comparison
        return {
            "verdict": self.verdict.value,
            "why": self.why,
            "unmatched": self.unmatched,
            "groups": {
                tag: {
                    "compared": g.compared,
                    "regressed": g.regressed,
                    "improved": g.improved,
                    "unresolved": g.unresolved,
                }
                for tag, g in self.groups.items()
            },
            "comparison": {
                "pairs": c.pairs,
                "clusters": c.clusters,
                "incomplete": c.incomplete,
                "groups": {
                    tag: {
                        "wins_baseline": t.wins_a,
                        "wins_candidate": t.wins_b,
                        "both": t.both,
                        "neither": t.neither,
                    }
                    for tag, t in c.groups.items()
                },
                "tasks": [{"task": t.task, "candidate_minus_baseline": t.repeats} for t in c.tasks],
            },
        }


def lines_of_runs(recordings: Path) -> list[RunLine]:
    """A run line for every run with a benchmark in `recordings`, read whole (`--write-baseline`
    and the candidate's side): task = the config's run id, repeat = its repeat."""
    runs, _cards, _problems = load_runs(recordings, charted=10**9)
    return [
        replace(
            run_line(run),
            task=run.meta.task or run.meta.id or run.summary.run_id,
            repeat=run.meta.repeat,
        )
        for run in runs
    ]


def _by_identity(lines: list[RunLine], side: str) -> tuple[dict[Identity, RunLine], list[str]]:
    """Each identity's one line, and the identities several lines of this side share (named)."""
    found: dict[Identity, list[RunLine]] = defaultdict(list)
    for line in lines:
        found[line.identity].append(line)
    shared = [  # in the identities' order, whatever the lines' order
        f"{ls[0].identity_text} ({side}: {len(ls)} runs share this identity — "
        f"{', '.join(sorted(x.run_id or '?' for x in ls))}; which to compare can't be told)"
        for _, ls in sorted(found.items())
        if len(ls) > 1
    ]
    return {key: ls[0] for key, ls in found.items() if len(ls) == 1}, shared


def as_pairs(baseline: list[RunLine], candidate: list[RunLine]) -> tuple[list[RunLine], list[str]]:
    """Both sides as one A/B experiment's lines, paired by identity; every line not paired,
    named with why."""
    a, shared_a = _by_identity(baseline, "baseline")
    b, shared_b = _by_identity(candidate, "candidate")
    out = []
    for key in sorted(set(a) & set(b)):
        pair = f"gate.{a[key].identity_text}"
        for role, line, name in (("A", a[key], "baseline"), ("B", b[key], "candidate")):
            out.append(
                replace(line, experiment="gate", pair=pair, variant=role, variant_name=name, split="heldout")
            )
    unmatched = shared_a + shared_b
    unmatched += [
        f"{a[k].identity_text} (run {a[k].run_id or '?'} of the baseline; the candidate has no such run)"
        for k in sorted(set(a) - set(b))
    ]
    unmatched += [
        f"{b[k].identity_text} (run {b[k].run_id or '?'}, new in the candidate; the baseline has no such run)"
        for k in sorted(set(b) - set(a))
    ]
    return out, unmatched


def gate(baseline: list[RunLine], candidate: list[RunLine], tolerance: int = 0) -> GateResult:
    lines, unmatched = as_pairs(baseline, candidate)
    comparison = compare(lines)
    unresolved: list[str] = []
    graders = comparison.graders  # pairs two graders graded: left out of the items too
    items, incomplete = paired_items(lines, unresolved)
    groups: dict[str, GroupGate] = defaultdict(GroupGate)
    for item in items:
        where = f"{item.pair.removeprefix('gate.')}:{item.question}"
        for tag in ("all", *item.tags):
            g = groups[tag]
            g.compared += 1
            if item.a and not item.b:
                g.regressed.append(where)
            elif item.b and not item.a:
                g.improved.append(where)
    for entry in unresolved:
        groups["all"].unresolved.append(entry.removeprefix("gate."))
    regressed = {tag: g for tag, g in groups.items() if len(g.regressed) > tolerance}
    if regressed:  # a regression decides, whatever else could not be checked
        failing = [
            Clause(False, f"{tag}: {len(g.regressed)} question(s) regressed (tolerance {tolerance}): {_listed(g.regressed)}")
            for tag, g in sorted(regressed.items())
        ]
        return GateResult(Ruling.of(failing), dict(groups), comparison, unmatched)
    unchecked: list[str] = []
    if not lines:
        unchecked.append("no question could be compared: no run is in both the baseline and the candidate")
    elif not items and not incomplete and not unresolved:
        unchecked.append("the paired runs graded no question in common")
    if incomplete:
        unchecked.append(
            f"pairs with a side that did not complete: {', '.join(p.removeprefix('gate.') for p in incomplete)}"
        )
    if unresolved:
        unchecked.append(f"{len(unresolved)} grade(s) unresolved (the grader was not sure): {', '.join(unresolved[:10])}")
    if graders:  # a rule change is no agent's regression: never a pass (or a fail) across two graders
        unchecked.append(
            f"{len(graders)} pair(s) graded by different graders: {'; '.join(g.removeprefix('gate.') for g in graders[:5])}"
            + (" …" if len(graders) > 5 else "")
        )
    if unmatched:  # a run not compared is no pass over it
        unchecked.append(
            f"{len(unmatched)} run(s) not compared: {'; '.join(unmatched[:10])}" + (" …" if len(unmatched) > 10 else "")
        )
    clauses = [Clause(None, text) for text in unchecked] or [
        Clause(True, f"no question regressed beyond the tolerance ({tolerance})")
    ]
    return GateResult(Ruling.of(clauses), dict(groups), comparison, unmatched)


# what XML 1.0 can't hold (control characters, lone surrogates): shown as U+FFFD, never a broken file
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def junit_xml(result: GateResult, tolerance: int) -> str:
    """One test case per question group, one for the runs not compared; valid XML whatever the
    ids and texts hold (an id with a control character, a baseline with a lone surrogate)."""
    suite = ET.Element("testsuite", name="marathonbench memory gate")
    cases = 0
    failures = 0
    for tag, g in sorted(result.groups.items()):
        case = ET.SubElement(suite, "testcase", classname="marathonbench.gate", name=f"question group: {tag}")
        cases += 1
        if len(g.regressed) > tolerance:
            failures += 1
            failure = ET.SubElement(case, "failure", message=f"{len(g.regressed)} question(s) regressed")
            failure.text = "\n".join(g.regressed)
        elif g.unresolved:
            ET.SubElement(
                case,
                "skipped",
                message=f"{len(g.unresolved)} grade(s) unresolved: {', '.join(g.unresolved[:10])}",
            )
    if result.unmatched:
        case = ET.SubElement(suite, "testcase", classname="marathonbench.gate", name="runs not compared")
        skipped = ET.SubElement(case, "skipped", message=f"{len(result.unmatched)} run(s) not compared")
        skipped.text = "\n".join(result.unmatched)
        cases += 1
    if result.verdict is Verdict.NO_DECISION and not result.groups:
        case = ET.SubElement(suite, "testcase", classname="marathonbench.gate", name="comparison")
        ET.SubElement(case, "skipped", message="; ".join(result.why))
        cases += 1
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    for element in suite.iter():
        element.text = _xml_text(element.text) if element.text else element.text
        for key, value in element.attrib.items():
            element.set(key, _xml_text(value))
    return ET.tostring(suite, encoding="unicode") + "\n"


def _listed(items: list[str], most: int = 20) -> str:
    """Up to `most` of them, then how many more: never a silent cut."""
    more = f" … and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(items[:most]) + more


def write_baseline(lines: list[RunLine], path: Path) -> None:
    """The lines as a baseline; each recording's path relative to the baseline's folder (a
    committed baseline carries no machine's absolute path)."""
    folder = path.resolve().parent
    path.write_text(
        lines_jsonl([replace(line, recording=os.path.relpath(line.recording, folder)) if line.recording else line
                     for line in lines]),
        encoding="utf-8",
    )  # fmt: skip


def render_gate(result: GateResult) -> str:
    out = [f"memory gate: {result.verdict.value.upper()}"]
    out += [f"- {line}" for line in result.why]
    out += [f"- not paired: {u}" for u in result.unmatched]
    for tag, g in sorted(result.groups.items()):
        out.append(
            f"  {tag}: {g.compared} compared, {len(g.regressed)} regressed, {len(g.improved)} improved"
        )
    return "\n".join(out)
