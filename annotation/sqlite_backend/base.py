"""Django's SQLite backend with one write transaction at a time per process, queued on a lock.

SQLite lets one writer in at a time. A transaction that finds the write lock taken does not queue:
SQLite's busy handler sleeps and retries with growing pauses (up to 100 ms each), so under a
dozen threads a short write can wait hundreds of milliseconds for a lock that was free most of
that time. Threads of one gunicorn process therefore take a process-wide lock before ``BEGIN
IMMEDIATE`` and hand it on at commit or rollback: they wait their turn in order, and the busy
handler is left for the rare meeting with another process. Only file databases take the lock
(an in-memory database is one test process's, and its test cases hold a transaction throughout).

Subclassing a built-in backend is Django's documented way to change one, but the four methods
overridden here are underscore-named hooks of Django's base backend (stable since Django 1.6, and
pinned by tests/test_sqlite_settings.py). They are kept because the 16-thread tail on SQLite
measured shorter with the queue than without it (docs/performance.md).
"""

import threading

from django.db.backends.sqlite3 import base

_write_lock = threading.Lock()


class DatabaseWrapper(base.DatabaseWrapper):
    _holds_write_lock = False

    def _queues_writes(self) -> bool:
        return not self.is_in_memory_db()

    def _start_transaction_under_autocommit(self) -> None:
        if self._queues_writes() and not self._holds_write_lock:
            # bounded like the busy timeout: a lock never released (a bug) slows writes, never stops them
            self._holds_write_lock = _write_lock.acquire(timeout=self.settings_dict["OPTIONS"].get("timeout", 5))
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._release_write_lock()
            raise

    def _release_write_lock(self) -> None:
        if self._holds_write_lock:
            self._holds_write_lock = False
            _write_lock.release()

    def _commit(self) -> None:
        try:
            super()._commit()
        finally:
            self._release_write_lock()

    def _rollback(self) -> None:
        try:
            super()._rollback()
        finally:
            self._release_write_lock()

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            self._release_write_lock()
