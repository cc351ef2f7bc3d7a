"""An in-memory notes server: tools, resources, a resource template, a prompt, completion and
logging, in one small file.

Run it over stdio, from the repository root::

    python -m examples.notes_server
    python examples/notes_server.py

What it shows (spec 2025-11-25):

* ``server/tools.mdx``: ``add_note`` (structured output from a dataclass), ``search_notes``,
  ``delete_note`` (``destructiveHint``), ``slow_count`` (progress notifications); business
  errors come back as tool results with ``isError: true``.
* ``server/resources.mdx``: ``notes://index``, one listed resource per note (adding or deleting
  a note sends ``notifications/resources/list_changed``) and the template ``notes://{id}``;
  an unknown note is error ``-32002``.
* ``server/prompts.mdx``: ``summarize_notes`` embeds the notes as resources.
* ``server/utilities/completion.mdx``: note ids for ``notes://{id}``, tags for the prompt.
* ``server/utilities/logging.mdx``: ``ctx.info`` reaches clients that set a level.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated

import anyio
import msgspec

from mcpbind import Context, McpError, Server, ToolExecutionError, serve_stdio
from mcpbind import types as t

__all__ = ["SAMPLE_NOTES", "Note", "NoteStore", "create_server", "main", "server"]

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002
NOTE_TEMPLATE = "notes://{id}"
INDEX_URI = "notes://index"
MIME = "text/markdown"

SAMPLE_NOTES: tuple[tuple[str, str, list[str]], ...] = (
    (
        "Welcome",
        "This is the mcpbind notes example. Try the add_note and search_notes tools.",
        ["mcpbind", "example"],
    ),
)


@dataclass(slots=True)
class Note:
    """A note. Its id is a slug of its title, unique in the store."""

    id: str
    title: str
    body: str
    tags: list[str] = field(default_factory=list)

    @property
    def uri(self) -> str:
        return f"notes://{self.id}"

    def render(self) -> str:
        tags = f"\n\ntags: {', '.join(self.tags)}" if self.tags else ""
        return f"# {self.title}\n\n{self.body}{tags}\n"


class NoteStore:
    """The notes, in insertion order. Not persistent: a restart starts over."""

    def __init__(self) -> None:
        self.notes: dict[str, Note] = {}

    def add(self, title: str, body: str, tags: Iterable[str] = ()) -> Note:
        title = title.strip()
        if not title:
            raise ToolExecutionError("A note needs a non-empty title")
        base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "note"
        note_id, n = base, 1
        while note_id in self.notes or note_id == "index":  # notes://index is the index
            n += 1
            note_id = f"{base}-{n}"
        clean_tags = sorted({tag.strip().lower() for tag in tags if tag.strip()})
        note = Note(id=note_id, title=title, body=body, tags=clean_tags)
        self.notes[note_id] = note
        return note

    def get(self, note_id: str) -> Note | None:
        return self.notes.get(note_id)

    def delete(self, note_id: str) -> Note | None:
        return self.notes.pop(note_id, None)

    def search(self, query: str, limit: int) -> list[Note]:
        words = query.lower().split()
        hits = [
            note
            for note in self.notes.values()
            if all(
                w in note.title.lower() or w in note.body.lower() or w in note.tags for w in words
            )
        ]
        return hits[:limit]

    def tags(self) -> list[str]:
        return sorted({tag for note in self.notes.values() for tag in note.tags})


def create_server(seed: Iterable[tuple[str, str, list[str]]] = SAMPLE_NOTES) -> Server:
    """A fresh notes server with its own store (tests build one each; ``server`` is the demo)."""
    notes = NoteStore()
    server = Server(
        "mcpbind-notes",
        version="1.0.0",
        title="Notes",
        instructions=(
            "A scratch pad of notes. Use search_notes before add_note to avoid duplicates; "
            "read notes://index for an overview and notes://<id> for one note."
        ),
    )

    # ------------------------------------------------------------------ resources
    def publish(note: Note) -> None:
        """List the note as its own resource: registering sends resources/list_changed."""

        def read() -> str:
            return note.render()

        server.resource(
            note.uri, name=note.id, title=note.title, description=_summary(note), mime_type=MIME
        )(read)

    def unpublish(note: Note) -> None:
        if note.uri in server.resources:
            server.remove_resource(note.uri)  # announces resources/list_changed

    @server.resource(INDEX_URI, title="All notes", mime_type=MIME)
    def index() -> str:
        """Every note: id, title and tags, as a Markdown list."""
        if not notes.notes:
            return "# Notes\n\nNo notes yet.\n"
        lines = [
            f"- [{n.title}]({n.uri})" + (f" ({', '.join(n.tags)})" if n.tags else "")
            for n in notes.notes.values()
        ]
        return "# Notes\n\n" + "\n".join(lines) + "\n"

    @server.resource_template(NOTE_TEMPLATE, title="A note", mime_type=MIME)
    def note(id: str) -> str:
        """One note by id, as Markdown."""
        found = notes.get(id)
        if found is None:
            uri = f"notes://{id}"
            raise McpError(RESOURCE_NOT_FOUND, f"No note with id {id!r}", {"uri": uri})
        return found.render()

    # ------------------------------------------------------------------ tools
    @server.tool(
        title="Add a note",
        annotations=t.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False
        ),
    )
    async def add_note(
        title: Annotated[str, "A short title; the note's id is derived from it"],
        body: Annotated[str, "The text of the note (Markdown)"],
        ctx: Context,
        tags: Annotated[list[str] | None, "Optional tags, e.g. ['todo', 'work']"] = None,
    ) -> Note:
        """Add a note and return it, with the id to read it as notes://<id>."""
        added = notes.add(title, body, tags or ())
        publish(added)
        await ctx.info(f"added note {added.id!r}")
        return added

    @server.tool(title="Search notes", annotations=t.ToolAnnotations(read_only_hint=True))
    async def search_notes(
        query: Annotated[str, "Words that must all appear in the title, body or tags"],
        ctx: Context,
        limit: Annotated[int, msgspec.Meta(ge=1, le=100, description="At most this many")] = 10,
    ) -> list[Note]:
        """Find notes containing every word of the query (case-insensitive)."""
        hits = notes.search(query, limit)
        await ctx.info(f"search {query!r}: {len(hits)} hit(s)")
        return hits

    @server.tool(
        title="Delete a note",
        structured_output=False,
        annotations=t.ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True
        ),
    )
    async def delete_note(id: Annotated[str, "The id of the note"], ctx: Context) -> str:
        """Delete a note for good."""
        removed = notes.delete(id)
        if removed is None:
            raise ToolExecutionError(f"No note with id {id!r}; search_notes lists the ids")
        unpublish(removed)
        await ctx.info(f"deleted note {id!r}")
        return f"Deleted note {id!r} ({removed.title})"

    @server.tool(title="Count slowly", annotations=t.ToolAnnotations(read_only_hint=True))
    async def slow_count(
        to: Annotated[int, msgspec.Meta(ge=1, le=1000, description="Count from 1 to this")],
        ctx: Context,
        delay: Annotated[
            float, msgspec.Meta(ge=0, le=1, description="Seconds between steps")
        ] = 0.01,
    ) -> int:
        """Count from 1 to `to`, reporting progress at every step (a stand-in for a long job)."""
        for i in range(1, to + 1):
            await anyio.sleep(delay)
            await ctx.report_progress(i, to, f"counted {i} of {to}")
        return to

    # ------------------------------------------------------------------ prompts
    @server.prompt(title="Summarize notes")
    def summarize_notes(
        tag: Annotated[str | None, "Only notes with this tag (default: all notes)"] = None,
    ) -> list[t.PromptMessage]:
        """Ask the model for a short summary of the notes, embedded as resources."""
        wanted = (tag or "").strip().lower() or None
        chosen = [n for n in notes.notes.values() if wanted is None or wanted in n.tags]
        scope = f"tagged {wanted!r}" if wanted else "in my notebook"
        if not chosen:
            return [_user(t.TextContent(text=f"I have no notes {scope}. Say so briefly."))]
        intro = f"Summarize these {len(chosen)} note(s) {scope} in a few bullet points."
        embedded = [
            t.EmbeddedResource(
                resource=t.TextResourceContents(uri=n.uri, text=n.render(), mime_type=MIME)
            )
            for n in chosen
        ]
        return [_user(t.TextContent(text=intro)), *(_user(e) for e in embedded)]

    # ------------------------------------------------------------------ completion
    @server.completion()
    async def complete(
        ref: t.PromptReference | t.ResourceTemplateReference,
        argument: t.CompleteRequestParamsArgument,
        context: object,
    ) -> list[str]:
        """Note ids for ``notes://{id}``, tags for ``summarize_notes``; prefix match."""
        if isinstance(ref, t.ResourceTemplateReference):
            if ref.uri != NOTE_TEMPLATE:
                raise McpError(INVALID_PARAMS, f"Unknown resource template: {ref.uri}")
            candidates = list(notes.notes) if argument.name == "id" else []
        else:
            if ref.name not in server.prompts:
                raise McpError(INVALID_PARAMS, f"Unknown prompt: {ref.name}")
            candidates = notes.tags() if argument.name == "tag" else []
        prefix = argument.value.lower()
        return [value for value in candidates if value.startswith(prefix)]

    for title, body, tags in seed:
        publish(notes.add(title, body, tags))
    return server


def _summary(note: Note) -> str:
    first = note.body.strip().splitlines()[0] if note.body.strip() else note.title
    return first if len(first) <= 80 else first[:77] + "..."


def _user(content: t.TextContent | t.EmbeddedResource) -> t.PromptMessage:
    return t.PromptMessage(role="user", content=content)


server = create_server()
"""The demo server (seeded with :data:`SAMPLE_NOTES`), served by ``main``."""


def main() -> None:
    serve_stdio(server)


if __name__ == "__main__":
    main()
