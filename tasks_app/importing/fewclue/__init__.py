"""Importing FewCLUE (Xu et al., 2021): nine Chinese few-shot tasks, from the repository's ``datasets/``.

``labels`` reads the label files as data, ``tasks`` says how each task's line becomes an Example,
``planning`` reads and checks one task folder, ``service`` holds ``import_fewclue``. The findings,
the report, the loader and the all-or-nothing rule are the CLUES importer's (``tasks_app.importing``).
"""
