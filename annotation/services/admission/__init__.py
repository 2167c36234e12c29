"""Admission: how a worker comes in, and how they leave without finishing.

``entry`` (the entry link: look, claim, decline), ``consent``, ``comprehension`` (the check and its
screen-out), ``survey``, ``blocklist`` (past participants kept out), ``abandonment`` (idle slots
released), ``closing`` (what closing a study means for those still in it).

Calls state, texts, money (a close-out is dated at the pay rule's end of work) and audit.
"""
