"""What each hand-inlined copy of a helper saves: instructions per request, counted under
callgrind, with the copy and with a call to its original instead (issue 29).

Wall times on a shared machine are noise at this scale; instruction counts are not. Each
workload runs in one process under ``valgrind --tool=callgrind --dump-before=getpgrp``: the
script calls ``os.getpgrp()`` between phases, so each phase's instructions land in a dump of
their own. Per variant (the code as it is, then each of the workload's sites switched over),
a warm-up, then one session of ``--calls`` requests: its total over ``--calls`` is the cost of
a request, the session's set-up spread over them (a few percent; a difference of two
sessions' lengths would drop it, but adds the noise of the shorter one). Every variant runs
``--reps`` times in turn, and the unchanged code's runs give the noise::

    python bench/inlines/run.py                 # every site (make bench-inlines)
    python bench/inlines/run.py --only http     # the sites of one workload

A variant is made from the source as it stands: the enclosing function's text with one
snippet swapped for the other (``Site.copy`` for ``Site.call`` or back, matched line by line
with indentation and trailing comments ignored), compiled in the module's namespace and set
in place of the original. So the table reads the same whichever form the code holds; a site
whose snippets are no longer found is reported, not guessed.

The workloads are the one side that runs the site, alone, against a canned peer (as
``bench/rt/sides.py``): the client or the server of a sequential ``tools/call`` over a stdio-like
pump, the client over a transport read by the connection's read loop, and the 2026-07-28
Streamable HTTP endpoint driven in-process by ASGI POSTs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import inspect
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "rt"))
sys.path.insert(0, str(HERE.parent / "rt" / "peers" / "mcpbind"))


@dataclass(frozen=True)
class Site:
    """One inlined copy: where it is and its two forms (the copy, and the call it stands for)."""

    name: str
    workload: str
    module: str
    function: str  # qualified name inside ``module``
    original: str  # the helper the copy stands for
    copy: str
    call: str


SITES = [
    Site(
        "connection: _arm in request",
        "client-stdio-2025",
        "mcpbind.connection",
        "Connection.request",
        "Connection._arm",
        """\
            if options is None:
                waiter.deadline = deadline = started + timeout
                if deadline < self._due:
                    self._set_timer(deadline)
            else:
                self._arm(waiter, started)
""",
        """\
            self._arm(waiter, started)
""",
    ),
    Site(
        "connection: send in request",
        "client-stdio-2025",
        "mcpbind.connection",
        "Connection.request",
        "Connection.send",
        "await self.transport.send(data)\n",
        "await self.send(data)\n",
    ),
    Site(
        "connection: _resolve in _take",
        "client-stdio-2025",
        "mcpbind.connection",
        "Connection._take",
        "Connection._resolve",
        """\
            if kind is ResponseReceived:
                waiter = self._waiters.get(event.id)  # type: ignore[union-attr]
                if waiter is not None and not waiter.done:
                    waiter.result, waiter.done = event.result, True  # type: ignore[union-attr]
                    if not waiter.future.done():
                        waiter.future.set_result(None)
""",
        """\
            if kind is ResponseReceived:
                self._resolve(event.id, result=event.result)  # type: ignore[union-attr]
""",
    ),
    Site(
        "connection: Waiter.set in _resolve",
        "client-read-2025",
        "mcpbind.connection",
        "Connection._resolve",
        "Waiter.set",
        """\
        waiter.result, waiter.error = result, error
        waiter.done = True
        future = waiter.future
        if not future.done():
            future.set_result(None)
""",
        """\
        waiter.result, waiter.error = result, error
        waiter.set()
""",
    ),
    Site(
        "connection: _dispatch in the read loop",
        "client-read-2025",
        "mcpbind.connection",
        "Connection._read_loop",
        "Connection._dispatch",
        """\
                for event in backlog:
                    kind = type(event)
                    if kind is ResponseReceived:
                        self._resolve(event.id, result=event.result)  # type: ignore[union-attr]
                    elif kind is RequestReceived:
                        runner.start(event)  # type: ignore[arg-type]
                    else:
                        await self._dispatch(event)
""",
        """\
                for event in backlog:
                    await self._dispatch(event)
