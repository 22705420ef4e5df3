"""Each value's path in a JSON5 text maps to the line it starts on (a key's: the key's line)."""

from __future__ import annotations

from persona.json5_positions import SourceMap

TEXT = """// a config: comments, unquoted and quoted keys, a trailing comma
{
  recordings: "rec",  /* "runs": [ is in a comment */
  runs: [
    { id: "a", limits: { agent_turns: 3 } },
    {
      'id': 'b: "not a key"',
      "limits":
        { wall_seconds: 5 },
    },
  ],
}
"""


def test_each_key_and_item_maps_to_its_line() -> None:
    src = SourceMap(TEXT)
    assert src.line("recordings") == 3 and src.line("runs") == 4
    assert [src.line("runs", 0), src.line("runs", 0, "limits"), src.line("runs", 0, "limits", "agent_turns")] == [5, 5, 5]
    assert src.line("runs", 1) == 6 and src.line("runs", 1, "id") == 7
    assert src.line("runs", 1, "limits") == 8 and src.line("runs", 1, "limits", "wall_seconds") == 9


def test_a_path_the_text_lacks_falls_back_to_its_object() -> None:
    src = SourceMap(TEXT)
    assert src.line("runs", 1, "agent") == 6  # not there: the run's line
    assert src.line("nothing") == 2  # the top object
    assert SourceMap("").line("runs") == 0


def test_text_json5_rejects_is_mapped_as_far_as_it_goes() -> None:
    src = SourceMap('{ a: 1,\n b: [1, 2\n c: "unterminated')
    assert src.line("a") == 1 and src.line("b") == 2  # no exception
