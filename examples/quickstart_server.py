"""A small server: a tool with structured output, a resource, a template, a prompt."""

from dataclasses import dataclass

from mcpbind import Context, Server, serve_stdio

server = Server("quickstart", version="1.0.0")
notes: dict[str, str] = {"hello": "Hello, MCP!"}


@dataclass
class Note:
    id: str
    text: str


@server.tool()
async def add_note(id: str, text: str, ctx: Context) -> Note:
    """Store a note and return it."""  # the input schema comes from the type hints
    await ctx.info(f"adding {id}")  # a log message, if the client set a level
    notes[id] = text
    server.resource_updated(f"notes://{id}")  # tell subscribers
    return Note(id, text)  # structuredContent {"id": ..., "text": ...} + its text copy


@server.tool()
def count_notes() -> int:
    """How many notes there are."""  # a plain def runs in a worker thread
    return len(notes)  # not an object: structuredContent {"result": 1}


@server.resource("notes://index", mime_type="text/plain")
def index() -> str:
    """Every note id, one per line."""
    return "\n".join(sorted(notes))


@server.resource_template("notes://{id}")
def note(id: str) -> str:
    return notes[id]


@server.prompt()
def summarize(style: str = "short") -> str:
    """Ask the model to summarize the notes."""
    return f"Summarize these notes ({style}):\n" + "\n".join(notes.values())


if __name__ == "__main__":
    serve_stdio(server)  # or: mcpbind serve quickstart_server.py [--http 8000]
