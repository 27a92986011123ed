"""One place where the JSON API turns an exception into a 4xx answer with a message.

DRF's own handler already answers its exceptions, Django's `PermissionDenied` (403,
`{"detail": message}`) and `Http404` (404). Added here: Django's `ValidationError`, which every
service raises for input it refuses, answers 400 with its messages as a list under "errors", or
under the exception class's `body_key` ("missing" for a submission with answers missing). A view
then calls its service without a `try`, and every endpoint says what was wrong in the same shape.
"""

from django.core.exceptions import ValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ValidationError):
        return Response({getattr(exc, "body_key", "errors"): exc.messages}, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
