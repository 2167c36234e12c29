"""Importing task data: the CLUES release layout and the unified JSONL format.

Modules, in the order data flows through them: ``layout`` (find the files),
``reading`` (parse lines), ``validation`` and ``nesting`` (check them),
``locating`` and ``gold`` (gold answers into Example fields), ``planning``
(one task's plan, no database), ``loading`` (bulk writes) and ``service``
(the use-cases the commands call). ``findings`` holds the report format and
the list of finding kinds with their severity.

Rules worth knowing:
- A run checks every file before writing anything. Any *error* (malformed
  JSON, missing or mis-shaped field, unknown label, duplicate id in a file,
  empty or unreadable file) rejects the whole run: nothing is written and the
  command exits non-zero. Otherwise everything is written in one transaction.
- An example is identified by its content without the id (the
  fingerprint): the same line in several files is one example even when the
  files number it differently (SST-2 does), so a split's 10-shot items are the
  very examples of its 20-shot set; a content repeated within one file stays
  as many examples (the CoNLL test file has such lines); the same id with
  other content is reported (``id_reused``).
- Nesting (10 within 20 within 30) is judged per question type on content
  without ids, because SST-2 renumbers every file from 1.
- Re-importing never deletes examples; set memberships are replaced when a
  file's ordered content changed, and left alone otherwise.
"""
