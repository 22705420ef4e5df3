"""Protocol 001's results table (its "Таблица результатов"), from an experiment's run lines:
per variant and task group — successful / evaluated runs, wins only for this variant, misapplied
old experience (count and two examples), correct clarifications / cases that needed one, access
or deletion violations, time to a verified result (agent and checker apart), cost per task, and
the runs that could not be evaluated or failed for technical reasons.

What a caller may rely on: every figure comes from the run lines alone (`NAME.runs.jsonl`), so
`compare` on a stored file prints the same table; a figure that is not in the lines (an old
file, a price unknown) prints "—", never 0.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from gateway.report.budget import percentile
from gateway.report.run_line import RunLine


def _median(values: list[float]) -> str:
    """The median and interquartile range, interpolated within the data (never a negative time
    or one beyond the longest: `statistics.quantiles` extrapolated "0.1 s (-0.0–0.2)")."""
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.1f} s"
    return f"{percentile(values, 50):.1f} s ({percentile(values, 25):.1f}–{percentile(values, 75):.1f})"


def results_table(lines: list[RunLine], names: dict[str, str]) -> str:
    by_pair: dict[str, dict[str, RunLine]] = defaultdict(dict)
    for line in lines:
        by_pair[line.pair_id][line.variant] = line
    wins: dict[tuple[str, str], int] = defaultdict(int)  # (variant, group) → questions only it got right
    for sides in by_pair.values():
        if set(sides) != {"A", "B"}:
            continue
        qa, qb = sides["A"].questions, sides["B"].questions
        group = sides["A"].group
        for qid in set(qa) & set(qb):
            if not (qa[qid].certain and qb[qid].certain):
                continue  # a win on a guess is none, as in the A/B table
            a, b = qa[qid].correct, qb[qid].correct
            for g in {group, "all"}:
                if a and not b:
                    wins[("A", g)] += 1
                elif b and not a:
                    wins[("B", g)] += 1
    groups = sorted(
        {line.group for line in lines} | {"all"}, key=lambda g: (g != "all", g)
    )
    out = [
        "",
        "**Results (protocol 001's table)** — per variant and task group:",
        "",
        "| variant | group | successful / evaluated runs | wins only here | misapplied old facts | "
        "clarifications right / needed | access or deletion violations | time: agent | time: checker | "
        "cost per task (median) | unevaluated | technical failures |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for role in ("A", "B"):
        for group in groups:
            mine = [
                line
                for line in lines
                if line.variant == role and (group == "all" or line.group == group)
            ]
            if not mine:
                continue
            evaluated = [line for line in mine if line.evaluated and line.graded]
            # a run that used up its limits failed, whatever it answered before it stopped
            successful = [line for line in evaluated if not line.limit_reached and line.correct == line.graded]
            misapplied = sum(line.misapplied_old_facts for line in mine)
            examples = list(dict.fromkeys(f"{line.task}:{q}" for line in mine for q in line.misapplied_examples))[:2]
            abstain = [q for line in evaluated for q in line.questions.values() if "abstain" in q.tags]
            violations = sum(line.canary_hits for line in mine) + sum(
                1 for line in mine for q in line.questions.values() if q.recalled
            )
            costs = [c for c in (line.cost_usd for line in evaluated) if c is not None]
            cost = f"${statistics.median(costs):.4f}" if costs and len(costs) == len(evaluated) else "—"
            unevaluated = [line for line in mine if line.evaluated and not line.graded]
            failed = [line for line in mine if not line.evaluated]
            out.append(
                f"| {role} ({names.get(role, role)}) | {group} | {len(successful)} / {len(evaluated)} | "
                f"{wins[(role, group)]} | {misapplied}{' (e.g. ' + ', '.join(examples) + ')' if examples else ''} | "
                f"{sum(1 for q in abstain if q.correct)} / {len(abstain)} | {violations} | "
                f"{_median([line.agent_seconds for line in evaluated])} | "
                f"{_median([line.persona_seconds for line in evaluated])} | {cost} | "
                f"{len(unevaluated)} | {len(failed)}"
                + (f" ({', '.join(sorted({line.status_text for line in failed}))})" if failed else "")
                + " |"
            )
    out.append(
        "\nSuccessful: every graded question right at the first try, within the run's limits; a "
        "clarification: an [abstain] question "
        'answered "you never told me"; violations: canary hits at the model input and [deleted] answers '
        "stating what was to be forgotten; the checker's time is the persona's (and its grader's). An "
        "experiment's preparation (`prepare:`) is priced apart, below."
    )
    return "\n".join(out) + "\n"
