"""Protocol versions this runtime speaks, newest first."""

from __future__ import annotations

from typing import Final

HANDSHAKE_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""The initialize-handshake era, newest first: the client offers the first one."""

LATEST_HANDSHAKE: Final = HANDSHAKE_VERSIONS[0]
