"""Create or update a superuser (idempotent): ``ensure_admin --username admin [--password PASSWORD]``; with
``--role pi|researcher|assistant``, a member of the team in that role instead (staff, not a superuser).

The password must pass the site's password rules (``AUTH_PASSWORD_VALIDATORS``: at least 8 characters, not
common, not all digits, not like the username). Without ``--password`` the command asks for one at a
terminal, and elsewhere makes a strong one and prints it once. ``--demo`` lets the demo keep its
``admin``/``admin`` (scripts/run_demo.sh passes it): never on a server anyone else can reach.

The roles are the groups of annotation.protocol.roles (docs/team.md); the command sets them to what that
module says before it puts the user in one, so a role is never out of date. An existing user given a role
loses the superuser rights and any other role; run without ``--role``, a user becomes the superuser again.
"""

import secrets
import sys
from getpass import getpass
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from annotation.protocol import roles
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Create the superuser (or, with --role, a member of the team), or reset its password and rights."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument(
            "--password",
            default=None,
            help="At least 8 characters, not a common one (default: asked for, or a new one made and printed).",
        )
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--role",
            choices=list(roles.GROUP_NAMES),
            default=None,
            help="pi (principal investigator), researcher or assistant (docs/team.md); default: the superuser.",
        )
        parser.add_argument(
            "--demo", action="store_true", help="The local demo: any non-empty password (admin/admin) is taken."
        )

    def _password(self, given: str | None) -> tuple[str, bool]:
        """The password and whether it was made here (to be printed)."""
        if given is not None:
            return given, False
        if sys.stdin.isatty():
            first = getpass("Password: ")
            if first != getpass("Password (again): "):
                raise CommandError("The two passwords differ; nothing was changed.")
            return first, False
        return secrets.token_urlsafe(15), True

    def handle(
        self,
        *args: Any,
        username: str,
        password: str | None,
        email: str,
        demo: bool,
        role: str | None,
        **options: Any,
    ) -> None:
        username = username.strip()
        password, made = self._password(password)
        if not username or not password:
            raise CommandError("--username and --password must not be empty.")
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        created = user is None
        if user is None:
            user = User(**{User.USERNAME_FIELD: username})
        if not demo:
            try:
                validate_password(password, user)
            except ValidationError as error:
                rules = " ".join(error.messages)
                raise CommandError(f"The password is refused: {rules} Nothing was changed.") from None
        user.email = email or user.email
        user.is_staff = user.is_active = True
        user.is_superuser = role is None
        user.set_password(password)
        user.save()
        team = Group.objects.filter(name__in=roles.GROUP_NAMES.values())
        user.groups.remove(*team)  # one role at a time; the superuser needs none
        if role is not None:
            roles.sync_groups(apps)
            user.groups.add(Group.objects.get(name=roles.GROUP_NAMES[role]))
        said = f"the password {password!r} (shown once: keep it)" if made else "the password you gave"
        what = "superuser" if role is None else roles.GROUP_NAMES[role]
        self.stdout.write(
            f"{'Created' if created else 'Updated'} {what} {username!r}. "
            f"Log in at /admin/ with user {username!r} and {said}."
        )
