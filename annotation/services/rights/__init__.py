"""Participants' rights: withdrawal and erasure, subject access, retention of identifiers (docs/participants.md)."""
