"""A read-only file browser confined to one directory tree.

Run it over stdio, from the repository root::

    python -m examples.files_server --root ~/projects/demo
    MCPBIND_FILES_ROOT=~/projects/demo python examples/files_server.py

The root is ``--root``, else ``$MCPBIND_FILES_ROOT``, else the current directory. Nothing
outside it can be read: paths are resolved with ``os.path.realpath`` (so symbolic links are
followed to where they really point) and must stay under the root's own real path; a ``..``
segment is refused outright. Files larger than ``--max-bytes`` (1 MiB by default) are refused
rather than truncated.

What it shows (spec 2025-11-25):

* ``server/tools.mdx``: ``list_dir``, ``read_file`` and ``stat``, all ``readOnlyHint``, with
  structured output; a refused or missing path is a tool result with ``isError: true`` (a tool
  execution error the model can correct), per §Error Handling.
* ``server/resources.mdx``: the root as a resource and the template ``file:///{+path}``
  (§Common URI Schemes, file://: directories are ``inode/directory``); binary files are base64
  blobs. A path outside the root is ``-32602``, a missing file ``-32002`` (§Error Handling), and
  §Security Considerations: "Servers MUST validate all resource URIs".
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import mimetypes
import os
import stat as st
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from mcpbind import McpError, Server, ToolExecutionError, serve_stdio
from mcpbind import types as t

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENV_ROOT",
    "Entry",
    "FileAccessError",
    "FileInfo",
    "Listing",
    "Root",
    "create_server",
    "main",
]  # and ``server``, built on first access (see ``__getattr__``)

ENV_ROOT = "MCPBIND_FILES_ROOT"
DEFAULT_MAX_BYTES = 1024 * 1024
MAX_ENTRIES = 1000
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002
DIRECTORY_MIME = "inode/directory"

Kind = Literal["file", "directory", "symlink", "other"]


class FileAccessError(ToolExecutionError, ValueError):
    """A path the server will not or cannot serve; the message is safe to show the model."""

    code = INVALID_PARAMS


class NotFound(FileAccessError):
    code = RESOURCE_NOT_FOUND


@dataclass(slots=True)
class Entry:
    """One directory entry. Symbolic links are reported as such, not followed."""

    name: str
    path: str
    type: Kind
    size: int | None
    uri: str


@dataclass(slots=True)
class Listing:
    path: str
    entries: list[Entry]
    truncated: bool


@dataclass(slots=True)
class FileInfo:
    path: str
    type: Kind
    size: int
    modified: str
    mime_type: str | None
    uri: str


class Root:
    """The served directory: turns client paths into real paths under it, or refuses."""

    def __init__(self, path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        real = os.path.realpath(os.path.expanduser(path))
        if not os.path.isdir(real):
            raise ValueError(f"root {os.fspath(path)!r} is not a directory")
        self.path = real
        self.max_bytes = max_bytes

    def resolve(self, path: str) -> str:
        """The real path of ``path`` (relative to the root, or absolute inside it)."""
        if "\x00" in path:
            raise FileAccessError("Path contains a NUL character")
        if ".." in Path(path).parts:
            raise FileAccessError(f"Path {path!r} is refused: '..' segments are not allowed")
        joined = os.path.join(self.path, path)  # an absolute ``path`` replaces the root here
        real = os.path.realpath(joined)
        if os.path.commonpath([self.path, real]) != self.path:
            raise FileAccessError(f"Path {path!r} is refused: it resolves outside the served root")
        return real

    def relative(self, real: str) -> str:
        rel = os.path.relpath(real, self.path)
        return "." if rel == os.curdir else Path(rel).as_posix()

    def stat(self, path: str) -> tuple[str, os.stat_result]:
        real = self.resolve(path)
        try:
            return real, os.stat(real)
        except FileNotFoundError:
            raise NotFound(f"No such file or directory: {path!r}") from None
        except OSError as exc:
            raise FileAccessError(f"Cannot access {path!r}: {exc.strerror}") from None

    def read_bytes(self, path: str) -> tuple[str, bytes]:
        """A regular file's contents, at most ``max_bytes``."""
        real = self.resolve(path)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(real, flags)
        except FileNotFoundError:
            raise NotFound(f"No such file: {path!r}") from None
        except IsADirectoryError:
            raise FileAccessError(f"{path!r} is a directory; use list_dir") from None
        except OSError as exc:
            raise FileAccessError(f"Cannot open {path!r}: {exc.strerror}") from None
        try:
            info = os.fstat(fd)  # the opened file itself: no race with a rename or symlink
            if st.S_ISDIR(info.st_mode):
                raise FileAccessError(f"{path!r} is a directory; use list_dir")
            if not st.S_ISREG(info.st_mode):
                raise FileAccessError(f"{path!r} is not a regular file")
            data = _read_at_most(fd, self.max_bytes + 1)  # it may have grown since fstat
        finally:
            os.close(fd)
        if info.st_size > self.max_bytes or len(data) > self.max_bytes:
            size = max(info.st_size, len(data))
            raise FileAccessError(
                f"{path!r} is {size} bytes, over this server's limit of {self.max_bytes} bytes"
            )
        return real, data

    def list(self, path: str) -> Listing:
        real = self.resolve(path)
        entries: list[Entry] = []
        truncated = False
        try:
            with os.scandir(real) as it:
                for item in sorted(it, key=lambda e: e.name):
                    if len(entries) == MAX_ENTRIES:
                        truncated = True
                        break
                    entries.append(self._entry(item))
        except FileNotFoundError:
            raise NotFound(f"No such directory: {path!r}") from None
        except NotADirectoryError:
            raise FileAccessError(f"{path!r} is a file; use read_file") from None
        except OSError as exc:
            raise FileAccessError(f"Cannot list {path!r}: {exc.strerror}") from None
        return Listing(path=self.relative(real), entries=entries, truncated=truncated)

    def _entry(self, item: os.DirEntry[str]) -> Entry:
        kind: Kind
        size: int | None = None
        if item.is_symlink():
            kind = "symlink"
        elif item.is_dir(follow_symlinks=False):
            kind = "directory"
        elif item.is_file(follow_symlinks=False):
            kind = "file"
            with contextlib.suppress(OSError):
                size = item.stat(follow_symlinks=False).st_size
        else:
            kind = "other"
        # A symlink's URI is its own path; reading it resolves (and checks) the target.
        return Entry(
            name=item.name,
            path=self.relative(item.path),
            type=kind,
            size=size,
            uri=Path(item.path).as_uri(),
        )


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    while limit > 0 and (chunk := os.read(fd, min(limit, 64 * 1024))):
        chunks.append(chunk)
        limit -= len(chunk)
    return b"".join(chunks)


