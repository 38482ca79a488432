"""Validates MCP lines against the official JSON schemas of their revision (schema/, copies of
the spec repository's schema.json files), with the `jsonschema` package the Python SDK already
pulls in (requirements.txt).

Each server line is checked as the JSON-RPC envelope it is (`JSONRPCResultResponse`,
`JSONRPCErrorResponse`) and, for a result, as the result type of the method it answers
(`InitializeResult`, `CallToolResult`, ...). The revision of an answer is the revision of its
request: 2026-07-28 when the request's `params._meta` names a protocol version, 2025-11-25
otherwise. An error without an id (its request could not be read) must be valid in both.
"""

import json
import os

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
MODERN, LEGACY = "2026-07-28", "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
}


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate keys in {keys}")
    return dict(pairs)


def parse(line: str):
    """Parses one line strictly enough for our purpose (duplicate keys are an error)."""
    return json.loads(line, object_pairs_hook=_no_duplicates)


class Schemas:
    def __init__(self) -> None:
        self._defs = {}
        for revision in (MODERN, LEGACY):
            with open(os.path.join(HERE, "schema", f"schema-{revision}.json"), encoding="utf-8") as f:
                self._defs[revision] = json.load(f)["$defs"]
        self._validators = {}

    def _validator(self, revision: str, name: str):
        key = (revision, name)
        if key not in self._validators:
            schema = {"$ref": f"#/$defs/{name}", "$defs": self._defs[revision]}
            self._validators[key] = jsonschema.Draft202012Validator(schema)
        return self._validators[key]

    def problems(self, revision: str, name: str, value) -> list:
        return [
            f"{revision} {name}: {e.message} at /{'/'.join(str(p) for p in e.absolute_path)}"
            for e in self._validator(revision, name).iter_errors(value)
        ]

    def check_response(self, message, request) -> list:
        """Problems of one server message; `request` is (method, revision) of the request it
        answers, or None when it has no id."""
        if not isinstance(message, dict):
            return [f"not a JSON object: {message!r}"]
        if "error" in message:
            revisions = [request[1]] if request else [MODERN, LEGACY]
            return [p for r in revisions for p in self.problems(r, "JSONRPCErrorResponse", message)]
        if request is None:
            return [f"a result without a request it answers: {message}"]
        method, revision = request
        found = self.problems(revision, "JSONRPCResultResponse", message)
        result_type = RESULT_TYPES.get(method)
        if result_type is None:
            return found + [f"no result type known for {method}"]
        return found + self.problems(revision, result_type, message.get("result"))


def revision_of(request: dict) -> str:
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return MODERN if isinstance(meta, dict) and META_VERSION in meta else LEGACY


class Session:
    """Pairs the lines of one stdio session (requests in, answers out) and validates every
    answer as it comes."""

    def __init__(self, schemas: Schemas) -> None:
        self.schemas = schemas
        self.requests = {}
        self.checked = 0
        self.problems = []

    def sent(self, line: str) -> None:
        try:
            message = parse(line)
        except ValueError:
            return
        if isinstance(message, dict) and "method" in message and "id" in message:
            key = json.dumps(message["id"])
            self.requests[key] = (message["method"], revision_of(message))

    def received(self, line: str) -> None:
        self.checked += 1
        try:
            message = parse(line)
        except ValueError as e:
            self.problems.append(f"not JSON ({e}): {line!r}")
            return
        request = None
        if isinstance(message, dict) and "id" in message:
            request = self.requests.get(json.dumps(message["id"]))
            if request is None:
                self.problems.append(f"answers an id nobody sent: {line.strip()}")
                return
        for problem in self.schemas.check_response(message, request):
            self.problems.append(f"{problem}\n    line: {line.strip()[:300]}")
