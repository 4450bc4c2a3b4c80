"""The official MCP Python SDK client (`mcp`, pinned in requirements.txt) against one server.

Run by tests/py_client.rs as `python client.py SPEC`, SPEC a JSON object, either
{"command": ..., "args": [...], "env": {...}, "server_stderr": PATH, "calls": [...]} (stdio) or
{"url": "http://127.0.0.1:PORT/mcp", "token": ..., "bad_token": ..., "calls": [...]}
(Streamable HTTP, the token sent as `Authorization: Bearer`; with "client": "auto" through the
SDK's high-level `Client`, which first probes `server/discover` (and runs in the 2026-07-28
era when the server answers it) instead of a `ClientSession` that initializes), each call
{"tool": ..., "arguments": {...}}; an argument "$plan_id" is replaced by the plan_id of the
latest result that had one.
It connects, initializes, lists the tools, makes each call in order and prints one JSON object
on stdout: the server's instructions, the tool names and for each call what the SDK returned
(structuredContent, isError, whether the text block is the same JSON, whether the arguments fit
the tool's inputSchema and the envelope its outputSchema) or the error it raised. Over HTTP
with "bad_token" it then tries a session with that token ("bad_token": the error the SDK
raised, and the HTTP status and WWW-Authenticate header of the same initialize POSTed by hand).
Anything unexpected ends up in "fatal"; the Rust test asserts on the whole summary.
"""

import asyncio
import contextlib
import json
import sys

import httpx2
import jsonschema
from mcp import ClientSession
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

# Longest one HTTP request may take (the slowest call a test makes sleeps a second or two).
HTTP_TIMEOUT = httpx2.Timeout(60.0)


def fits(schema, value):
    """Whether `value` fits `schema` (None: no schema to check against)."""
    if not isinstance(schema, dict):
        return None
    return jsonschema.Draft202012Validator(schema).is_valid(value)


@contextlib.asynccontextmanager
async def connected(spec, token=None):
    """The SDK's read and write streams to the server SPEC names, over stdio or HTTP."""
    if "url" in spec:
        headers = {"Authorization": f"Bearer {token or spec['token']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT) as http:
            async with streamable_http_client(spec["url"], http_client=http) as streams:
                yield streams
        return
    params = StdioServerParameters(
        command=spec["command"], args=spec["args"], env=spec.get("env") or {}
    )
    with open(spec["server_stderr"], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams


def described(e):
    """`Type: message` of an error, of each leaf error of a task group's error group."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(described(inner) for inner in e.exceptions)
    return f"{type(e).__name__}: {e}"


async def bad_token(spec, out):
    """A session with a token the server does not know, then the same initialize by hand."""
    entry = {}
    try:
        async with connected(spec, token=spec["bad_token"]) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                entry["tools"] = [t.name for t in (await client.list_tools()).tools]
    except Exception as e:  # noqa: BLE001 - the test wants the error
        entry["sdk_error"] = described(e)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "safe-mcp-py-client-test", "version": "1.0.0"},
        },
    }
    headers = {
        "Authorization": f"Bearer {spec['bad_token']}",
        "Accept": "application/json, text/event-stream",
    }
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        response = await http.post(spec["url"], json=initialize, headers=headers)
    entry["status"] = response.status_code
    entry["www_authenticate"] = response.headers.get("www-authenticate")
    entry["body"] = response.text
    out["bad_token"] = entry


@contextlib.asynccontextmanager
async def opened(spec):
    """A connected, initialized client: (client, server_info, instructions, protocol_version)."""
    if spec.get("client") == "auto":
        headers = {"Authorization": f"Bearer {spec['token']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT) as http:
            async with Client(streamable_http_client(spec["url"], http_client=http)) as client:
                version = client.protocol_version
                yield client, client.server_info, client.instructions, version
        return
    async with connected(spec) as (read, write):
        async with ClientSession(read, write) as client:
            init = await client.initialize()
            yield client, init.server_info, init.instructions, init.protocol_version


async def session(spec, out):
    async with opened(spec) as (client, server_info, instructions, protocol_version):
        out["server"] = server_info.name if server_info else None
        out["instructions"] = instructions
        out["protocol_version"] = protocol_version
        listed = await client.list_tools()
        tools = {}
        for tool in listed.tools:
            tools[tool.name] = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
        out["tools"] = [t.name for t in listed.tools]
        out["tool_list"] = list(tools.values())
        plan_id = None
        for call in spec["calls"]:
            name = call["tool"]
            arguments = json.loads(
                json.dumps(call["arguments"]),
                object_hook=lambda o: {k: plan_id if v == "$plan_id" else v for k, v in o.items()},
            )
            tool = tools.get(name, {})
            entry = {
                "tool": name,
                "arguments": arguments,
                "input_valid": fits(tool.get("inputSchema"), arguments),
            }
            try:
                result = await client.call_tool(name, arguments)
            except Exception as e:  # noqa: BLE001 - the test wants every error
                entry["error"] = f"{type(e).__name__}: {e}"
                out["calls"].append(entry)
                continue
            structured = result.structured_content
            text = [c.text for c in result.content if getattr(c, "type", None) == "text"]
            entry["structured"] = structured
            entry["isError"] = bool(result.is_error)
            entry["text_matches"] = len(text) == 1 and json.loads(text[0]) == structured
            entry["output_valid"] = fits(tool.get("outputSchema"), structured)
            detail = (structured or {}).get("detail")
            if isinstance(detail, dict) and isinstance(detail.get("plan_id"), str):
                plan_id = detail["plan_id"]
            out["calls"].append(entry)
    if "bad_token" in spec:
        await bad_token(spec, out)


def main():
    spec = json.loads(sys.argv[1])
    out = {"calls": []}
    try:
        asyncio.run(session(spec, out))
    except BaseException as e:  # noqa: BLE001 - reported, not raised
        out["fatal"] = f"{type(e).__name__}: {e!r}"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
