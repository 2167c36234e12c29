"""Create or update a superuser (idempotent): ``ensure_admin --username admin [--password PASSWORD]``.

The password must pass the site's password rules (``AUTH_PASSWORD_VALIDATORS``: at least 8 characters, not
common, not all digits, not like the username). Without ``--password`` the command asks for one at a
terminal, and elsewhere makes a strong one and prints it once. ``--demo`` lets the demo keep its
``admin``/``admin`` (scripts/run_demo.sh passes it): never on a server anyone else can reach.
"""

import secrets
import sys
from getpass import getpass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Create the superuser, or reset its password and superuser rights if it exists."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument(
            "--password",
            default=None,
            help="At least 8 characters, not a common one (default: asked for, or a new one made and printed).",
        )
        parser.add_argument("--email", default="")
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

    def handle(self, *args: Any, username: str, password: str | None, email: str, demo: bool, **options: Any) -> None:
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
        user.is_staff = user.is_superuser = user.is_active = True
        user.set_password(password)
        user.save()
        said = f"the password {password!r} (shown once: keep it)" if made else "the password you gave"
        self.stdout.write(
            f"{'Created' if created else 'Updated'} superuser {username!r}. "
            f"Log in at /admin/ with user {username!r} and {said}."
        )
