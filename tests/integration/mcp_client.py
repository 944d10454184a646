"""Drives `mutdelta mcp` with the official Python SDK's client, as a coding agent would.

Usage: mcp_client.py MUTDELTA REPO PYTHON [--again]. Prints one JSON document of what it saw:
the tools, the structured result of a check of the last commit (its tests run by PYTHON), its
progress messages, and (unless --again) `show` of a survivor, `list`, a test path outside the
repository and an unknown revision, both refused.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def structured(result):
    return {"isError": bool(result.is_error), "content": result.structured_content}


async def main(mutdelta, repo, python, again):
    seen = {}
    server = StdioServerParameters(command=mutdelta, args=["mcp"], cwd=repo)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            seen["tools"] = sorted(tool.name for tool in tools.tools)
            progress = []

            async def on_progress(done, total, message):
                progress.append(message)

            check = await session.call_tool(
                "check", {"target": "commit", "rev": "HEAD", "python": python}, progress_callback=on_progress
            )
            seen["check"] = structured(check)
            seen["progress"] = progress
            if again:
                return seen
            survivors = check.structured_content["survivors"]
            seen["show"] = structured(await session.call_tool("show", {"id": survivors[0]["id"]}))
            seen["list"] = structured(await session.call_tool("list", {"target": "commit", "rev": "HEAD"}))
            outside = {"target": "commit", "rev": "HEAD", "tests": ["../elsewhere/test_x.py"]}
            refused = await session.call_tool("check", outside)
            seen["outside"] = structured(refused)
            seen["unknown_revision"] = structured(
                await session.call_tool("check", {"target": "commit", "rev": "no-such-rev"})
            )
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], "--again" in sys.argv[4:]))))
