"""The documentation site: it builds with warnings as errors, its API reference documents the
declared public API, and in a real browser every page renders, the search finds a known word and
no internal link is broken."""

from __future__ import annotations

import functools
import html.parser
import http.server
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.cdp import Browser, chromium_path
from tests.docs.site import PUBLIC_MODULES, inventory, public_names

#: mcpbind.types re-exports the generated types; a union alias is documented where it is defined.
GENERATED_HOME = {"mcpbind.types": "mcpbind_types.unified.types"}


def test_every_public_name_is_in_the_api_reference(site: Path) -> None:
    documented = inventory(site)
    missing = []
    for name in public_names():
        module, _, attr = name.rpartition(".")
        home = GENERATED_HOME.get(module)
        if name not in documented and (home is None or f"{home}.{attr}" not in documented):
            missing.append(name)
    assert missing == [], f"public names missing from docs/reference/api: {missing}"


def test_the_cli_reference_has_every_command_and_option(site: Path) -> None:
    """docs/reference/cli.md is generated from the click commands: each command has its section
    and each of its options is listed there."""
    import click

    from mcpbind.cli import COMMANDS, main

    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    context = click.Context(main)
    for name in COMMANDS:
        assert f'id="mcpbind-{name}"' in page, name
        command = main.get_command(context, name)
        assert command is not None, name
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in page, f"mcpbind {name} {opt}"


def test_every_public_class_and_function_has_its_own_docstring() -> None:
    """The reference shows each name with its docstring: none of them is a bare signature."""
    import importlib
    import inspect

    bare = []
    for module in PUBLIC_MODULES:
        if module == "mcpbind.types":  # generated from the schemas' descriptions
            continue
        imported = importlib.import_module(module)
        for name in imported.__all__:
            value = getattr(imported, name)
            if inspect.isclass(value):
                doc = value.__dict__.get("__doc__")
            elif inspect.isfunction(value):
                doc = value.__doc__
            else:
                continue
            if not doc:
                bare.append(f"{module}.{name}")
    assert bare == []


def test_the_public_modules_are_what_mcpbind_declares() -> None:
    """Each public module declares ``__all__`` (the reference documents exactly that)."""
    import importlib

    for module in PUBLIC_MODULES:
        assert isinstance(importlib.import_module(module).__all__, list | tuple), module


class _Ids(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(value for key, value in attrs if key in ("id", "name") and value)


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium_path()
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does)")
    chrome = Browser(executable)
    try:
        yield chrome
    finally:
        chrome.close()


def page_urls(site: Path, base: str) -> list[str]:
    pages = sorted(p.relative_to(site) for p in site.rglob("index.html"))
    return [
        urllib.parse.urljoin(base, str(p.parent) + "/" if str(p.parent) != "." else "")
        for p in pages
    ]


def test_every_page_renders_and_no_internal_link_is_broken(
    site: Path, served: str, browser: Browser
) -> None:
    urls = page_urls(site, served)
    assert len(urls) >= 20, urls
    links: dict[str, str] = {}  # link -> the page it is on
    for url in urls:
        browser.goto(url)
        title = browser.evaluate("document.querySelector('article h1')?.textContent ?? ''")
        assert title.strip(), f"{url}: no heading rendered"
        for link in browser.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)"):
            if link.startswith(served):
                links.setdefault(link, url)
    assert browser.exceptions() == [], browser.exceptions()
    ids: dict[str, set[str]] = {}
    broken = []
    for link, page in sorted(links.items()):
        target, _, fragment = link.partition("#")
        if target not in ids:
            try:
                with urllib.request.urlopen(target, timeout=30) as answer:
                    body = answer.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as exc:
                broken.append(f"{link} (on {page}): HTTP {exc.code}")
                ids[target] = set()
                continue
            parser = _Ids()
            parser.feed(body)
            ids[target] = parser.ids
        if fragment and urllib.parse.unquote(fragment) not in ids[target]:
            broken.append(f"{link} (on {page}): no #{fragment} there")
    assert broken == []


def test_the_search_finds_a_known_word(served: str, browser: Browser) -> None:
    browser.goto(served)
    browser.evaluate("document.querySelector('input.md-search__input').focus()")
    browser.type("uvloop")
    found = ""
    for _ in range(300):  # bounded polling: the search index loads in a web worker
        found = browser.evaluate(
            "[...document.querySelectorAll('.md-search-result__item')]"
            ".map(item => item.textContent).join(' | ')"
        )
        if found:
            break
        browser.call(
            "Runtime.evaluate",
            {"expression": "new Promise(r => setTimeout(r, 100))", "awaitPromise": True},
            session=True,
        )
    assert "uvloop" in found.lower(), found
    assert "Performance" in found, found