""",
    ),
    Site(
        "server/dispatch: _identified in _complete",
        "http-2026",
        "mcpbind.server.dispatch",
        "_complete",
        "_identified",
        """\
        current: Any = result.meta
        identified = (
            {SERVER_INFO: info}
            if current is msgspec.UNSET or current is None
            else {**current, SERVER_INFO: info}
        )
        return msgspec.structs.replace(result, result_type="complete", meta=identified)
""",
        """\
        identified = _identified(result.meta, info)
        return msgspec.structs.replace(result, result_type="complete", meta=identified)
""",
    ),
    Site(
        "http/per_request: _send_json in finish",
        "http-2026",
        "mcpbind.http.server.per_request",
        "_PostResponse.finish",
        "_asgi.send_response",
        "await _send_json(self.send, status, reply.data)\n",
        "await send_response(self.send, status, reply.data, content_type=_JSON)\n",
    ),
    Site(
        "client/pipeline: with_meta in request",
        "client-stdio-2026",
        "mcpbind.client.pipeline",
        "Pipeline.request",
        "protocol.meta.with_meta",
        """\
            wire = params.__copy__()
            wire.meta = meta[1]
""",
        """\
            wire = with_meta(method, params, *meta)
""",
    ),
    Site(
        "protocol/classify: ParamsPeek.meta_version",
        "http-2026",
        "mcpbind.protocol.classify",
        "_fold",
        "ParamsPeek.meta_version",
        """\
    if params is not None and params.meta is not None:
        version = params.meta.protocol_version
        if isinstance(version, str):
            out.meta_version = version
""",
        """\
    if params is not None:
        version = params.meta_version
        if version is not None:
            out.meta_version = version
""",
    ),
    Site(
        "protocol/mcp_headers: ParamsPeek.meta_version",
        "http-2026",
        "mcpbind.protocol.mcp_headers",
        "check_header_values",
        "ParamsPeek.meta_version",
        """\
    meta = params.meta
    body_version = meta.protocol_version if meta is not None else None
    if isinstance(body_version, str) and protocol_header.strip(_OWS) != body_version:
""",
        """\
    body_version = params.meta_version
    if body_version is not None and protocol_header.strip(_OWS) != body_version:
""",
    ),
    Site(
        "protocol/receive: _receive_one in receive",
        "server-stdio-2025",
        "mcpbind.protocol.receive",
        "Receiver.receive",
        "Receiver._receive_one",
        """\
            try:
                env = wire.ENVELOPE_DECODER.decode(data)
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                if size <= limit or not self._too_deep(data, limit, events):
                    self._receive_one(data, events)
            else:
                self._receive_envelope(env, events)
            return events
""",
        # The happy path's cost; the depth check on an undecodable message would move into
        # ``_receive_one``'s error branch (it is not on this path).
        """\
            self._receive_one(data, events)
            return events
""",
    ),
    Site(
        "protocol/_base: _is_id in _answerable",
        "server-stdio-2025",
        "mcpbind.protocol._base",
        "SessionBase._answerable",
        "protocol.meta._is_id",
        """\
        kind = type(request_id)
        entry = (
            self._inbound.get(request_id)
            if kind is int or kind is str or _is_id(request_id)
            else None
        )
""",
        """\
        entry = self._inbound.get(request_id) if _is_id(request_id) else None
