"""Drives `mutdelta mcp` with the official Python SDK's client, as a coding agent would.

Usage: mcp_client.py MUTDELTA REPO PYTHON [--again | --cancel]. Prints one JSON document of what
it saw: the tools, the structured result of a check of the last commit (its tests run by PYTHON),
its progress messages, and (unless --again) `show` of a survivor, `list`, a test path outside
the repository and an unknown revision, both refused. With --cancel: the check's call cancelled
once its baseline has begun, and the seconds the call and the session took to end after that.
"""

import asyncio
import json
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def structured(result):
    return {"isError": bool(result.is_error), "content": result.structured_content}


def last_commit(python):
    return {"target": "commit", "rev": "HEAD", "python": python}


async def agent(session, python, again, seen):
    tools = await session.list_tools()
    seen["tools"] = sorted(tool.name for tool in tools.tools)
    progress = []

    async def on_progress(done, total, message):
        progress.append(message)

    check = await session.call_tool("check", last_commit(python), progress_callback=on_progress)
    seen["check"] = structured(check)
    seen["progress"] = progress
    if again:
        return
    survivors = check.structured_content["survivors"]
    seen["show"] = structured(await session.call_tool("show", {"id": survivors[0]["id"]}))
    seen["list"] = structured(await session.call_tool("list", {"target": "commit", "rev": "HEAD"}))
    outside = dict(last_commit(python), tests=["../elsewhere/test_x.py"])
    seen["outside"] = structured(await session.call_tool("check", outside))
    unknown = dict(last_commit(python), rev="no-such-rev")
    seen["unknown_revision"] = structured(await session.call_tool("check", unknown))


async def cancel(session, python, seen):
    """Starts a check and cancels its call once the baseline has begun; when that was."""
    begun = anyio.Event()

    async def on_progress(done, total, message):
        if message.startswith("baseline: running"):
            begun.set()

    async def call():
        await session.call_tool("check", last_commit(python), progress_callback=on_progress)

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await begun.wait()
        started = time.monotonic()
        group.cancel_scope.cancel()
    seen["call_ended_after"] = time.monotonic() - started
    return started


async def main(mutdelta, repo, python, mode):
    seen = {}
    server = StdioServerParameters(command=mutdelta, args=["mcp"], cwd=repo)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            if mode == "--cancel":
                started = await cancel(session, python, seen)
            else:
                await agent(session, python, mode == "--again", seen)
    if mode == "--cancel":
        seen["session_ended_after"] = time.monotonic() - started
    return seen


if __name__ == "__main__":
    mode = sys.argv[4] if len(sys.argv) > 4 else None
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], mode))))
