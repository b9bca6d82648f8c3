"""Loading and running a user's code (``--rules FILE.py:NAME``, ``mutants --from FILE``).

A rules or mutants file is the user's code, and what it does is reported as the user's
(issue 42, issue 38):

- while it loads and whenever one of its rules runs, ``sys.exit`` and ``os._exit`` raise
  instead of ending the command, and ``print`` writes to stderr (``--json`` output on
  stdout stays one JSON document);
- a rule that raises, exits, runs out of memory or recursion, or returns a value of the
  wrong type raises :class:`UserCodeError`, which names the rule, the file, and the
  traceback of the user's own frames; the engines add the action and step where it
  failed and the path that led there, and the command exits with
  ``exitcodes.USER_CODE_ERROR`` (8), not groupcheck's internal error (4);
- ``--budget`` covers it (``groupcheck.budget``: the watchdog stops a rule that never
  returns, and a file that loops while it loads);
- its memory is bounded (``--user-memory MB``, :data:`DEFAULT_USER_MEMORY_MB`): what
  groupcheck's resident memory grows by while a rule runs is summed per rule, and a rule
  whose sum passes the limit — one that keeps a little more each call — is stopped with
  :class:`UserCodeError`, before the machine runs out of memory. Memory a call takes and
  gives back is not counted; what a rule returns and the model keeps in its states is.
"""

from __future__ import annotations

import functools
import os
import resource
import sys
import traceback
import typing
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType, UnionType
from typing import Any, NoReturn

import model.classic.coordinator as classic_coordinator
import model.classic.messages as classic_messages
import model.classic.records as classic_records
from groupcheck.budget import BudgetExpired
from groupcheck.signals import Terminated
from model import config, ids, records, status, system
from model.path import Path as ModelPath
from model.rules import DEFAULT_RULES
from reports.casestudy import describe_action

_depth = [0]
"""How deep the main thread is inside user code (0: groupcheck's own)."""
_real_exit = os._exit


class UserExit(SystemExit):
    """``os._exit`` called by user code (it would end the process with no word)."""


def _guarded_exit(status: int) -> NoReturn:
    if _depth[0] > 0:
        raise UserExit(f"os._exit({status})")
    _real_exit(status)


@contextmanager
def running_user_code() -> Iterator[None]:
    """The body is the user's: stdout goes to stderr, ``os._exit`` raises."""
    if os._exit is not _guarded_exit:
        os._exit = _guarded_exit
    outer = _depth[0] == 0
    saved = sys.stdout
    if outer:
        sys.stdout = sys.stderr
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1
        if outer:
            sys.stdout = saved


DEFAULT_USER_MEMORY_MB = 2048
"""The default of ``--user-memory``: MB by which a user's rule may grow groupcheck's
resident memory, summed over its calls (0: no limit)."""

_memory_limit = [DEFAULT_USER_MEMORY_MB * 1024]
"""The limit in KB; 0: none."""
_grown: dict[str, int] = {}
"""KB by which the resident memory grew while each rule ran."""
_statm: list[int] = [-1, -1]
"""The process id and descriptor of the open ``/proc/self/statm`` (reopened in a forked
worker, whose ``self`` is another process)."""
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4


def set_memory_limit(mb: int) -> None:
    """Bound the memory user rules may take (``--user-memory``): ``mb`` MB, 0 for no
    limit. The sums so far start again from zero."""
    _memory_limit[0] = max(0, mb) * 1024
    _grown.clear()


def _resident_kb() -> int:
    """groupcheck's resident memory now, in KB (``/proc/self/statm``, read with one
    system call; where there is none, the peak so far, ``getrusage``)."""
    pid = os.getpid()
    if _statm[0] != pid:
        try:
            _statm[:] = [pid, os.open("/proc/self/statm", os.O_RDONLY)]
        except OSError:
            _statm[:] = [pid, -1]
    if _statm[1] >= 0:
        try:
            return int(os.pread(_statm[1], 64, 0).split()[1]) * _PAGE_KB
        except (OSError, ValueError, IndexError):
            pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes there, KB here


def _count_growth(field: str, name: str, file: str, before: int) -> None:
    """Add what the resident memory grew by during one call of rule ``field`` to its sum;
    past the limit, the rule is stopped (:class:`UserCodeError`)."""
    if not _memory_limit[0]:
        return
    grown = _resident_kb() - before
    if grown <= 0:
        return
    total = _grown[field] = _grown.get(field, 0) + grown
    if total > _memory_limit[0]:
        error = UserCodeError(
            file=file,
            failure=f"it kept taking memory: groupcheck's resident memory grew by "
            f"{total / 1024:.1f} MB while it ran, past the limit of "
            f"{_memory_limit[0] // 1024} MB (--user-memory)",
            user_traceback=[],
            rule=field,
            function=name,
        )
        error.cumulative = True
        raise error


PASSED_THROUGH = (KeyboardInterrupt, Terminated, BudgetExpired)
"""What user code may raise that is not its failure: Ctrl-C, SIGTERM and the budget."""


