"""Create or update a superuser (idempotent): ``ensure_admin --username admin --password admin``."""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Create the superuser, or reset its password and superuser rights if it exists."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument("--password", required=True)
        parser.add_argument("--email", default="")

    def handle(self, *args: Any, username: str, password: str, email: str, **options: Any) -> None:
        username = username.strip()
        if not username or not password:
            raise CommandError("--username and --password must not be empty.")
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        created = user is None
        if user is None:
            user = User(**{User.USERNAME_FIELD: username})
        user.email = email or user.email
        user.is_staff = user.is_superuser = user.is_active = True
        user.set_password(password)
        user.save()
        self.stdout.write(
            f"{'Created' if created else 'Updated'} superuser {username!r}. "
            f"Log in at /admin/ with user {username!r} and the password you gave."
        )
