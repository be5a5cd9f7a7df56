"""Bots named on a command line: ``module:Class``, ``path/to/file.py:Class`` or a built-in name.

Its own module, so that ``atout-bot run``, ``match`` and ``validate`` and their worker processes
share one :class:`BotLoadError` (``python -m atout.cli`` runs the CLI as ``__main__``).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .bot import Bot


class BotLoadError(Exception):
    """The bot given on the command line cannot be loaded; the message says why."""


def load_bot(spec: str) -> Callable[[], Bot]:
    """``module:Class``, ``path/to/file.py:Class`` or a built-in bot -> a factory of bots (the class).

    A built-in bot is a name from ``atout.bots.BOTS``, with parameters or not
    (``pimc:worlds=64``): see :func:`atout.bots.bot_factory`. ``NAME:Class`` with a built-in
    NAME is still a module's class when a module of that name can be imported. The current
    directory is importable, as with ``python -m``.
    """
    from .bots import BOTS, bot_factory

    name, colon, rest = spec.partition(":")
    if name in BOTS and (not colon or "=" in rest or not rest.strip() or not _importable(name)):
        return bot_factory(spec)
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise BotLoadError(
            f"bot {spec!r} is not module:Class (e.g. mybot:MyBot) nor a built-in bot ({', '.join(BOTS)})"
        )
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise BotLoadError(f"no file {module_name!r}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise BotLoadError(f"cannot load {module_name!r} as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        try:
            module_spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            raise _import_failed(module_name, exc) from exc
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
                raise BotLoadError(
                    f"cannot import module {module_name!r}: {exc} (run from its directory?)"
                ) from exc
            raise _import_failed(module_name, exc) from exc
        except (Exception, SystemExit) as exc:
            raise _import_failed(module_name, exc) from exc
    try:
        obj = getattr(module, attr)
    except AttributeError:
        bots = sorted(
            n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
        )
        raise BotLoadError(
            f"module {module_name!r} has no {attr!r}" + (f"; its bots: {', '.join(bots)}" if bots else "")
        ) from None
    if isinstance(obj, Bot) or not callable(obj):
        raise BotLoadError(f"{spec!r} is {obj!r}: give a Bot subclass (or a zero-argument factory)")
    if isinstance(obj, type) and not issubclass(obj, Bot):
        raise BotLoadError(f"{spec!r} is the class {obj.__name__}, which is not a subclass of atout.Bot")
    _check_creates(spec, obj)
    return obj


def _importable(name: str) -> bool:
    """Whether a module ``name`` can be imported (from the current directory too)."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _check_creates(spec: str, factory: Callable[[], object]) -> None:
    """One bot is created now, so that a class whose ``__init__`` needs arguments, or a function
    that is not a zero-argument factory of bots, is a one-line error here and not a traceback in
    the middle of a game."""
    what = f"the class {factory.__name__}" if isinstance(factory, type) else f"{spec!r}"
    try:
        inspect.signature(factory).bind()
    except TypeError as exc:
        hint = "" if isinstance(factory, type) else " (a function must be a zero-argument factory of bots)"
        raise BotLoadError(
            f"{spec!r}: {what} cannot be called with no arguments: {_line(exc)}{hint}"
        ) from None
    except ValueError:  # no signature to read (a builtin): try it
        pass
    try:
        bot = factory()
    except Exception as exc:
        raise BotLoadError(f"{spec!r}: creating a bot failed: {type(exc).__name__}: {_line(exc)}") from exc
    if not isinstance(bot, Bot):
        raise BotLoadError(
            f"{spec!r} gave {type(bot).__name__} {bot!r:.40}, not a Bot: give a Bot subclass "
            "(or a zero-argument factory that returns one)"
        )


def _import_failed(module_name: str, exc: BaseException) -> BotLoadError:
    return BotLoadError(f"importing {module_name!r} failed: {type(exc).__name__}: {_line(exc)}")


def _line(exc: BaseException) -> str:
    """An exception's message on one line (its first)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"
