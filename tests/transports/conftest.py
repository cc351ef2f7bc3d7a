from typing import Any

import pytest

from mcpbind._asyncio import module_installed

# The stdio transport runs on both loops ``serve_stdio`` may choose: asyncio, and uvloop
# (``loop="auto"`` when installed).
LOOPS: list[Any] = ["asyncio"]
if module_installed("uvloop"):
    LOOPS.append(pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"))


@pytest.fixture(params=LOOPS)
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    return request.param
