"""The official MCP Python SDK client (`mcp`, pinned in requirements.txt) against one server.

Run by tests/py_client.rs as `python client.py SPEC`, SPEC a JSON object:
{"command": ..., "args": [...], "env": {...}, "calls": [{"tool": ..., "arguments": {...}}]}.
It connects over stdio, initializes, lists the tools, makes each call in order and prints one
JSON object on stdout: the server's instructions, the tool names and for each call what the
SDK returned (structuredContent, isError, whether the text block is the same JSON, whether the
arguments fit the tool's inputSchema and the envelope its outputSchema) or the error it raised.
Anything unexpected ends up in "fatal"; the Rust test asserts on the whole summary.
"""

import asyncio
import json
import sys

import jsonschema
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def fits(schema, value):
    """Whether `value` fits `schema` (None: no schema to check against)."""
    if not isinstance(schema, dict):
        return None
    return jsonschema.Draft202012Validator(schema).is_valid(value)


async def session(spec, out):
    params = StdioServerParameters(
        command=spec["command"], args=spec["args"], env=spec.get("env") or {}
    )
    with open(spec["server_stderr"], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                init = await client.initialize()
                out["server"] = init.server_info.name
                out["instructions"] = init.instructions
                listed = await client.list_tools()
                tools = {}
                for tool in listed.tools:
                    tools[tool.name] = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
                out["tools"] = [t.name for t in listed.tools]
                out["tool_list"] = list(tools.values())
                for call in spec["calls"]:
                    name, arguments = call["tool"], call["arguments"]
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
                    out["calls"].append(entry)


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
