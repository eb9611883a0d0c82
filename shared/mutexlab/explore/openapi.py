"""The explorer's JSON API as an OpenAPI 3.1 document: what ``GET /api/openapi.json`` answers and
``docs/explore-openapi.json`` holds (``python -m mutexlab.explore.openapi --write`` rewrites it;
a test keeps it current, and ``tests/test_explore_openapi.py`` runs the server against it).

The scenario body is the replay's own model (``sim/scripted.Scenario``, pydantic), so the document
cannot drift from what ``POST /api/scenario`` accepts. The answers are described as loosely as the
page reads them: the fields it needs are required and typed, more are allowed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..sim.scripted import Scenario
from .session import RANDOM_LIMIT, RUN_LIMIT

DOC = Path(__file__).resolve().parents[3] / "docs" / "explore-openapi.json"
REF = "#/components/schemas/{model}"


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict:
    return {
        "type": "object",
        "required": sorted(required),
        "properties": {**required, **(optional or {})},
    }


STRING, INTEGER, BOOLEAN = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}


def _strings() -> dict:
    return {"type": "array", "items": STRING}


def _schemas() -> dict[str, Any]:
    scenario = Scenario.model_json_schema(ref_template=REF)
    steps = scenario.pop("$defs")
    finding = _obj({"rule": STRING, "message": STRING, "text": STRING})
    return {
        **steps,
        "Scenario": scenario,
        "Error": _obj({"error": STRING, "status": {"type": "integer", "minimum": 400, "maximum": 599}}),
        "Finding": finding,
        "Process": _obj(
            {
                "pid": INTEGER,
                "name": STRING,
                "state": STRING,
                "clock": {},
                "start_clock": {},
                "holds": _strings(),
                "finished": BOOLEAN,
                "waiting": {"type": "object", "additionalProperties": _strings()},
                "pending": _strings(),
                "fields": {"type": "array", "items": {"type": "array", "items": STRING}},
            }
        ),
        "Link": _obj(
            {
                "from": INTEGER,
                "to": INTEGER,
                "label": STRING,
                "messages": {
                    "type": "array",
                    "items": _obj({"id": STRING, "type": STRING, "text": STRING}),
                },
            }
        ),
        "EnabledStep": _obj({"id": STRING, "label": STRING, "op": STRING, "extra": BOOLEAN}),
        "Findings": _obj(
            {
                "status": {"enum": ["running", "end", "violation", "deadlock"]},
                "summary": STRING,
                "at_end": BOOLEAN,
                "capacity": {
                    "type": "array",
                    "items": _obj(
                        {
                            "resource": STRING,
                            "capacity": INTEGER,
                            "in_use": INTEGER,
                            "over": BOOLEAN,
                            "holders": {"type": "array", "items": _obj({"name": STRING, "units": INTEGER})},
                        }
                    ),
                },
                **{
                    name: {"type": "array", "items": _ref("Finding")}
                    for name in ("violations", "end_violations", "open_at_end", "incomplete")
                },
                "deadlock": {"type": ["string", "null"]},
                "checks": _strings(),
                "entered": _strings(),
            },
            {
                "raised": {
                    "description": "the step just tried whose handler raised (the path stays before "
                    "it): the step, its label, the message naming process, input, state, exception "
                    "and line, and the scenario that reaches it",
                    **_obj(
                        {
                            "step": {"type": "object"},
                            "label": STRING,
                            "message": STRING,
                            "scenario": {"type": "object"},
                        }
                    ),
                }
            },
        ),
        "State": _obj(
            {
                "algorithm": STRING,
                "processes": INTEGER,
                "options": {"type": "object"},
                "params": {"type": "object"},
                "capacities": {"type": "object", "additionalProperties": INTEGER},
                "procs": {"type": "array", "items": _ref("Process")},
                "links": {"type": "array", "items": _ref("Link")},
                "steps": {"type": "array", "items": _ref("EnabledStep")},
                "findings": _ref("Findings"),
                "free": BOOLEAN,
                "history": {
                    "type": "array",
                    "items": _obj({"n": INTEGER, "id": STRING, "label": STRING, "step": {"type": "object"}}),
                },
                "redo": _strings(),
                "position": {"type": "integer", "minimum": 0},
            },
            {
                "outcome": {
                    "description": "what the move did: the step taken (step), or how far a random walk "
                    "or a run went (random, run)",
                    "type": "object",
                }
            },
        ),
        "Example": {
            "oneOf": [
                _obj({"name": STRING, "algorithm": STRING, "processes": INTEGER, "steps": INTEGER}),
                _obj({"name": STRING, "error": STRING}),
            ]
        },
    }


def _json(schema: dict) -> dict:
    return {"application/json": {"schema": schema}}


def _errors(*codes: int) -> dict[str, Any]:
    said = {
        400: "the body is not a JSON object this server takes, or a field is not of its kind",
        403: "the Host header names another address (DNS rebinding)",
        404: "no such example",
        408: "the body did not arrive in time",
        409: "the move is not possible from here (not enabled, nothing to undo, no such step), or "
        "the path moved while a walk went on (nothing changed)",
        413: "the body is too large",
        415: "the body is not sent as application/json",
        422: "the scenario is invalid (its error names the step), or names a module or file to load",
        503: "another scenario is loading, or another walk going on; try again (Retry-After)",
    }
    return {str(c): {"description": said[c], "content": _json(_ref("Error"))} for c in codes}


POST_ERRORS = (400, 403, 408, 413, 415)


def _move(summary: str, body: dict | None, *codes: int) -> dict:
    operation: dict[str, Any] = {
        "summary": summary,
        "responses": {
            "200": {"description": "the state after the move", "content": _json(_ref("State"))},
            **_errors(*sorted({*POST_ERRORS, *codes})),
        },
    }
    # every POST sends a JSON body, {} when it has nothing to say (the Content-Type is required)
    operation["requestBody"] = {"required": True, "content": _json(body or {"type": "object"})}
    return {"post": operation}


def _get(summary: str, schema: dict, *codes: int, kind: str = "application/json") -> dict:
    return {
        "get": {
            "summary": summary,
            "responses": {
                "200": {"description": summary, "content": {kind: {"schema": schema}}},
                **_errors(403, *codes),
            },
        }
    }


def document() -> dict[str, Any]:
    """The OpenAPI document of the explorer's API."""
    seed = {"type": "integer", "minimum": 0}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "mutexlab explore",
            "version": "1",
            "description": "The JSON API of `mutexlab explore`'s local page (docs/explore.md): a path "
            "through the worlds of one configuration, moved step by step. Every answer is JSON but the "
            "diagram; every failed move answers 4xx with an Error and leaves the session as it was.",
        },
        "paths": {
            "/api/openapi.json": _get("this document", {"type": "object"}),
            "/api/state": _get("the state of the session", _ref("State")),
            "/api/step": _move("take one enabled step", _obj({"id": STRING}), 409),
            "/api/undo": _move("undo the last step", None, 409),
            "/api/redo": _move("redo the step undone last", None, 409),
            "/api/reset": _move("back to step 0 of the configuration", None),
            "/api/jump": _move(
                "go to the world after `to` steps",
                _obj({"to": {"type": "integer", "minimum": 0}}),
                409,
            ),
            "/api/random": _move(
                "take up to n steps chosen at random",
                {
                    "type": "object",
                    "properties": {
                        "n": {"type": "integer", "minimum": 0, "maximum": RANDOM_LIMIT},
                        "seed": seed,
                    },
                },
                409,
                503,
            ),
            "/api/run": _move(
                f"walk at random to the end of the path (at most {RUN_LIMIT} steps, and what "
                "WALK_SECONDS allow: outcome.stopped 'time', the same call goes on)",
                {"type": "object", "properties": {"seed": seed}},
                409,
                503,
            ),
            "/api/scenario": {
                **_get("the path so far as a scenario `mutexlab replay` reproduces", _ref("Scenario")),
                **_move("start over from a scenario, its steps ahead", _ref("Scenario"), 422, 503),
            },
            "/api/examples": _get(
                "the bundled example scenarios", {"type": "array", "items": _ref("Example")}
            ),
            "/api/examples/{name}": {
                "get": {
                    **_get("one example scenario", _ref("Scenario"), 404)["get"],
                    "parameters": [{"name": "name", "in": "path", "required": True, "schema": STRING}],
                }
            },
            "/diagram": _get("the space-time diagram of the path so far", STRING, kind="text/html"),
        },
        "components": {"schemas": _schemas()},
    }


def text() -> str:
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m mutexlab.explore.openapi [--write]
    if sys.argv[1:] == ["--write"]:
        DOC.write_text(text(), encoding="utf-8")
        print(f"written to {DOC}")
    else:
        sys.stdout.write(text())
