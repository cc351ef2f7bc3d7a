"""What ``import mcpbind`` costs (issue 15, cold start): public names are imported on first
use, and a client or server alone never imports the Host, the HTTP stack or the generator.
(Not spec behaviour.)"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import mcpbind
import mcpbind_types

INIT = Path(mcpbind.__file__)

_PROBE = """
import sys
before = set(sys.modules)
{code}
print(sorted(m for m in {watched!r} if m in sys.modules and m not in before))
"""


def _loaded(code: str, watched: list[str], *, bare: bool = False) -> str:
    """The modules of ``watched`` that ``code`` imports, run in a fresh interpreter; ``bare``:
    without the site module (``-S``), on this process's ``sys.path``."""
    probe = _PROBE.format(code=code, watched=watched)
    if bare:
        path = [str(INIT.parents[1]), str(Path(mcpbind_types.__file__).parents[1]), *sys.path]
        probe = f"import sys; sys.path.extend({path!r})\n{probe}"
    flags = ["-S"] if bare else []
    done = subprocess.run(
        [sys.executable, *flags, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_mcpbind_alone_imports_no_runtime_module() -> None:
    watched = ["mcpbind.client", "mcpbind.server", "mcpbind.protocol", "msgspec", "asyncio"]
    assert _loaded("import mcpbind", watched) == "[]"


def test_client_and_server_import_no_host_http_or_generator() -> None:
    watched = [
        "mcpbind.host",
        "mcpbind.http",
        "mcpbind.http.client",
        "mcpbind.auth",
        "mcpbind.cli",
        "mcpbind_codegen",
        "httpx2",
        "uvicorn",
        "jsonschema",
        "mcpbind.tasks.sqlite_store",
    ]
    assert _loaded("from mcpbind import Client, Server", watched) == "[]"


def test_client_and_server_import_no_asyncio_logging_or_dataclasses() -> None:
    """asyncio (with ssl, socket), logging, dataclasses and the stdio transports are imported
    when a loop runs, a message is logged or a server is spawned or served, not with the
    classes (mcpbind._lazy; the registries and contexts are msgspec Structs)."""
    watched = [
        "asyncio",
        "ssl",
        "logging",
        "dataclasses",
        "hashlib",
        "json",
        "queue",
        "anyio.to_thread",
        "anyio.lowlevel",
        "mcpbind.transports.stdio",
    ]
    assert _loaded("from mcpbind import Client, Server", watched) == "[]"


def test_client_and_server_import_no_pathlib() -> None:
    """pathlib (with urllib.parse, ipaddress, fnmatch) is read by tool signatures only once
    their maker imported it. Run without the site module: an older editable install's import
    hook imports pathlib into every process and would hide it."""
    watched = ["pathlib", "urllib.parse", "ipaddress", "fnmatch"]
    assert _loaded("from mcpbind import Client, Server", watched, bare=True) == "[]"


def test_the_client_alone_imports_no_server_module() -> None:
    watched = ["mcpbind.server", "mcpbind.server.app", "mcpbind.transports.stdio.server"]
    assert _loaded("from mcpbind import Client", watched) == "[]"


def test_serving_stdio_never_imports_the_client_end() -> None:
    """A stdio server loads the server end of stdio only, not the spawning client's."""
    code = "from mcpbind.transports.stdio import StdioServerTransport"
    assert _loaded(code, ["mcpbind.transports.stdio.process"]) == "[]"


def test_every_public_name_resolves_and_is_cached() -> None:
    for name in mcpbind.__all__:
        value = getattr(mcpbind, name)
        assert value is not None, name
        assert mcpbind.__dict__[name] is value, name  # later lookups skip __getattr__
    assert set(dir(mcpbind)) >= set(mcpbind.__all__)


def test_the_lazy_table_agrees_with_the_type_checking_imports() -> None:
    """The names type checkers see (the ``TYPE_CHECKING`` imports) are the names
    ``__getattr__`` resolves, from the same modules, and ``__all__`` lists exactly them."""
    import importlib

    tree = ast.parse(INIT.read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))
    seen: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        module = node.module or ""
        home = f"mcpbind.{module}" if node.level else module
        for alias in node.names:
            seen[alias.asname or alias.name] = home if module else f"mcpbind.{alias.name}"
    for name, home in seen.items():
        module = importlib.import_module(home)
        expected = module if home == f"mcpbind.{name}" else getattr(module, name)  # types
        assert getattr(mcpbind, name) is expected, name
    assert sorted(mcpbind.__all__) == sorted(seen)


_LS_PROBE = """
import subprocess, sys
spawned = []
original = subprocess.Popen.__init__
def record(self, *args, **kwargs):
    spawned.append([m for m in {watched!r} if m in sys.modules])
    original(self, *args, **kwargs)
subprocess.Popen.__init__ = record
from mcpbind.cli import main
try:
    main(["ls", sys.executable + " -m examples.notes_server"], prog_name="mcpbind")
except SystemExit as exc:
    assert not exc.code, exc.code
print("AT SPAWN", spawned[0])
print("AFTER", [m for m in ("mcpbind.server", "mcpbind.server.app") if m in sys.modules])
print("UNUSED", [m for m in ("pathlib", "json", "urllib.parse") if m in sys.modules])
"""


def test_ls_spawns_the_server_before_importing_the_client() -> None:
    """``mcpbind ls`` starts the server first (synchronously, before asyncio) and imports
    the event loop, the client, the types and msgspec while the server starts (their import overlaps the server's); it never imports the
    server side. The spawn needs only ``transports.stdio.spawn``: the client's end of stdio
    (anyio's streams, the fd readers) is imported after it."""
    watched = [
        "mcpbind.client",
        "mcpbind.connection",
        "mcpbind_types.unified",
        "msgspec",
        "asyncio",
        "anyio._backends._asyncio",
        "anyio.abc",
        "anyio.lowlevel",
        "mcpbind.transports.stdio.process",
        "mcpbind.transports.stdio.fdio",
    ]
    probe = _LS_PROBE.format(watched=watched)
    root = INIT.parents[2]
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=root
    )
    assert done.returncode == 0, done.stderr
    assert "AT SPAWN []" in done.stdout
    assert "AFTER []" in done.stdout  # a client of a spawned server never loads the server side
    assert "UNUSED []" in done.stdout  # the root's file: URI needs no pathlib, ls no json
    assert "Notes (mcpbind-notes)" in done.stdout


