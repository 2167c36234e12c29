"""A member of the research team in one role (docs/team.md), for the tests that act as one."""

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation.protocol import roles


def team_member(username: str, role: str, password: str = "pw"):
    """A staff user in the group of ``role`` (pi, researcher or assistant), as ``ensure_admin --role`` makes."""
    if not Group.objects.filter(name=roles.GROUP_NAMES[role]).exists():
        roles.sync_groups(apps)  # a transactional test's flush took the migration's groups away
    user = get_user_model().objects.create_user(username, password=password, is_staff=True)
    user.groups.add(Group.objects.get(name=roles.GROUP_NAMES[role]))
    return user
