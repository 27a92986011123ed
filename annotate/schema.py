"""The OpenAPI schema's view of each route: who may call it.

drf-spectacular writes the authentication (session or token) of every operation; the permission
(any signed-in user, or staff only) it does not. This schema class adds it to each operation: a
sentence at the end of its description and `x-permissions`, the permission classes by name, so
that a client (and `tests/test_api_schema.py`) can read it.
"""

from drf_spectacular.openapi import AutoSchema
from rest_framework.permissions import AllowAny, IsAdminUser, IsAuthenticated

WHO = {
    IsAdminUser: "staff only (researchers)",
    IsAuthenticated: "any signed-in user (annotators reach only their own work)",
    AllowAny: "anyone",
}


class PermissionsAutoSchema(AutoSchema):
    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        permissions = [type(p) for p in self.view.get_permissions()]
        operation["x-permissions"] = [p.__name__ for p in permissions]
        who = "; ".join(WHO.get(p, p.__name__) for p in permissions) or WHO[AllowAny]
        operation["description"] = (operation.get("description", "") + f"\n\nWho may call it: {who}.").strip()
        return operation