class UserCodeError(Exception):
    """The user's code failed: while its file loaded (``rule`` None), or a rule of it."""

    def __init__(
        self,
        *,
        file: str,
        failure: str,
        user_traceback: list[str],
        rule: str | None = None,
        function: str | None = None,
    ) -> None:
        super().__init__(failure)
        self.file = file
        self.failure = failure
        self.user_traceback = user_traceback
        self.rule = rule
        self.function = function
        self.actions: tuple[Any, ...] | None = None
        """The path that led to the failing step (None: not known)."""
        self.action: Any = None
        """The action whose step failed (None: the rule failed while the enabled actions
        were computed)."""
        self.path_code: str | None = None
        self.config_name: str | None = None
        self.located = ""
        """How the path was found (a note for the report)."""
        self.cumulative = False
        """The failure is the sum of the rule's calls (its memory), not one call's: no
        path is searched for (:func:`locate`)."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Crosses from a BFS worker process to the coordinator.
        return (_rebuild, (self.__dict__,))

    @property
    def what(self) -> str:
        if self.rule is None:
            return f"your file {self.file} failed while it was loaded"
        named = f"{self.function} " if self.function and self.function != self.rule else ""
        return f"your rule {self.rule} ({named}in {self.file}) failed"

    def at(self, config: Any, actions: tuple[Any, ...], action: Any) -> UserCodeError:
        """Record where it failed: after ``actions``, on ``action``."""
        if self.actions is None:
            self.actions = tuple(actions)
            self.action = action
            self.config_name = getattr(config, "name", None)
            try:
                self.path_code = ModelPath(config, self.actions).encode()
            except Exception:
                self.path_code = None
        return self

    def report(self) -> list[str]:
        """The lines to print on stderr: what failed, where, and the user's frames."""
        lines = [f"groupcheck: {self.what}: {self.failure}"]
        if self.rule is not None:
            if self.actions is None:
                lines.append(f"  where: not located{self.located}")
            else:
                step = len(self.actions) + 1
                doing = (
                    f"on the action {describe_action(self.action)}"
                    if self.action is not None
                    else "while the enabled actions were computed"
                )
                lines.append(f"  at step {step} {doing}{self.located}")
                for i, a in enumerate(self.actions, 1):
                    lines.append(f"    {i:3}. {describe_action(a)}")
                if self.path_code is not None:
                    lines.append(f"  path code: {self.path_code}")
        if self.user_traceback:
            lines.append("  your code (most recent call last):")
            lines += [
                "  " + part for entry in self.user_traceback for part in entry.rstrip().split("\n")
            ]
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "result": "user code error",
            "file": self.file,
            "rule": self.rule,
            "function": self.function,
            "failure": self.failure,
            "step": None if self.actions is None else len(self.actions) + 1,
            "action": None if self.action is None else describe_action(self.action),
            "path": None if self.actions is None else [describe_action(a) for a in self.actions],
            "path_code": self.path_code,
            "traceback": self.user_traceback,
        }


def _rebuild(state: dict[str, Any]) -> UserCodeError:
    error = UserCodeError.__new__(UserCodeError)
    Exception.__init__(error, state.get("failure", ""))
    error.__dict__.update(state)
    return error


def user_frames(error: BaseException, file: Path) -> list[str]:
    """The traceback of ``error`` through the user's own code only: the rules file, and
    files beside it or below its directory that are not groupcheck's own packages."""
    mine = file.resolve()
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if _users(Path(f.filename), mine)
    ]
    return traceback.format_list(frames)[-20:] if frames else []


_PROJECT = Path(__file__).resolve().parent.parent
_OURS = tuple(_PROJECT / name for name in ("groupcheck", "model", "invariants", "reports"))


def _users(frame_file: Path, mine: Path) -> bool:
    try:
        resolved = frame_file.resolve()
    except OSError:
        return False
    if resolved == mine:
        return True
    if frame_file.name.startswith("<") or not resolved.is_file():
        return False  # "<frozen importlib...>", "<string>": not a file of the user's
    return resolved.is_relative_to(mine.parent) and not any(
        resolved.is_relative_to(ours) for ours in _OURS
    )