def test_a_lazy_module_binds_the_real_module_at_first_use() -> None:
    """mcpbind._lazy: the stand-in imports the module at the first attribute read and puts
    the module itself in the importing namespace (under its name, or ``bound_as``), so later
    reads cost a plain module read."""
    probe = (
        "import sys\n"
        "from mcpbind._lazy import LazyModule\n"
        "space = {}\n"
        "space['queue'] = stand_in = LazyModule('queue', space)\n"
        "assert 'queue' not in sys.modules\n"
        "assert stand_in.SimpleQueue is sys.modules['queue'].SimpleQueue\n"
        "assert space['queue'] is sys.modules['queue']\n"
        "space['q'] = stand_in = LazyModule('json', space, 'q')\n"  # bound under another name
        "assert stand_in.dumps is sys.modules['json'].dumps and space['q'] is sys.modules['json']\n"
        "print('OK')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OK"


def test_client_and_server_import_no_session_anyio_or_threading() -> None:
    """The server session (dispatch, input rounds, listen) is imported by ``serve``, the
    connection and the protocol core (and anyio) by the first connection or serve, the def-tool
    threads (threading, select, weakref) by the
    first ``def`` tool."""
    watched = [
        "mcpbind.server.session",
        "mcpbind.server.dispatch",
        "mcpbind.server.mrtr",
        "mcpbind.server.threads",
        "mcpbind.connection",
        "mcpbind.protocol.core",
        "mcpbind.protocol.accept",
        "anyio",
        "anyio.abc",
        "threading",
        "select",
        "weakref",
    ]
    # What msgspec's own import brings (Python 3.13's imports weakref) is not ours to defer.
    assert _loaded("from mcpbind import Client, Server", watched) == _loaded(
        "import msgspec", watched
    )


def test_client_and_server_import_no_generated_types() -> None:
    """The generated types (196 Struct classes) and the method table are imported by the first
    session or the first use of a type, not with the classes (mcpbind_types._lazy)."""
    watched = ["mcpbind_types.unified.types", "mcpbind_types.unified.methods"]
    assert _loaded("from mcpbind import Client, Server", watched) == "[]"


_TYPES_PROBE = """
import sys
import mcpbind_types.unified as u
import mcpbind_types.unified.stubs
assert "mcpbind_types.unified.types" not in sys.modules
assert not hasattr(u, "_private") and not hasattr(u, "methods")
tool = u.Tool  # the first use imports the types and binds them all in the package
types = sys.modules["mcpbind_types.unified.types"]
assert tool is types.Tool and u.__dict__["CallToolResult"] is types.CallToolResult
assert u.__all__ == types.__all__
space = {}
exec("from mcpbind_types.unified import *", space)
assert all(space[name] is getattr(types, name) for name in types.__all__)
try:
    u.NoSuchType
except AttributeError as exc:
    assert "NoSuchType" in str(exc)
else:
    raise AssertionError("no AttributeError")
from mcpbind_types.unified import methods
assert {v for info in methods.METHODS for v in info.versions} == set(u.VERSIONS)
print("OK")
"""


def test_generated_types_are_imported_at_their_first_use() -> None:
    """A generated package re-exports its types lazily (``reexport_lazily``): the first read of
    any of them, or ``import *``, imports them all, the same objects as the module's; stubs
    read the method table at their first call. Every version in ``VERSIONS`` has methods in
    the table (the session's known versions are ``VERSIONS``)."""
    done = subprocess.run(
        [sys.executable, "-c", _TYPES_PROBE], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OK"


def test_the_protocol_package_resolves_each_name_from_its_module() -> None:
    """mcpbind.protocol imports a name's module at its first use: its table agrees with the
    ``TYPE_CHECKING`` imports type checkers read, and ``__all__`` lists exactly those names."""
    import importlib

    import mcpbind.protocol as protocol

    tree = ast.parse(Path(protocol.__file__).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))
    seen = {
        alias.asname or alias.name: f".{node.module}"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert sorted(protocol.__all__) == sorted(seen)
    for name, module in seen.items():
        value = getattr(protocol, name)
        assert value is getattr(importlib.import_module(module, protocol.__name__), name)
        assert protocol.__dict__[name] is value  # bound once found
