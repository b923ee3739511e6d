"""The app under development: loaded from its target, and again when its source changes."""

from __future__ import annotations

import logging
import os
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Final

import anyio

from mcpfusion._app.app import Fusion
from mcpfusion._dev.target import UsageError, load_app

logger = logging.getLogger("mcpfusion.dev")

MAX_FILES: Final = 500
"""At most this many source files are watched (each poll stats every one)."""

_INSTALLED = tuple(
    Path(p).resolve() for p in {sysconfig.get_path("stdlib"), sysconfig.get_path("purelib")}
)
_FRAMEWORK = Path(__file__).resolve().parents[1]


def _root(target: str) -> Path:
    """The folder whose modules belong to the app: the target file's, or its package's."""
    where = target.rpartition(":")[0] or target
    if where.endswith(".py") or "/" in where or os.sep in where:
        return Path(where).resolve().parent
    top = sys.modules.get(where.split(".")[0])
    file = getattr(top, "__file__", None)
    return Path(file).resolve().parent if file else Path.cwd().resolve()


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class LiveApp:
    """The app of a ``module:attr`` or ``file.py:attr`` target, reloaded when its files change.

    The watched files are the loaded modules under the target's folder (its package's, for
    a module target), leaving out the framework and installed packages; at most
    ``MAX_FILES`` of them. A reload that fails keeps the previous app and records the error.

    Raises:
        UsageError: if the first load fails (the console does not start without an app).
    """

    def __init__(self, target: str, *, load: Callable[[str], Fusion] = load_app) -> None:
        self.target = target
        self._load = load
        self.app = load(target)
        self.version = 1
        """Incremented by every reload attempt, so the page knows to refresh its tools."""
        self.error: str | None = None
        self._root = _root(target)
        self._modules: dict[str, ModuleType] = {}
        self._mtimes: dict[Path, float] = {}
        self._snapshot()

    @property
    def files(self) -> tuple[Path, ...]:
        """The watched source files."""
        return tuple(self._mtimes)

    def _snapshot(self) -> None:
        # Files watched before stay watched: after a failed reload the broken module is not
        # in sys.modules, and fixing it must still trigger the next reload.
        for path in self._mtimes:
            self._mtimes[path] = _mtime(path)
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if not file or not file.endswith(".py"):
                continue
            path = Path(file).resolve()
            if not _inside(path, self._root) or _inside(path, _FRAMEWORK):
                continue
            if any(_inside(path, folder) for folder in _INSTALLED):
                continue
            if len(self._mtimes) >= MAX_FILES and path not in self._mtimes:
                break
            self._modules[name] = module
            self._mtimes[path] = _mtime(path)

    def changed(self) -> bool:
        """Whether a watched file was modified, created or deleted since the last load."""
        return any(_mtime(path) != mtime for path, mtime in self._mtimes.items())

    def reload(self) -> None:
        """Loads the target again from source; on failure keeps the app and sets ``error``."""
        for name in self._modules:
            sys.modules.pop(name, None)
        self.version += 1
        try:
            app = self._load(self.target)
            app.list_tools()  # a definition mistake is reported now, not on the next call
        except Exception as exc:
            # Code under edit can fail in any way; the console keeps the last good app.
            self.error = str(exc) if isinstance(exc, UsageError) else f"{type(exc).__name__}: {exc}"
            logger.warning("reloading %s failed: %s", self.target, exc)
        else:
            self.app, self.error = app, None
            logger.info("reloaded %s", self.target)
        self._snapshot()

    def poll(self) -> bool:
        """Reloads if a watched file changed; returns whether it did."""
        if not self.changed():
            return False
        self.reload()
        return True

    async def watch(self, interval: float) -> None:
        """Polls every ``interval`` seconds until cancelled."""
        while True:
            await anyio.sleep(interval)
            self.poll()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return -1.0
