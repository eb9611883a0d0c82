"""The explorer's API against its OpenAPI document (explore/openapi.py, docs/explore-openapi.json),
with schemathesis: requests generated from the document — well-formed and, in its negative mode,
malformed — must get no server error, a status the document lists, and an answer of the documented
shape. Bounded: a few examples per operation, a deadline per example, a timeout per request."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from test_explore_server import serve

from mutexlab.explore import openapi
from mutexlab.explore.server import API_DOCUMENT, Handler
from mutexlab.explore.session import Config, Session

EXAMPLES_PER_OPERATION = 12
REQUEST_TIMEOUT = 20  # seconds; a hung server fails the test instead of stalling it


@pytest.fixture(scope="module")
def explorer():
    server, thread = serve(Session(Config("ricart-agrawala", 3, {"requests": 1})))
    yield server
    server.shutdown()
    server.server_close()
    thread.join(10)


schema = schemathesis.openapi.from_dict(json.loads(json.dumps(API_DOCUMENT)))


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=timedelta(seconds=REQUEST_TIMEOUT),
    suppress_health_check=list(HealthCheck),
)
def test_the_api_answers_as_its_document_says(case, explorer):
    # A scenario is valid only for an algorithm that exists and steps its rules enable, which no
    # schema can say: POST /api/scenario may answer 422 to a scenario the document accepts.
    excluded = [schemathesis.checks.positive_data_acceptance] if case.path == "/api/scenario" else []
    case.call_and_validate(
        base_url=explorer.url.rstrip("/"), timeout=REQUEST_TIMEOUT, excluded_checks=excluded
    )


def test_the_document_is_served_and_current(explorer):
    answer = requests.get(f"{explorer.url}api/openapi.json", timeout=REQUEST_TIMEOUT)
    assert answer.status_code == 200 and answer.json() == API_DOCUMENT == openapi.document()
    assert openapi.DOC.read_text(encoding="utf-8") == openapi.text(), (
        "docs/explore-openapi.json is stale: python -m mutexlab.explore.openapi --write"
    )
    routes = {path for path in Handler._routes(Handler.__new__(Handler))} | {"/api/examples/{name}"}  # noqa: SLF001 - the route table is what the document must list
    assert set(API_DOCUMENT["paths"]) == routes, "every route is documented, and only those"


@pytest.mark.parametrize("broken", ["server error", "missing field", "undocumented status"])
def test_the_checks_catch_a_server_that_breaks_its_document(explorer, monkeypatch, broken):
    real = Handler.api_state

    def state(self):
        if broken == "server error":
            raise RuntimeError("a bug")
        status, value = real(self)
        if broken == "missing field":
            del value["findings"]
            return status, value
        return 299, value

    monkeypatch.setattr(Handler, "api_state", state)
    loaded = schemathesis.openapi.from_dict(json.loads(json.dumps(API_DOCUMENT)))
    case = loaded["/api/state"]["GET"].Case()
    with pytest.raises(BaseExceptionGroup, match="Schemathesis found"):
        case.call_and_validate(base_url=explorer.url.rstrip("/"), timeout=REQUEST_TIMEOUT)


def test_a_posted_scenario_cannot_make_the_server_load_a_file_or_module(explorer, tmp_path):
    ran = tmp_path / "ran"
    planted = tmp_path / "planted.py"
    planted.write_text(f"open({str(ran)!r}, 'w').write('the server ran me')\n")
    url = f"{explorer.url}api/scenario"
    for algorithm in (str(planted), "tests.mutexlab_broken.ricart_agrawala"):
        answer = requests.post(
            url, json={"algorithm": algorithm, "processes": 2, "steps": []}, timeout=REQUEST_TIMEOUT
        )
        assert answer.status_code == 422 and "does not load the algorithm" in answer.json()["error"]
    assert not ran.exists()
    answer = requests.post(
        url, json={"algorithm": "ricart-agrawala", "processes": 3, "steps": []}, timeout=REQUEST_TIMEOUT
    )
    assert answer.status_code == 200 and answer.json()["algorithm"] == "ricart-agrawala"
