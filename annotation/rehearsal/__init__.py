"""The rehearsal: a copy of a study's design on a scratch database, a simulated crowd through the real HTTP flow,
and every invariant that crosses features checked at the end (``manage.py rehearse_study``, docs/studies.md).

- ``scratch``: the scratch database (SQLite file or PostgreSQL database) and the copy of the design;
- ``client`` and ``crowd``: the simulated workers' browser and behaviour (the replay benchmark uses them too);
- ``runner``: the run itself, from the copy to the report, driving a server process on the scratch database;
- ``steps``: what the run does inside the scratch database (``manage.py rehearsal_step``, never the real one);
- ``invariants``: the checks; ``report``: the Markdown and JSON report.
"""
