#!/usr/bin/env python3
"""Lean results, measured: `run_command "echo hi"` through two terminal servers, a baseline
build and the current one, on the same policy, called in turn (alternating which goes
first) through the official MCP Python SDK client, which validates every
`structuredContent` against the tool's `outputSchema`. Prints, side by side, the bytes of
the result (the envelope, its sandbox summary, the text block, the whole result, the
tool's outputSchema) and the round trip p50/p95 of each server, with their ratio.

Run by scripts/bench_lean_results.sh, which builds both servers and the venv; by hand:
  bench_lean_results.py --baseline OLD/safe-mcp --current NEW/safe-mcp --config POLICY
"""

import argparse
import asyncio
import contextlib
import json
import os
import time
from importlib import metadata

from mcp import ClientSession, StdioServerParameters, stdio_client

CALL = {"command": "echo hi"}


def compact(value) -> int:
    """Bytes of `value` as compact JSON (what a server writes)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[round((len(ordered) - 1) * p)]


async def connect(stack, binary, config, audit_log):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SAFE_MCP_AUDIT_LOG": audit_log, "SAFE_MCP_LOG": "warn"}
    params = StdioServerParameters(command=binary, args=["terminal", "--config", config], env=env)
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    tools = await session.list_tools()
    schema = next(t.output_schema for t in tools.tools if t.name == "run_command")
    return session, schema


def sizes(result, schema):
    """The byte figures of one `echo hi` result."""
    envelope = result.structured_content
    summary = envelope["detail"].get("sandbox")
    return {
        "envelope (structuredContent)": compact(envelope),
        "detail.sandbox": len(summary.encode()) if isinstance(summary, str) else compact(summary),
        "text block": sum(len(c.text.encode()) for c in result.content if c.type == "text"),
        "whole tools/call result": len(result.model_dump_json(by_alias=True, exclude_none=True).encode()),
        "run_command outputSchema": compact(schema),
    }


async def run(opts):
    names = ("baseline", "current")
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for name, binary in zip(names, (opts.baseline, opts.current)):
            log = os.path.join(opts.state, f"bench-lean-{name}.jsonl")
            sessions[name] = await connect(stack, binary, opts.config, log)
        first = {}
        for name, (session, schema) in sessions.items():
            result = await session.call_tool("run_command", CALL)
            assert not result.is_error, result
            first[name] = (result, sizes(result, schema))
        for _ in range(opts.warmup):
            for session, _ in sessions.values():
                await session.call_tool("run_command", CALL)
        times = {name: [] for name in names}
        for i in range(opts.iterations):
            for name in names if i % 2 == 0 else reversed(names):
                session = sessions[name][0]
                t = time.perf_counter()
                result = await session.call_tool("run_command", CALL)
                times[name].append((time.perf_counter() - t) * 1e3)
                assert result.structured_content["code"] == "OK", result

    version = metadata.version("mcp")
    print(f'lean results: run_command "echo hi", {opts.iterations} interleaved rounds, '
          f"MCP Python SDK {version} (validates structuredContent against outputSchema)")
    print(f"  baseline: {opts.baseline_name}")
    print(f"  current : {opts.current_name}")
    print(f"  {'':34} {'baseline':>10} {'current':>10} {'current/baseline':>17}")
    targets = {"envelope (structuredContent)": "target <= 400", "detail.sandbox": "target <= 200"}
    for key in first["baseline"][1]:
        b, c = first["baseline"][1][key], first["current"][1][key]
        print(f"  {key + ' bytes':34} {b:>10} {c:>10} {c / b:>16.2f}x   {targets.get(key, '')}")
    for label, p in (("round trip p50 ms", 0.5), ("round trip p95 ms", 0.95)):
        b, c = percentile(times["baseline"], p), percentile(times["current"], p)
        print(f"  {label:34} {b:>10.3f} {c:>10.3f} {c / b:>16.2f}x")
    detail = first["current"][0].structured_content["detail"]
    print(f"  current detail.sandbox: {detail.get('sandbox')}")
    print(f"  current result carries the whole report (a downgrade): {'sandbox_report' in detail}")
    with open(os.path.join(opts.state, "bench-lean-current.jsonl")) as f:
        records = [json.loads(line) for line in f]
    outcome = [r for r in records if r.get("tool") == "run_command" and r.get("event") == "outcome"][-1]
    report = outcome.get("sandbox")
    kept = isinstance(report, dict) and "mechanisms" in report and "limits" in report
    print(f"  current audit record keeps the whole report: {kept} ({compact(report)} bytes)")
    print("  current envelope: " + json.dumps(first["current"][0].structured_content, sort_keys=True,
                                               separators=(",", ":")))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", required=True, help="the baseline safe-mcp binary")
    p.add_argument("--current", required=True, help="the current safe-mcp binary")
    p.add_argument("--baseline-name", default="baseline", help="what the baseline is (a rev)")
    p.add_argument("--current-name", default="current", help="what the current build is")
    p.add_argument("--config", required=True, help="a policy that allows echo")
    p.add_argument("--state", required=True, help="a folder for the two servers' audit logs")
    p.add_argument("--iterations", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