""",
    ),
]


# ---------------------------------------------------------------------------- variants
def _bare(line: str) -> str:
    """A line without its indentation and its trailing comment (two spaces, then ``#``)."""
    return line.split("  #")[0].strip() if not line.lstrip().startswith("#") else ""


def _swap(source: str, old: str, new: str) -> str | None:
    """``source`` with the lines matching ``old`` replaced by ``new`` (indented like them);
    ``None`` unless they match exactly once. Comment-only lines in ``source`` are skipped."""
    want = [_bare(line) for line in old.splitlines()]
    lines = source.splitlines(keepends=True)
    found: list[tuple[int, int]] = []
    for start in range(len(lines)):
        index, matched = start, 0
        while matched < len(want) and index < len(lines):
            bare = _bare(lines[index])
            if bare == "" and want[matched] != "":
                index += 1  # a comment or blank line inside the source's copy
                continue
            if bare != want[matched]:
                break
            index, matched = index + 1, matched + 1
        if matched == len(want) and _bare(lines[start]) == want[0]:
            found.append((start, index))
    if len(found) != 1:
        return None
    start, end = found[0]
    first = lines[start]
    indent = first[: len(first) - len(first.lstrip())]
    new_lines = textwrap.indent(textwrap.dedent(new), indent)
    return "".join(lines[:start]) + new_lines + "".join(lines[end:])


def _resolve(site: Site) -> tuple[Any, str, Any]:
    """The object holding the site's function, its attribute name, and the function."""
    module = importlib.import_module(site.module)
    owner: Any = module
    *path, name = site.function.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name, inspect.unwrap(owner.__dict__[name] if path else getattr(owner, name))


def variant(site: Site) -> tuple[str, Callable[..., Any]] | str:
    """The site switched to its other form: (which form the code holds now, the function in
    the other form), or why it cannot be."""
    function = _resolve(site)[2]
    source = textwrap.dedent(inspect.getsource(function))
    holds, swapped = "copy", _swap(source, site.copy, site.call)
    if swapped is None:
        holds, swapped = "call", _swap(source, site.call, site.copy)
    if swapped is None:
        return f"neither form found once in {site.module}.{site.function}"
    module = sys.modules[site.module]
    flags = __import__("__future__").annotations.compiler_flag
    code = compile(swapped, inspect.getsourcefile(function) or "<site>", "exec", flags, True)
    namespace: dict[str, Any] = {}
    exec(code, module.__dict__, namespace)  # the module's own source, one snippet swapped
    return holds, namespace[function.__name__]


@contextmanager
def switched(site: Site, replacement: Callable[..., Any]) -> Iterator[None]:
    owner, name, _ = _resolve(site)
    before = owner.__dict__[name]
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        setattr(owner, name, before)


# ---------------------------------------------------------------------------- workloads
def _sides() -> Any:
    import sides

    return sides


class _QueuedServer:
    """The client's canned peer, read by the connection's read loop (not a pump)."""

    def __init__(self, answer: bytes) -> None:
        sides = _sides()
        self._answer, self._opening, self._head = answer, sides._OPENING, sides._HEAD
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()

    async def send(self, message: bytes) -> None:
        found = self._head.match(message)
        if found is not None:
            request_id, method = found.group(1, 2)
            self._queue.put_nowait(self._opening.get(method, self._answer) % request_id)

    async def receive(self) -> bytes:
        return await self._queue.get()

    async def aclose(self) -> None:
        pass


async def _client_read(calls: int) -> None:
    from mcpbind import Client, types

    sides = _sides()
    version = "2025-11-25"
    async with Client(_QueuedServer(sides.ANSWERS[version]), protocol_version=version) as client:
        params = types.CallToolRequestParams(name="echo", arguments={"text": sides.TEXT})
        for _ in range(calls):
            await client.call_tool(params)


def _http_app() -> Any:
    from echo_server import build_server

    from mcpbind.http import StreamableHTTPApp

    return StreamableHTTPApp(build_server("async"), json_response=True)


async def _http(calls: int, app: Any) -> None:
    sides = _sides()
    request = sides.REQUESTS["2026-07-28"]
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"echo"),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
    }
    for number in range(1, calls + 1):
        body = request % number
        sent: list[dict[str, Any]] = []
        delivered = False

        async def receive(body: bytes = body) -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client stays until the response ends
            return {"type": "http.disconnect"}  # pragma: no cover

        async def send(message: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
            sent.append(message)

        await app(dict(scope), receive, send)
        if sent[0]["status"] != 200 or b'"isError"' in sent[-1]["body"]:
            raise RuntimeError(f"unexpected answer: {sent}")


def workloads() -> dict[str, Callable[[int], None]]:
    """Name -> run ``calls`` sequential ``tools/call`` requests (one session each time)."""
    sides = _sides()
    app = None

    def http(calls: int) -> None:
        nonlocal app
        app = app or _http_app()
        anyio.run(_http, calls, app)

    return {
        "client-stdio-2025": lambda n: sides.measure("client", "2025-11-25", "seq", n) and None,
        "client-stdio-2026": lambda n: sides.measure("client", "2026-07-28", "seq", n) and None,
        "server-stdio-2025": lambda n: sides.measure("server", "2025-11-25", "seq", n) and None,
        "client-read-2025": lambda n: anyio.run(_client_read, n),
        "http-2026": http,
    }


# ---------------------------------------------------------------------------- measuring
def child(workload: str, calls: int, reps: int, plan_file: str) -> None:
    """Under callgrind: per variant, a warm-up, then one session of ``calls`` requests, with a
    dump (``os.getpgrp``) after each; every variant ``reps`` times, in turn, so a drift over
    the process's life touches them all alike; the order goes to ``plan_file``."""
    run = workloads()[workload]
    plan: list[dict[str, str]] = []
    variants: list[tuple[str, Site | None, Callable[..., Any] | None]] = [("as is", None, None)]
    for site in (s for s in SITES if s.workload == workload):
        made = variant(site)
        if isinstance(made, str):
            plan.append({"site": site.name, "error": made})
        else:
            variants.append((made[0], site, made[1]))
    for holds, site, function in [*variants * reps, variants[0]]:
        with switched(site, function) if site is not None and function else _nothing():
            run(max(calls // 4, 20))
            # What is alive now is never scanned again: a phase's collections see only its
            # own objects, and no phase inherits the garbage of the ones before it.
            gc.collect()
            gc.freeze()
            os.getpgrp()
            run(calls)
            os.getpgrp()
        plan.append({"site": site.name if site else "", "holds": holds})
    Path(plan_file).write_text(json.dumps(plan))


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _total(path: Path) -> int:
    found = re.search(rb"^totals: (\d+)", path.read_bytes(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no totals in {path}")
    return int(found.group(1))


def measure(workload: str, calls: int, reps: int) -> list[dict[str, Any]]:
    """One callgrind run of ``workload``: per variant, instructions per request."""
    with tempfile.TemporaryDirectory() as tmp:
        out, plan_file = Path(tmp) / "cg.out", Path(tmp) / "plan.json"
        command = ["valgrind", "--tool=callgrind", "--dump-before=getpgrp"]
        command += [f"--callgrind-out-file={out}", sys.executable, __file__]
        command += ["--child", workload, "--calls", str(calls), "--reps", str(reps)]
        command += ["--plan", str(plan_file)]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"{workload} failed under callgrind:\n{done.stderr[-3000:]}")
        plan = json.loads(plan_file.read_text())
        dumps = sorted(Path(tmp).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        totals = [_total(p) for p in dumps]
    rows, phase = [], 0
    for entry in plan:
        if "error" in entry:
            rows.append(entry)
            continue
        # dumps: warm-up, then ``calls`` (each dump holds what ran since the last one)
        rows.append({**entry, "per_request": totals[phase + 1] / calls})
        phase += 2
    return rows


def table(calls: int, reps: int, only: str | None) -> Iterator[str]:
    """The table's lines, each workload's as soon as it is measured."""
    chosen = [
        w
        for w in workloads()
        if any(s.workload == w and (only is None or only in s.name + s.workload) for s in SITES)
    ]
    yield (
        f"instructions per request (callgrind; {calls} requests in one session, its set-up "
        f"included; each variant {reps} times; noise: the spread of the unchanged code's runs)"
    )
    yield (
        f"{'site':<46} {'workload':<18} {'with copy':>10} {'with call':>10} {'gain':>7} "
        f"{'noise':>6}"
    )
    for workload in chosen:
        rows = measure(workload, calls, reps)
        plain = [r["per_request"] for r in rows if r.get("holds") == "as is"]
        base = statistics.mean(plain)
        noise = (max(plain) - min(plain)) / base * 100
        by_site: dict[str, list[float]] = {}
        for row in rows:
            if "error" in row:
                yield f"{row['site']:<46} {workload:<18} {row['error']}"
            elif row["holds"] != "as is":
                by_site.setdefault(row["site"], []).append(row["per_request"])
        for site in SITES:
            if site.name not in by_site:
                continue
            other = statistics.mean(by_site[site.name])
            holds = next(r["holds"] for r in rows if r.get("site") == site.name)
            copy, call = (base, other) if holds == "copy" else (other, base)
            yield (
                f"{site.name:<46} {workload:<18} {copy:>10,.0f} {call:>10,.0f} "
                f"{_pct(copy, call):>7} {noise:>5.2f}%"
                + ("" if holds == "copy" else "  (the code holds the call)")
            )


def _pct(copy: float, call: float) -> str:
    """How much the copy saves, in % of the request's instructions with the call."""
    return f"{(call - copy) / call * 100:+.2f}%"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="requests per session (400)")
    parser.add_argument("--reps", type=int, default=2, help="runs of each variant (2)")
    parser.add_argument("--only", help="sites or workloads whose name contains this")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--plan", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.calls, args.reps, args.plan)
        return 0
    for line in table(args.calls, args.reps, args.only):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
