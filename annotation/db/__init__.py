"""Database helpers: which errors mean the database is away (``errors``), and SQLite's one-writer queue."""
