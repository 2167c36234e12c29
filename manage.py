#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main():
    # Development settings (DEBUG from the environment): the demo and a developer's commands. A deployment
    # sets DJANGO_SETTINGS_MODULE=annotation.settings.production for its servers and commands alike.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.base")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
