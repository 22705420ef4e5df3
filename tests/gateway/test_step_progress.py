"""Long steps say how far they got (issue 47: `judge-check` and `report` on an experiment
folder worked for a minute or more without a word): on a terminal in place, in a CI log as
lines, and not at all for a step that is over quickly."""

from __future__ import annotations

import io

from gateway.step_progress import StepProgress


class Terminal(io.StringIO):
    """A terminal as the CLI's SafeStream presents it: `control` is how cursor codes get out."""

    def isatty(self) -> bool:
        return True

    def control(self, sequence: str) -> None:
        self.write(sequence)


def test_a_quick_step_says_nothing() -> None:
    out = io.StringIO()
    with StepProgress("reading runs", 3, out, after=60) as progress:
        for name in "abc":
            progress.advance(name)
    assert out.getvalue() == ""


def test_in_a_log_a_line_now_and_then_and_how_it_ended() -> None:
    out = io.StringIO()
    with StepProgress("reading runs", 3, out, after=0, every=3600) as progress:
        for name in "abc":
            progress.advance(name)
    assert out.getvalue().splitlines()[:2] == ["reading runs 1/3 (a)", "reading runs 3/3 (c)"]
    assert out.getvalue().splitlines()[2].startswith("reading runs: done, 3/3 in ")


def test_a_stopped_step_says_so() -> None:
    out = io.StringIO()
    try:
        with StepProgress("judging", 5, out, after=0) as progress:
            progress.advance("one")
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert out.getvalue().splitlines()[-1].startswith("judging: stopped, 1/5 in ")


def test_on_a_terminal_one_line_is_redrawn_then_cleared() -> None:
    out = Terminal()
    with StepProgress("charting runs", 2, out, after=0) as progress:
        progress.advance("a\x1b[2Jfake")  # a run's name is untrusted: its codes are shown, not run
        progress.advance("b")
    assert out.getvalue() == (
        "\r\x1b[2Kcharting runs 1/2 (a\\x1b[2Jfake)" + "\r\x1b[2Kcharting runs 2/2 (b)" + "\r\x1b[2K"
    )


def test_a_closed_stream_never_costs_the_step() -> None:
    out = io.StringIO()
    out.close()
    with StepProgress("reading runs", 1, out, after=0) as progress:
        progress.advance("a")
    assert progress.done == 1