def _kind(mode: int) -> Kind:
    if st.S_ISDIR(mode):
        return "directory"
    return "file" if st.S_ISREG(mode) else "other"


def _mime(real: str) -> str | None:
    return mimetypes.guess_type(real, strict=False)[0]


def create_server(
    root: str | os.PathLike[str] | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> Server:
    """A file server for ``root`` (default: ``$MCPBIND_FILES_ROOT``, else the current directory)."""
    jail = Root(root if root is not None else os.environ.get(ENV_ROOT) or os.getcwd(), max_bytes)
    root_uri = Path(jail.path).as_uri()
    server = Server(
        "mcpbind-files",
        version="1.0.0",
        title="Files",
        instructions=(
            f"Read-only access to the files under {jail.path}. Paths are relative to that "
            "directory (absolute paths inside it also work); start with list_dir('.')."
        ),
    )
    read_only = t.ToolAnnotations(read_only_hint=True, open_world_hint=False)

    # ------------------------------------------------------------------ tools
    @server.tool(title="List a directory", annotations=read_only)
    def list_dir(
        path: Annotated[str, "A directory, relative to the root ('.' is the root)"] = ".",
    ) -> Listing:
        """List a directory: names, types and sizes, sorted by name."""
        return jail.list(path)

    @server.tool(title="Read a text file", annotations=read_only, structured_output=False)
    def read_file(path: Annotated[str, "A file, relative to the root"]) -> str:
        """Return the text of a UTF-8 file (binary files: read their file:// resource)."""
        real, data = jail.read_bytes(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            uri = Path(real).as_uri()
            raise FileAccessError(
                f"{path!r} is not UTF-8 text; read the resource {uri} for its bytes"
            ) from None

    @server.tool(title="File information", annotations=read_only)
    def stat(path: Annotated[str, "A file or directory, relative to the root"]) -> FileInfo:
        """Type, size, modification time (UTC, ISO 8601) and guessed MIME type of a path."""
        real, info = jail.stat(path)
        kind = _kind(info.st_mode)
        return FileInfo(
            path=jail.relative(real),
            type=kind,
            size=info.st_size,
            modified=datetime.fromtimestamp(info.st_mtime, UTC).isoformat(),
            mime_type=DIRECTORY_MIME if kind == "directory" else _mime(real),
            uri=Path(real).as_uri(),
        )

    # ------------------------------------------------------------------ resources
    def read_uri(uri: str, path: str) -> t.TextResourceContents | t.BlobResourceContents:
        try:
            real, info = jail.stat(path)
            if st.S_ISDIR(info.st_mode):
                listing = jail.list(path)
                lines = [e.name + ("/" if e.type == "directory" else "") for e in listing.entries]
                text = "\n".join(lines) + ("\n..." if listing.truncated else "")
                return t.TextResourceContents(uri=uri, text=text, mime_type=DIRECTORY_MIME)
            real, data = jail.read_bytes(path)
        except FileAccessError as exc:
            raise McpError(exc.code, str(exc), {"uri": uri}) from None
        mime = _mime(real)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            blob = t.BlobResourceContents(uri=uri, blob=base64.b64encode(data).decode("ascii"))
            blob.mime_type = mime or "application/octet-stream"
            return blob
        return t.TextResourceContents(uri=uri, text=text, mime_type=mime or "text/plain")

    @server.resource(root_uri, name="root", title="The served root", mime_type=DIRECTORY_MIME)
    def root_listing() -> t.TextResourceContents | t.BlobResourceContents:
        """The top-level directory this server shares, one entry per line."""
        return read_uri(root_uri, ".")

    @server.resource_template("file:///{+path}", name="file", title="A file under the root")
    def file(path: str) -> t.TextResourceContents | t.BlobResourceContents:
        """Any file or directory under the root, by its absolute file:// URI."""
        absolute = "/" + path
        return read_uri(Path(absolute).as_uri(), absolute)

    return server


_default: Server | None = None


def __getattr__(name: str) -> Server:
    """``server``: built on first use for ``$MCPBIND_FILES_ROOT`` or the current directory
    (lazily, so that ``main`` does not need a valid default root when ``--root`` is given)."""
    global _default
    if name != "server":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _default is None:
        _default = create_server()
    return _default


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--root",
        default=os.environ.get(ENV_ROOT) or os.getcwd(),
        help=f"the directory to share (default: ${ENV_ROOT}, else the current directory)",
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        help="largest file to read, in bytes (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    try:
        app = create_server(args.root, max_bytes=args.max_bytes)
    except ValueError as exc:
        parser.error(str(exc))
    serve_stdio(app)


if __name__ == "__main__":
    main()
