"""The example servers (examples/notes_server.py, examples/files_server.py), driven by the mcpbind
Client in memory and over stdio as a real child process.

Spec: 2025-11-25 server/tools.mdx, server/resources.mdx, server/prompts.mdx,
server/utilities/{completion,logging}.mdx, basic/utilities/progress.mdx, basic/transports.mdx.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from examples import files_server, notes_server
from mcpbind import (
    LATEST_HANDSHAKE,
    Client,
    ClientHandlers,
    McpError,
    RequestOptions,
    Server,
    json_object,
    json_value,
)
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 10


# ---------------------------------------------------------------------- helpers
class Recorder:
    """Collects server notifications and log messages; lets a test wait for one."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.logs: list[t.LoggingMessageNotificationParams] = []
        self._changed = anyio.Event()

    async def notification(self, method: str, params: Any) -> None:
        self.methods.append(method)
        if method == "notifications/resources/list_changed":
            self._changed.set()

    async def logging(self, params: t.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(notification=self.notification, logging=self.logging)

    async def list_changed(self) -> None:
        """Wait for the next ``notifications/resources/list_changed``."""
        with anyio.fail_after(TIMEOUT):
            await self._changed.wait()
        self._changed = anyio.Event()


def text(result: t.CallToolResult | t.ReadResourceResult) -> str:
    items = result.content if isinstance(result, t.CallToolResult) else result.contents
    assert len(items) == 1
    item = items[0]
    assert isinstance(item, t.TextContent | t.TextResourceContents), item
    return item.text


def structured(result: t.CallToolResult) -> dict[str, Any]:
    """The result's structured content, decoded; it must be a JSON object."""
    content = json_value(result.structured_content)
    assert isinstance(content, dict), result
    return content


async def read(client: Client, uri: str) -> t.ReadResourceResult:
    return await client.read_resource(t.ReadResourceRequestParams(uri=uri))


async def complete(
    client: Client, ref: t.PromptReference | t.ResourceTemplateReference, name: str, value: str
) -> list[str]:
    params = t.CompleteRequestParams(
        ref=ref, argument=t.CompleteRequestParamsArgument(name=name, value=value)
    )
    return (await client.complete(params)).completion.values


def progress_recorder() -> tuple[list[tuple[float, float | None]], RequestOptions]:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    return seen, RequestOptions(on_progress=on_progress)


async def assert_refused(call: Awaitable[t.CallToolResult], *needles: str) -> str:
    """A refused tool call: a tool execution error (``isError``), or -32602 from the runtime."""
    try:
        result = await call
    except McpError as exc:
        assert exc.code == -32602, exc
        message = exc.message
    else:
        assert result.is_error is True, result
        message = text(result)
    for needle in needles:
        assert needle in message
    return message


@asynccontextmanager
async def spawn(args: list[str], **options: Any) -> AsyncIterator[StdioClientTransport]:
    async with StdioClientTransport.spawn(sys.executable, args, cwd=ROOT, **options) as transport:
        yield transport


# ---------------------------------------------------------------------- notes: in memory
@pytest.fixture
def notes() -> Server:
    return notes_server.create_server(seed=())


async def test_notes_tools_are_listed_with_schemas_and_annotations(notes: Server) -> None:
    """2025-11-25 server/tools.mdx §Listing Tools, §Tool (annotations), §Output Schema."""
    async with Client(notes) as client:
        tools = {tool.name: tool async for tool in client.iter_tools()}
    assert set(tools) == {"add_note", "search_notes", "delete_note", "slow_count"}
    delete = tools["delete_note"].annotations
    assert isinstance(delete, t.ToolAnnotations)
    assert (delete.destructive_hint, delete.read_only_hint) == (True, False)
    search = tools["search_notes"].annotations
    assert isinstance(search, t.ToolAnnotations) and search.read_only_hint is True
    add = tools["add_note"]
    assert json_object(add.input_schema)["required"] == ["title", "body"]
    assert not isinstance(add.output_schema, msgspec.UnsetType)
    assert json_object(add.output_schema)["properties"]["id"] == {"type": "string"}
    slow_count_schema = json_object(tools["slow_count"].input_schema)
    assert slow_count_schema["properties"]["to"]["maximum"] == 1000


async def test_add_search_and_delete_notes(notes: Server) -> None:
    """2025-11-25 server/tools.mdx §Calling Tools, §Structured Content, §Error Handling (isError)."""
    async with Client(notes) as client:
        added = await client.call("add_note", {"title": "Buy milk", "body": "2 litres"})
        assert json_value(added.structured_content) == {
            "id": "buy-milk",
            "title": "Buy milk",
            "body": "2 litres",
            "tags": [],
        }
        again = await client.call("add_note", {"title": "Buy milk!", "body": "", "tags": ["Todo"]})
        again_note = structured(again)
        assert again_note["id"] == "buy-milk-2"
        assert again_note["tags"] == ["todo"]

        found = await client.call("search_notes", {"query": "MILK litres"})
        assert json_value(found.structured_content) == {
            "result": [json_value(added.structured_content)]
        }
        limited = await client.call("search_notes", {"query": "milk", "limit": 1})
        assert len(structured(limited)["result"]) == 1

        deleted = await client.call("delete_note", {"id": "buy-milk"})
        assert deleted.is_error is not True and "buy-milk" in text(deleted)
        missing = await client.call("delete_note", {"id": "buy-milk"})
        assert missing.is_error is True and "No note with id 'buy-milk'" in text(missing)
        blank = await client.call("add_note", {"title": "   ", "body": "x"})
        assert blank.is_error is True and "non-empty title" in text(blank)
        await assert_refused(client.call("search_notes", {"query": "x", "limit": 0}), "limit")


async def test_slow_count_reports_progress(notes: Server) -> None:
    """2025-11-25 basic/utilities/progress.mdx: progress increases with each notification, with the total."""
    seen, options = progress_recorder()
    async with Client(notes) as client:
        result = await client.call("slow_count", {"to": 5, "delay": 0}, options=options)
        assert json_value(result.structured_content) == {"result": 5}
        await assert_refused(client.call("slow_count", {"to": 0}), "to")
    assert seen == [(i, 5) for i in range(1, 6)]


async def test_adding_and_deleting_notes_changes_the_resource_list(notes: Server) -> None:
    """2025-11-25 server/resources.mdx §List Changed Notification, §Listing Resources (the
    handshake era: list_changed arrives unasked)."""
    rec = Recorder()
    async with Client(notes, handlers=rec.handlers(), protocol_version=LATEST_HANDSHAKE) as client:
        caps = client.server_capabilities
        assert caps is not None and isinstance(caps.resources, t.ServerCapabilitiesResources)
        assert caps.resources.list_changed is True
        assert [r.uri async for r in client.iter_resources()] == ["notes://index"]

        await client.call("add_note", {"title": "Plan", "body": "Ship it"})
        await rec.list_changed()
        listed = [r async for r in client.iter_resources()]
        assert [r.uri for r in listed] == ["notes://index", "notes://plan"]
        assert (listed[1].title, listed[1].mime_type, listed[1].description) == (
            "Plan",
            "text/markdown",
            "Ship it",
        )

        await client.call("delete_note", {"id": "plan"})
        await rec.list_changed()
        assert [r.uri async for r in client.iter_resources()] == ["notes://index"]
    assert rec.methods.count("notifications/resources/list_changed") == 2


async def test_notes_index_and_template(notes: Server) -> None:
    """2025-11-25 server/resources.mdx §Reading Resources, §Resource Templates, §Error Handling (-32002)."""
    async with Client(notes, protocol_version=LATEST_HANDSHAKE) as client:  # 2026-07-28 uses -32602
        assert "No notes yet" in text(await read(client, "notes://index"))
        await client.call("add_note", {"title": "Index", "body": "not the index", "tags": ["a"]})
        index = await read(client, "notes://index")
        assert "[Index](notes://index-2) (a)" in text(index)
        contents = index.contents[0]
        assert isinstance(contents, t.TextResourceContents)
        assert (contents.uri, contents.mime_type) == ("notes://index", "text/markdown")

        templates = [tpl async for tpl in client.iter_resource_templates()]
        assert [tpl.uri_template for tpl in templates] == ["notes://{id}"]
        assert text(await read(client, "notes://index-2")).startswith("# Index\n\nnot the index")

        with pytest.raises(McpError) as err:
            await read(client, "notes://nope")
        assert err.value.code == -32002
        assert err.value.data == {"uri": "notes://nope"}


async def test_summarize_notes_prompt(notes: Server) -> None:
    """2025-11-25 server/prompts.mdx §Listing Prompts, §Getting a Prompt (embedded resources), §Error Handling."""
    async with Client(notes) as client:
        prompts = [p async for p in client.iter_prompts()]
        assert [p.name for p in prompts] == ["summarize_notes"]
        assert prompts[0].arguments == [
            t.PromptArgument(
                name="tag",
                required=False,
                description="Only notes with this tag (default: all notes)",
            )
        ]
        await client.call("add_note", {"title": "A", "body": "one", "tags": ["work"]})
        await client.call("add_note", {"title": "B", "body": "two"})

        everything = await client.get_prompt(t.GetPromptRequestParams(name="summarize_notes"))
        assert len(everything.messages) == 3
        assert all(m.role == "user" for m in everything.messages)

        work = await client.get_prompt(
            t.GetPromptRequestParams(name="summarize_notes", arguments={"tag": "Work"})
        )
        intro, note = work.messages
        assert isinstance(intro.content, t.TextContent) and "1 note(s)" in intro.content.text
        assert isinstance(note.content, t.EmbeddedResource)
        assert isinstance(note.content.resource, t.TextResourceContents)
        assert note.content.resource.uri == "notes://a"

        none = await client.get_prompt(
            t.GetPromptRequestParams(name="summarize_notes", arguments={"tag": "nothing"})
        )
        assert len(none.messages) == 1
        with pytest.raises(McpError) as err:
            await client.get_prompt(t.GetPromptRequestParams(name="nope"))
        assert err.value.code == -32602


async def test_completion_of_note_ids_and_tags(notes: Server) -> None:
    """2025-11-25 server/utilities/completion.mdx §Requesting Completions, §Reference Types, §Error Handling."""
    async with Client(notes) as client:
        caps = client.server_capabilities
        assert caps is not None and caps.completions == {}
        for title, tags in (("Shopping", ["home"]), ("Shipping", ["work"]), ("Taxes", ["home"])):
            await client.call("add_note", {"title": title, "body": "", "tags": tags})
        template = t.ResourceTemplateReference(uri="notes://{id}")
        assert await complete(client, template, "id", "sh") == ["shopping", "shipping"]
        assert await complete(client, template, "id", "") == ["shopping", "shipping", "taxes"]
        assert await complete(client, template, "id", "zzz") == []
        prompt = t.PromptReference(name="summarize_notes")
        assert await complete(client, prompt, "tag", "H") == ["home"]
        assert await complete(client, prompt, "other", "") == []
        for ref in (t.PromptReference(name="nope"), t.ResourceTemplateReference(uri="x://{y}")):
            with pytest.raises(McpError) as err:
                await complete(client, ref, "a", "")
            assert err.value.code == -32602


async def test_tools_log_through_the_context(notes: Server) -> None:
    """2025-11-25 server/utilities/logging.mdx §Setting Log Level, §Log Message Notifications."""
    rec = Recorder()
    async with Client(notes, handlers=rec.handlers()) as client:
        caps = client.server_capabilities
        assert caps is not None and caps.logging == {}
        await client.call("add_note", {"title": "Quiet", "body": ""})
        assert rec.logs == []  # no level set: nothing sent
        await client.set_level(t.SetLevelRequestParams(level="info"))
        await client.call("add_note", {"title": "Loud", "body": ""})
        await client.call("search_notes", {"query": "loud"})
        await client.set_level(t.SetLevelRequestParams(level="warning"))
        await client.call("delete_note", {"id": "loud"})
    assert [(m.level, m.data) for m in rec.logs] == [
        ("info", "added note 'loud'"),
        ("info", "search 'loud': 1 hit(s)"),
    ]


async def test_module_level_notes_server_is_seeded() -> None:
    """2025-11-25 server/resources.mdx §Reading Resources: the demo server (``examples.notes_server.server``)."""
    async with Client(notes_server.server) as client:
        assert client.server_info is not None and client.server_info.name == "mcpbind-notes"
        assert client.instructions is not None and "notes://index" in client.instructions
        assert "notes://welcome" in text(await read(client, "notes://index"))
        assert text(await read(client, "notes://welcome")).startswith("# Welcome")


# ---------------------------------------------------------------------- notes: over stdio
async def test_notes_server_over_stdio_as_a_module() -> None:
    """2025-11-25 basic/transports.mdx §stdio: ``python -m examples.notes_server``, with progress and list_changed."""
    rec = Recorder()
    seen, options = progress_recorder()
    async with (
        spawn(["-m", "examples.notes_server"]) as transport,
        Client(transport, handlers=rec.handlers(), protocol_version=LATEST_HANDSHAKE) as client,
    ):
        assert client.server_info is not None
        assert client.server_info.name == "mcpbind-notes"
        await client.set_level(t.SetLevelRequestParams(level="info"))
        added = await client.call("add_note", {"title": "Over stdio", "body": "hi"})
        assert structured(added)["id"] == "over-stdio"
        await rec.list_changed()
        uris = [r.uri async for r in client.iter_resources()]
        assert uris == ["notes://index", "notes://welcome", "notes://over-stdio"]
        assert text(await read(client, "notes://over-stdio")) == "# Over stdio\n\nhi\n"
        counted = await client.call("slow_count", {"to": 3, "delay": 0}, options=options)
        assert json_value(counted.structured_content) == {"result": 3}
        ids = await complete(client, t.ResourceTemplateReference(uri="notes://{id}"), "id", "o")
        assert ids == ["over-stdio"]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [m.data for m in rec.logs] == ["added note 'over-stdio'"]


async def test_notes_server_runs_as_a_script() -> None:
    """2025-11-25 basic/transports.mdx §stdio: ``python examples/notes_server.py`` works too."""
    async with (
        spawn([str(ROOT / "examples" / "notes_server.py")]) as transport,
        Client(transport) as client,
    ):
        names = [tool.name async for tool in client.iter_tools()]
        assert "slow_count" in names


# ---------------------------------------------------------------------- files: in memory
@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root/`` to serve, and ``outside/secret.txt`` next to it that must stay unreachable."""
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n")
    (root / "hello.txt").write_text("hello\n")
    (root / "data.bin").write_bytes(b"\x00\xff" * 8)
    (root / "big.txt").write_text("x" * 2048)
    (root / "link-inside.txt").symlink_to("hello.txt")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    (root / "escape").symlink_to(outside)
    (root / "escape.txt").symlink_to(outside / "secret.txt")
    return root


@pytest.fixture
def files(tree: Path) -> Server:
    return files_server.create_server(tree, max_bytes=1024)


async def test_files_tools(files: Server, tree: Path) -> None:
    """2025-11-25 server/tools.mdx §Calling Tools, §Structured Content: list_dir, read_file, stat."""
    async with Client(files) as client:
        tools = {tool.name: tool async for tool in client.iter_tools()}
        assert set(tools) == {"list_dir", "read_file", "stat"}
        for tool in tools.values():
            assert isinstance(tool.annotations, t.ToolAnnotations)
            assert tool.annotations.read_only_hint is True

        listing = await client.call("list_dir", {})
        entries = {e["name"]: e for e in structured(listing)["entries"]}
        assert list(entries) == sorted(entries)
        assert entries["docs"]["type"] == "directory"
        assert entries["hello.txt"] == {
            "name": "hello.txt",
            "path": "hello.txt",
            "type": "file",
            "size": 6,
            "uri": (tree / "hello.txt").as_uri(),
        }
        assert entries["escape"]["type"] == "symlink"
        docs = await client.call("list_dir", {"path": "docs"})
        assert [e["path"] for e in structured(docs)["entries"]] == ["docs/guide.md"]

        assert text(await client.call("read_file", {"path": "docs/guide.md"})) == "# Guide\n"
        assert text(await client.call("read_file", {"path": "link-inside.txt"})) == "hello\n"
        absolute = str(tree / "hello.txt")  # absolute paths inside the root are fine
        assert text(await client.call("read_file", {"path": absolute})) == "hello\n"

        info = await client.call("stat", {"path": "docs/guide.md"})
        info_content = structured(info)
        assert info_content["size"] == 8
        assert info_content["type"] == "file"
        assert info_content["mime_type"] == "text/markdown"
        root_info = await client.call("stat", {"path": "."})
        assert structured(root_info)["mime_type"] == "inode/directory"

        for call, needle in (
            (client.call("read_file", {"path": "big.txt"}), "over this server's limit of 1024"),
            (client.call("read_file", {"path": "data.bin"}), "not UTF-8"),
            (client.call("read_file", {"path": "docs"}), "is a directory"),
            (client.call("read_file", {"path": "missing.txt"}), "No such file"),
            (client.call("list_dir", {"path": "hello.txt"}), "is a file"),
        ):
            result = await call
            assert result.is_error is True and needle in text(result)


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "docs/../../outside/secret.txt",
        "..",
        "escape/secret.txt",
        "escape.txt",
        "escape",
        "OUTSIDE",  # replaced by the absolute path of the sibling directory's secret
    ],
)
@pytest.mark.parametrize("tool", ["read_file", "list_dir", "stat"])
async def test_files_tools_refuse_paths_outside_the_root(
    files: Server, tree: Path, tool: str, path: str
) -> None:
    """2025-11-25 server/tools.mdx §Security Considerations (servers MUST validate all tool inputs): no traversal."""
    if path == "OUTSIDE":
        path = str(tree.parent / "outside" / "secret.txt")
    async with Client(files) as client:
        message = await assert_refused(client.call(tool, {"path": path}), "refused", repr(path))
    assert "TOP SECRET" not in message and "root:" not in message


async def test_files_resources(files: Server, tree: Path) -> None:
    """2025-11-25 server/resources.mdx §Resource Templates, §Common URI Schemes (file://), §Resource Contents."""
    async with Client(
        files, protocol_version=LATEST_HANDSHAKE
    ) as client:  # -32002: the handshake era
        templates = [tpl async for tpl in client.iter_resource_templates()]
        assert [tpl.uri_template for tpl in templates] == ["file:///{+path}"]
        resources = [r async for r in client.iter_resources()]
        assert [(r.uri, r.mime_type) for r in resources] == [(tree.as_uri(), "inode/directory")]
        assert "docs/\n" in text(await read(client, tree.as_uri()))

        guide = (await read(client, (tree / "docs" / "guide.md").as_uri())).contents
        assert guide == [
            t.TextResourceContents(
                uri=(tree / "docs" / "guide.md").as_uri(),
                text="# Guide\n",
                mime_type="text/markdown",
            )
        ]
        (blob,) = (await read(client, (tree / "data.bin").as_uri())).contents
        assert isinstance(blob, t.BlobResourceContents)
        assert blob.blob == "AP8A/wD/AP8A/wD/AP8A/w=="
        docs = (await read(client, (tree / "docs").as_uri())).contents[0]
        assert isinstance(docs, t.TextResourceContents)
        assert (docs.text, docs.mime_type) == ("guide.md", "inode/directory")

        with pytest.raises(McpError) as err:
            await read(client, (tree / "missing.txt").as_uri())
        assert err.value.code == -32002
        with pytest.raises(McpError) as err:
            await read(client, (tree / "big.txt").as_uri())
        assert err.value.code == -32602 and "limit" in err.value.message


@pytest.mark.parametrize(
    "uri",
    [
        "file:///etc/passwd",
        "ROOT/../outside/secret.txt",
        "ROOT/%2e%2e/outside/secret.txt",
        "ROOT/escape/secret.txt",
        "ROOT/escape.txt",
        "ROOT/escape",
    ],
)
async def test_files_resources_refuse_uris_outside_the_root(
    files: Server, tree: Path, uri: str
) -> None:
    """2025-11-25 server/resources.mdx §Security Considerations: servers MUST validate all resource URIs."""
    uri = uri.replace("ROOT", tree.as_uri())
    async with Client(files) as client:
        with pytest.raises(McpError) as err:
            await read(client, uri)
    assert err.value.code == -32602
    assert "refused" in err.value.message
    assert isinstance(err.value.data, dict) and "uri" in err.value.data


async def test_files_special_files_are_not_read(files: Server, tree: Path) -> None:
    """2025-11-25 server/tools.mdx §Error Handling: a FIFO is refused at once instead of blocking the server."""
    os.mkfifo(tree / "pipe")
    async with Client(files) as client:
        with anyio.fail_after(TIMEOUT):
            result = await client.call("read_file", {"path": "pipe"})
    assert result.is_error is True and "not a regular file" in text(result)


def test_files_root_must_be_a_directory(tmp_path: Path) -> None:
    """The server refuses to start on a root that is not a directory."""
    with pytest.raises(ValueError, match="not a directory"):
        files_server.create_server(tmp_path / "missing")


# ---------------------------------------------------------------------- files: over stdio
async def _browse(client: Client, tree: Path) -> None:
    listing = await client.call("list_dir", {"path": "docs"})
    assert structured(listing)["entries"][0]["name"] == "guide.md"
    for path in ("../../etc/passwd", "/etc/passwd", "escape.txt"):
        await assert_refused(client.call("read_file", {"path": path}), "refused")
    with pytest.raises(McpError) as err:
        await read(client, "file:///etc/passwd")
    assert err.value.code == -32602


async def test_files_server_over_stdio_with_root_option(tree: Path) -> None:
    """2025-11-25 basic/transports.mdx §stdio: ``python -m examples.files_server --root DIR``."""
    async with (
        spawn(["-m", "examples.files_server", "--root", str(tree)]) as transport,
        Client(transport) as client,
    ):
        assert client.server_info is not None
        assert client.server_info.name == "mcpbind-files"
        await _browse(client, tree)


async def test_files_server_over_stdio_with_root_from_environment(tree: Path) -> None:
    """2025-11-25 basic/transports.mdx §stdio: ``MCPBIND_FILES_ROOT=DIR python examples/files_server.py``."""
    script = str(ROOT / "examples" / "files_server.py")
    env = {files_server.ENV_ROOT: str(tree)}
    async with spawn([script], env=env) as transport, Client(transport) as client:
        await _browse(client, tree)
        assert text(await client.call("read_file", {"path": "hello.txt"})) == "hello\n"