def describe_failure(error: BaseException) -> str:
    """``Type: message`` on one line (``sys.exit``/``os._exit`` named as such)."""
    if isinstance(error, UserExit):
        return f"it called {error.code}, which would have ended groupcheck"
    if isinstance(error, SystemExit):
        return f"it called sys.exit({error.code!r}), which would have ended groupcheck"
    if isinstance(error, MemoryError):
        return "it ran out of memory (MemoryError)"
    if isinstance(error, RecursionError):
        return "it recursed too deeply (RecursionError)"
    text = " ".join(str(error).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"it raised {type(error).__name__}" + (f": {text}" if text else "")


def load_module(module: ModuleType, run: Callable[[], None], file: Path) -> None:
    """Execute a user's module (``run``) as the user's code; :class:`UserCodeError` when
    it raises or exits (``SyntaxError`` is left to the caller: bad input)."""
    directory = file.resolve().parent
    if str(directory) not in sys.path:
        # Imports relative to the file's own directory (tutorial: a mutants file may
        # import its neighbours) — as ``python FILE`` would.
        sys.path.insert(0, str(directory))
    try:
        with running_user_code():
            run()
    except PASSED_THROUGH:
        raise
    except SyntaxError:
        raise
    except BaseException as e:
        raise UserCodeError(
            file=str(file), failure=describe_failure(e), user_traceback=user_frames(e, file)
        ) from None


def wrap_rule(field: str, fn: Callable[..., Any], file: str) -> Callable[..., Any]:
    """``fn`` run as the user's rule for the ``Rules`` field ``field``: its failures and
    a result of the wrong type raise :class:`UserCodeError`."""
    if getattr(fn, "__groupcheck_user_rule__", None) == (field, file):
        return fn
    accepts, expected = return_type(field)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)

    @functools.wraps(fn)
    def rule(*args: Any, **kwargs: Any) -> Any:
        before = _resident_kb() if _memory_limit[0] else 0
        try:
            with running_user_code():
                value = fn(*args, **kwargs)
        except BudgetExpired as e:
            if not e.stage.startswith("your rule"):
                e.stage = f"your rule {field} ({name} in {file})"
            raise
        except PASSED_THROUGH:
            raise
        except UserCodeError:
            raise
        except BaseException as e:  # the user's failure, reported as such
            raise UserCodeError(
                file=file,
                failure=describe_failure(e),
                user_traceback=user_frames(e, Path(file)),
                rule=field,
                function=name,
            ) from None
        _count_growth(field, name, file, before)
        if accepts is not None and not isinstance(value, accepts):
            raise UserCodeError(
                file=file,
                failure=f"it returned {type(value).__name__} "
                f"({_short(value)}); {field} returns {expected}",
                user_traceback=[],
                rule=field,
                function=name,
            )
        return value

    rule.__groupcheck_user_rule__ = (field, file)  # type: ignore[attr-defined]
    return rule


def _short(value: object) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


@functools.cache
def return_type(field: str) -> tuple[tuple[type, ...] | None, str]:
    """The classes a value returned for ``field`` may be an instance of (from the default
    rule's return annotation; None when it cannot be read), and the annotation."""
    default = getattr(DEFAULT_RULES, field)
    text = str(getattr(default, "__annotations__", {}).get("return", "?"))
    try:
        hint = typing.get_type_hints(default, globalns=_names(default))["return"]
    except Exception:
        return None, text
    classes = _classes(hint)
    return (tuple(classes) if classes else None), text


def _names(fn: Callable[..., Any]) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for module in (ids, records, status, classic_messages, classic_records, config):
        names.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    names["Result"] = classic_coordinator.Result
    names["HeartbeatResult"] = tuple
    names.update(getattr(fn, "__globals__", {}))
    return names


def _classes(hint: Any) -> list[type] | None:
    """Runtime classes of a type hint, shallowly (None: not checkable)."""
    if hint is None or hint is type(None):
        return [type(None)]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, UnionType):
        out: list[type] = []
        for arg in typing.get_args(hint):
            part = _classes(arg)
            if part is None:
                return None
            out += part
        return out
    if origin is not None:
        return [origin] if isinstance(origin, type) else None
    if hint is typing.Any or not isinstance(hint, type):
        return None
    if hint is bool:
        return [bool]
    return [hint]


LOCATE_MAX_STATES = 5000
"""The states :func:`locate` visits looking for the shortest path to a failing rule."""


def locate(error: UserCodeError, config: Any, max_states: int = LOCATE_MAX_STATES) -> None:
    """Find the shortest path on which ``error``'s rule fails, when the engine that met it
    did not record one (breadth first over ``config``, at most ``max_states`` states); the
    path is recorded on ``error`` (``error.located`` says how it was found)."""
    if error.rule is None or error.actions is not None:
        return
    if error.cumulative:
        error.located = " (its memory was taken over all its calls: no one path makes it fail)"
        return
    seen: set[Any] = set()
    queue: deque[tuple[Any, tuple[Any, ...]]] = deque()
    try:
        state = system.initial(config)
    except UserCodeError as e:
        error.at(config, (), None)
        error.located = _how(e, error)
        return
    queue.append((state, ()))
    seen.add(state)
    while queue and len(seen) < max_states:
        state, actions = queue.popleft()
        try:
            enabled = system.enabled(state, config)
        except UserCodeError as e:
            error.at(config, actions, None)
            error.located = _how(e, error)
            return
        for action in enabled:
            try:
                new = system.step(state, action, config)
            except UserCodeError as e:
                error.at(config, actions, action)
                error.located = _how(e, error)
                return
            if new not in seen:
                seen.add(new)
                queue.append((new, (*actions, action)))
    error.located = f" (no failure of the rule within {len(seen)} states of a breadth-first search)"


def _how(found: UserCodeError, error: UserCodeError) -> str:
    note = " (the shortest such path, found by a breadth-first search"
    if found.failure != error.failure:
        return f"{note}, where it failed so: {found.failure})"
    return note + ")"
