"""Loads the pool's Lua scripts, each prefixed with the shared prelude, and binds them to a client."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import redis
from redis.commands.core import Script

SCRIPT_DIR = Path(__file__).with_name("scripts")
SCRIPT_NAMES = ("add", "pop", "report", "drop", "hubs", "reload", "wipe", "hold", "hosts")


@cache
def script_text(name: str) -> str:
    """The full text of script ``name``: prelude, then the script (read once per process)."""
    prelude = (SCRIPT_DIR / "prelude.lua").read_text(encoding="utf-8")
    return prelude + "\n" + (SCRIPT_DIR / f"{name}.lua").read_text(encoding="utf-8")


def bind_scripts(client: redis.Redis) -> dict[str, Script]:
    """Every pool script registered on ``client`` (EVALSHA, loading the script when missing)."""
    return {name: client.register_script(script_text(name)) for name in SCRIPT_NAMES}
