"""WSGI entry point (gunicorn): Django's application, with a request class that survives any declared charset."""

import os

import django
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import WSGIHandler
from django.urls import get_resolver

from config.env import serving_key_refusal

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# django.core.wsgi.get_wsgi_application(), with a request class that survives any declared charset:
# annotate.middleware then refuses what is not UTF-8 with a 400 and a message, instead of a 500.
django.setup(set_prefix=False)

from annotate.middleware import TolerantWSGIRequest  # noqa: E402 (after the settings are set up)


class Handler(WSGIHandler):
    request_class = TolerantWSGIRequest


application = Handler()
# Every view and what it imports, now rather than on each worker's first request: with gunicorn's
# --preload (config/serve.sh) the workers fork after this and share these pages. No query runs here.
get_resolver().url_patterns  # noqa: B018 (imports the URLconf)

# Served pages are signed with SECRET_KEY: refuse to start without it rather than fail each request.
if refusal := serving_key_refusal(settings.SECRET_KEY_SOURCE):
    raise ImproperlyConfigured(refusal)
