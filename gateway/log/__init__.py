"""The run log (design §6): one append-only msgpack stream per run, the single source of truth.

Owns the typed events (`events.py`; their kinds' closed vocabularies in `vocabulary.py`; the
table of tags and the reading of a record in `records.py`, fields checked by `field_types.py`), the
writer, reader, repair, torn-tail handling, format versions and migrations (`runlog.py`), the
framing that tells damage from a torn tail (`frames.py`), one writer
per run folder (`lock.py`), the redaction of secrets before anything is written (`redact.py`)
and text made writable (`scrub.py`). Imports nothing of marathonbench but itself and the
persona's vocabulary (`persona.drivers.actions`: why a message was sent, a slip's kind): every
other part of the gateway reads or writes runs through it.
"""
