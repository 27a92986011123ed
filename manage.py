#!/usr/bin/env python
import os
import sys

# Commands that serve pages: they need SECRET_KEY in the environment (or DEBUG on). Every other
# command runs without it; the few that sign something (create_accounts) say so themselves.
SERVING = {"runserver"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        if sys.argv[1:2] and sys.argv[1] in SERVING:
            from django.conf import settings

            from config.env import serving_key_refusal

            if refusal := serving_key_refusal(settings.SECRET_KEY_SOURCE):
                raise ImproperlyConfigured(refusal)
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A missing or bad setting: one line naming the variable (config/env.py), never a traceback.
        message = str(exc)
        if message == "The SECRET_KEY setting must not be empty.":
            from config.env import NO_KEY

            message = NO_KEY
        sys.stderr.write(f"{message}\n")
        sys.exit(1)
    except BrokenPipeError:
        # The reader of the output went away (`... --out - | head`): stop quietly, as a Unix tool does.
        # Standard output goes to /dev/null so that the interpreter's own flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)  # 128 + SIGPIPE, what a shell reports for a process a pipe's end stopped


if __name__ == "__main__":
    main()
