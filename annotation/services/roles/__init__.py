"""Who on the team may do what: each protected operation and the permission it needs (docs/team.md).

Owns ``operations`` (the one table, ``may``, and the check a background job makes when it runs). Calls no
other capability; the HTTP side of a refusal is annotation.web.roles.
"""
