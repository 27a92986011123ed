"""The OpenAPI schema (issue 21, item 6): every API route in it, with its authentication and who may
call it, and Swagger UI served from the installed package, never from a CDN."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import URLPattern, URLResolver, get_resolver, reverse

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


def api_routes(patterns=None, prefix: str = ""):
    """(OpenAPI path, view class) of every DRF route under /api/ (the schema's own routes aside)."""
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from api_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/") and not route.startswith("api/schema"):
            cls = getattr(pattern.callback, "cls", None)
            assert cls is not None, f"/{route} is not a REST framework view"
            yield "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route), cls


def test_it_lists_every_api_route_with_its_methods_auth_and_permissions(client):
    response = client.get(reverse("api-schema"), {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert set(schema["components"]["securitySchemes"]) == {"cookieAuth", "tokenAuth"}
    routes = list(api_routes())
    assert len(routes) >= 11
    for path, cls in routes:
        assert path in schema["paths"], f"{path} is missing from the schema"
        methods = [m for m in METHODS if hasattr(cls, m)]
        assert sorted(schema["paths"][path]) == sorted(methods), path
        permissions = [p.__name__ for p in cls.permission_classes]
        for method in methods:
            operation = schema["paths"][path][method]
            # Session or token, never anonymous.
            assert operation["security"] == [{"cookieAuth": []}, {"tokenAuth": []}], (path, method)
            assert operation["x-permissions"] == permissions, (path, method)
            assert "Who may call it: " in operation["description"]
    staff_only = {path for path, cls in routes if [p.__name__ for p in cls.permission_classes] == ["IsAdminUser"]}
    assert staff_only == {
        "/api/campaigns/{campaign_id}/labels/",
        "/api/campaigns/{campaign_id}/calibration/",
        "/api/campaigns/{campaign_id}/plan/",
    }
    assert "staff only" in schema["paths"]["/api/campaigns/{campaign_id}/labels/"]["get"]["description"]
    # The path parameters are ids (the `id` converter), typed as integers.
    parameters = schema["paths"]["/api/assignments/{assignment_id}/"]["get"]["parameters"]
    assert {"in": "path", "name": "assignment_id", "required": True, "schema": {"type": "integer"}}.items() <= parameters[0].items()


def test_it_serves_swagger_ui_from_the_package_not_a_cdn(client):
    page = client.get(reverse("api-docs"))
    assert page.status_code == 200
    html = page.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any("swagger-ui-bundle.js" in a for a in assets)
    for asset in assets:
        assert not asset.startswith(("http:", "https:", "//")), f"{asset} comes from elsewhere"
        if asset.startswith("/static/"):
            assert finders.find(asset.removeprefix("/static/")), f"{asset} is not in the static files"
    # No inline script or style (a Content-Security-Policy need not allow them): the UI's own
    # script is a separate request, and it points at the schema.
    assert "<style" not in html and not re.search(r"<script(?![^>]*\bsrc=)", html)
    script = client.get(reverse("api-docs"), {"script": ""})
    assert script.status_code == 200
    assert reverse("api-schema") in script.content.decode()
