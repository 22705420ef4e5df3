"""WordNet's synonyms for the grader: read from the installed files, nouns of one synset only."""

from __future__ import annotations

from persona.grading.thesaurus import synonym_doubt


def test_nouns_of_one_synset_are_a_doubt_and_the_reason_names_them() -> None:
    doubt = synonym_doubt("loft", "Up in the attic.")
    assert doubt is not None and "attic" in doubt
    assert synonym_doubt("maid of honour", "Chief bridesmaid.") is not None  # British spelling read as WordNet's


def test_other_nouns_adjectives_definitions_and_other_scripts_raise_none() -> None:
    assert synonym_doubt("loft", "In the garage.") is None
    assert synonym_doubt("dark green", "Blue") is None  # adjectives link too much
    assert synonym_doubt("September", "31 October.") is None  # a definition names the month before
    assert synonym_doubt("чердак", "на мансарде") is None  # English only
