"""Which fact a question asks about, and what ties a note, a search result or a line of the
conversation to that fact rather than to another fact carrying the same value.

Why: the autopsy looks for a question's value in writes, results, memory and context. A value
is often not the fact's alone — "Marcus" is the partner and the sister's husband, "Pixel" is in
every fact about the cat — and a match of the string alone put the loss one or two stages too
late (issue 60: 6 of 7 such answers). So a match counts only on a line about the fact: the
question's words and its fact's own text, less the words of the other facts holding the value.

What a caller may rely on: `FactTie.topic` is a plain stem set when the value is the fact's
alone (the autopsy's rule before), a `Tie` when other facts hold it too; `shared_with` names
those facts; `untied` is set when nothing but shared words is left to tell their lines apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gateway.report.labelled_sets import facts_at
from gateway.report.memory_state import Tie, Topic, any_text, stems, topic_of
from persona.benchmark.model import Benchmark, Question
from persona.terms import split_items


@dataclass(frozen=True)
class FactTie:
    facts: tuple[str, ...]  # the facts ("file:id") holding the value when it was asked, about what it asks
    topic: Topic
    shared_with: tuple[str, ...] = ()  # other facts whose text holds the value too
    question: Question | None = None

    def told(self, line: str) -> FactTie:
        """For a value this fact alone holds: what it is about is the line that told it (the
        persona's words; the fact's text when none held it). A shared value keeps its tie."""
        if self.shared_with or self.question is None or not line:
            return self
        q = self.question
        return replace(self, topic=topic_of(q.text, line, leaving=q.expected))

    @property
    def untied(self) -> str:
        """Why no line can be tied to this fact ("" when some can)."""
        if isinstance(self.topic, Tie) and not self.topic.about:
            return (
                f"its value is also in {', '.join(self.shared_with[:3])}, and no word of the question or its fact "
                "tells their notes apart"
            )
        return ""

    @property
    def shared(self) -> str:
        """Said beside a stage decided on a shared value: which facts carry it too."""
        return f"its value is also in {', '.join(self.shared_with[:3])}" if self.shared_with else ""


def tie_of(bench: Benchmark, q: Question) -> FactTie:
    """The question's facts and what ties a line to them (`FactTie.told` puts the persona's
    telling line in for a value no other fact holds)."""
    _, current, earlier = facts_at(bench, q)
    holding = {f"{file}:{fid}": text for (file, fid), text in current.items() if some_item(q.expected, text)}
    asked_words = topic_of(q.text, "", leaving=q.expected)
    # of several facts holding it, those sharing the most of the question's words ("What is my
    # partner called?": the partner's fact, not the colleague who is "also called Marcus")
    overlap = {key: len(asked_words.intersection(stems(text))) for key, text in holding.items()}
    most = max(overlap.values(), default=0)
    facts = tuple(key for key, n in overlap.items() if n == most)
    own = [holding[key] for key in facts]
    for (file, fid), texts in earlier.items():  # an updated fact's earlier texts are its own words too
        if f"{file}:{fid}" in facts:
            own += texts
    others = {key: text for key, text in holding.items() if key not in facts}
    for (file, fid), texts in earlier.items():
        key = f"{file}:{fid}"
        if key not in facts and any(some_item(q.expected, t) for t in texts):
            others[key] = " ".join([others.get(key, ""), *texts])
    topic = topic_of(q.text, " ".join(own), leaving=q.expected)
    if not others:
        return FactTie(facts, topic, question=q)
    theirs = topic_of(" ".join(others.values()), " ".join(others.values()), leaving=q.expected)
    return FactTie(facts, Tie(topic - theirs, theirs - topic), tuple(sorted(others)), q)


def some_item(value: str, text: str) -> bool:
    """Does `text` surely hold an item of `value` (a list answer's items apart)?"""
    return any(any_text(item, [text]) for item in split_items(value))
