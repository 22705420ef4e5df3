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
from typing import Any

EVALUATED = ("completed", "limit_reached")


def _median(values: list[float]) -> str:
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.1f} s"
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return f"{statistics.median(values):.1f} s ({q[0]:.1f}–{q[2]:.1f})"


def results_table(lines: list[dict[str, Any]], names: dict[str, str]) -> str:
    by_pair: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for line in lines:
        by_pair[str(line.get("pair"))][str(line.get("variant"))] = line
    wins: dict[tuple[str, str], int] = defaultdict(int)  # (variant, group) → questions only it got right
    for sides in by_pair.values():
        if set(sides) != {"A", "B"}:
            continue
        qa, qb = sides["A"].get("questions", {}), sides["B"].get("questions", {})
        group = str(sides["A"].get("group", "all"))
        for qid in set(qa) & set(qb):
            a, b = bool(qa[qid].get("correct")), bool(qb[qid].get("correct"))
            for g in {group, "all"}:
                if a and not b:
                    wins[("A", g)] += 1
                elif b and not a:
                    wins[("B", g)] += 1
    groups = sorted(
        {str(line.get("group", "all")) for line in lines} | {"all"}, key=lambda g: (g != "all", g)
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
                if line.get("variant") == role and (group == "all" or str(line.get("group", "all")) == group)
            ]
            if not mine:
                continue
            evaluated = [
                line for line in mine if line.get("status") in EVALUATED and int(line.get("graded") or 0)
            ]
            successful = [
                line for line in evaluated if int(line.get("correct") or 0) == int(line.get("graded") or 0)
            ]
            misapplied = sum(int(line.get("misapplied_old_facts") or 0) for line in mine)
            examples = [
                f"{line.get('task')}:{q}" for line in mine for q in line.get("misapplied_examples", [])
            ][:2]
            abstain = [
                q
                for line in evaluated
                for q in line.get("questions", {}).values()
                if "abstain" in q.get("tags", [])
            ]
            violations = sum(int(line.get("canary_hits") or 0) for line in mine) + sum(
                1 for line in mine for q in line.get("questions", {}).values() if q.get("recalled")
            )
            costs = [
                float(c) for c in (line.get("cost_usd") for line in evaluated) if isinstance(c, (int, float))
            ]
            cost = f"${statistics.median(costs):.4f}" if costs and len(costs) == len(evaluated) else "—"
            unevaluated = [
                line for line in mine if line.get("status") in EVALUATED and not int(line.get("graded") or 0)
            ]
            failed = [line for line in mine if line.get("status") not in EVALUATED]
            out.append(
                f"| {role} ({names.get(role, role)}) | {group} | {len(successful)} / {len(evaluated)} | "
                f"{wins[(role, group)]} | {misapplied}{' (e.g. ' + ', '.join(examples) + ')' if examples else ''} | "
                f"{sum(1 for q in abstain if q.get('correct'))} / {len(abstain)} | {violations} | "
                f"{_median([float(line.get('agent_seconds') or 0) for line in evaluated])} | "
                f"{_median([float(line.get('persona_seconds') or 0) for line in evaluated])} | {cost} | "
                f"{len(unevaluated)} | {len(failed)}"
                + (f" ({', '.join(sorted({str(line.get('status')) for line in failed}))})" if failed else "")
                + " |"
            )
    out.append(
        "\nSuccessful: every graded question right at the first try; a clarification: an [abstain] question "
        'answered "you never told me"; violations: canary hits at the model input and [deleted] answers '
        "stating what was to be forgotten; the checker's time is the persona's (and its grader's). An "
        "experiment's preparation (`prepare:`) is priced apart, below."
    )
    return "\n".join(out) + "\n"
