"""ASGI entry point: Django's application, with a request class that survives any declared charset."""

import os

import django
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.asgi import ASGIHandler

from config.env import serving_key_refusal

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# django.core.asgi.get_asgi_application(), with a request class that survives any declared charset:
# annotate.middleware then refuses what is not UTF-8 with a 400 and a message, instead of a 500.
django.setup(set_prefix=False)

from annotate.middleware import TolerantASGIRequest  # noqa: E402 (after the settings are set up)


class Handler(ASGIHandler):
    request_class = TolerantASGIRequest


application = Handler()

# Served pages are signed with SECRET_KEY: refuse to start without it rather than fail each request.
if refusal := serving_key_refusal(settings.SECRET_KEY_SOURCE):
    raise ImproperlyConfigured(refusal)
