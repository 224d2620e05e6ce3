# The driver of unfold's Python environment. It runs code cells in one
# persistent namespace for the Go side.
#
# Protocol: the Go side writes one JSON request per line to fd 3
# ({"code": "..."}); the driver answers each with one JSON line on fd 4. The
# first line on fd 4 is {"status": "ready", ...}, sent before any request.
# Code output never touches fds 3 and 4: fds 1 and 2 are one pipe the Go side
# drains, so output from subprocesses is captured too, in write order.
#
# This file is compiled with the file name in DRIVER_FILE; frames from it
# are removed from tracebacks.

import ast
import builtins
import json
import linecache
import os
import re
import signal
import sys
import traceback
import types

DRIVER_FILE = '<unfold-driver>'
MAX_VARS = 100        # variables reported per reply
MAX_NAME = 200        # characters kept of a variable or type name
SOURCE_BUDGET = 16 << 20  # characters of cell source kept for tracebacks
REQUEST_FD = 3
REPLY_FD = 4

# Bound now, so user code that rebinds module attributes cannot break the
# protocol.
_dumps = json.dumps
_loads = json.loads
_write = os.write
_getcwd = os.getcwd
_word = re.compile(r'\w+')
_missing = object()

_future_mask = 0
for _name in __import__('__future__').all_feature_names:
    _future_mask |= getattr(__import__('__future__'), _name).compiler_flag


class _State:
    running = False   # a cell is executing
    pending = False   # SIGINT arrived while the driver itself was on top
    cell = 0          # cells run so far
    flags = 0         # __future__ flags in effect, as in the interactive interpreter
    order = []        # namespace names, most recently mentioned first
    sources = []      # (file name, length) of cells in linecache, oldest first
    source_chars = 0


_state = _State()


def _on_sigint(signum, frame):
    # KeyboardInterrupt goes to the cell only. A signal that arrives while
    # the driver is reading a request or writing a reply is dropped, so a
    # late interrupt cannot break the protocol.
    if _state.running and (frame is None or frame.f_code.co_filename != DRIVER_FILE):
        raise KeyboardInterrupt
    if _state.running:
        _state.pending = True


def _no_input(prompt=''):
    what = 'input(%r)' % (prompt,) if prompt else 'input()'
    raise EOFError(what + ' is not available: this Python session has no standard input. '
                   'Put the value in the code instead.')


class _Quitter:
    """exit() and quit() that raise SystemExit without closing stdin."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return ('%s() raises SystemExit here; the Python session keeps running '
                'and keeps its variables.' % self.name)

    def __call__(self, code=None):
        raise SystemExit(code)


def _remember_source(filename, code):
    # linecache lets tracebacks (and inspect.getsource) show cell lines. Old
    # cells are forgotten once the kept source grows past SOURCE_BUDGET.
    lines = code.splitlines(True)
    if lines and not lines[-1].endswith('\n'):
        lines[-1] += '\n'
    linecache.cache[filename] = (len(code), None, lines, filename)
    _state.sources.append((filename, len(code)))
    _state.source_chars += len(code)
    while _state.source_chars > SOURCE_BUDGET and len(_state.sources) > 1:
        old, n = _state.sources.pop(0)
        linecache.cache.pop(old, None)
        _state.source_chars -= n


def _strip(te, seen):
    # Remove the driver's frames from a TracebackException and everything
    # chained to it.
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if f.filename != DRIVER_FILE])
    _strip(te.__cause__, seen)
    _strip(te.__context__, seen)
    for sub in getattr(te, 'exceptions', None) or ():
        _strip(sub, seen)


def _format(e, only=False):
    if only:
        return ''.join(traceback.format_exception_only(type(e), e))
    te = traceback.TracebackException(type(e), e, e.__traceback__)
    _strip(te, set())
    return ''.join(te.format())


def _report(text):
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except Exception:
        _write(2, text.encode('utf-8', 'backslashreplace'))


def _flush():
    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except Exception:
            pass


def _compile(code, filename):
    """Returns the code objects of a cell: the body, then the final
    expression compiled like the interactive interpreter does, so its value
    goes through sys.displayhook."""
    tree = ast.parse(code, filename, 'exec', type_comments=False)
    body = tree.body
    parts = []
    if body and isinstance(body[-1], ast.Expr):
        if len(body) > 1:
            parts.append((ast.Module(body=body[:-1], type_ignores=[]), 'exec'))
        parts.append((ast.Interactive(body=[body[-1]]), 'single'))
    else:
        parts.append((tree, 'exec'))
    out = []
    for node, mode in parts:
        c = compile(node, filename, mode, flags=_state.flags, dont_inherit=True)
        _state.flags |= c.co_flags & _future_mask
        out.append(c)
    return out


def _run(code, ns):
    """Runs one cell and returns (status, success, exit_code)."""
    _state.cell += 1
    filename = '<cell-%d>' % _state.cell
    _remember_source(filename, code)
    try:
        codes = _compile(code, filename)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
        _report(_format(e, only=isinstance(e, SyntaxError)))
        return 'error', False, None
    status, success, exit_code = 'ok', True, None
    _state.pending = False
    _state.running = True
    try:
        if _state.pending:
            raise KeyboardInterrupt
        for c in codes:
            exec(c, ns)
    except SystemExit as e:
        _state.running = False
        code = e.code
        status = 'exit'
        success = code is None or code == 0
        exit_code = code if code is None or isinstance(code, int) else repr(code)
        _report('SystemExit\n' if code is None else _format(e, only=True))
    except BaseException as e:
        _state.running = False
        status = 'interrupted' if isinstance(e, KeyboardInterrupt) else 'error'
        success = False
        _report(_format(e))
    finally:
        _state.running = False
    return status, success, exit_code


def _track(code, ns):
    # Seed 001's usage tracking: names mentioned in the cell (a whole-word
    # match, as re's \b<name>\b finds) move to the front, in namespace order.
    names = [n for n in list(ns) if isinstance(n, str)]
    words = set(_word.findall(code))
    mentioned = [n for n in names if n in words]
    first = set(mentioned)
    live = set(names)
    order = mentioned + [n for n in _state.order if n not in first and n in live]
    known = set(order)
    order += [n for n in names if n not in known]
    _state.order = order


def _type_name(v):
    # Seed 001: the class name for classes, otherwise the type's name
    # (ndarray, DataFrame, Series come out as themselves).
    try:
        if isinstance(v, type):
            return str(v.__name__)
        return str(type(v).__name__)
    except Exception:
        return '?'


def _variables(ns):
    out = []
    for n in _state.order:
        if len(out) >= MAX_VARS:
            break
        if n.startswith('_'):
            continue
        v = ns.get(n, _missing)
        if v is _missing:
            continue
        try:
            if isinstance(v, types.ModuleType) or getattr(builtins, n, _missing) is v:
                continue
        except Exception:
            pass
        out.append([n[:MAX_NAME], _type_name(v)[:MAX_NAME]])
    return out


def _cwd():
    try:
        return _getcwd()
    except OSError as e:
        return '(unavailable: %s)' % (e.strerror or e,)


def _send(msg):
    data = (_dumps(msg) + '\n').encode('utf-8', 'backslashreplace')
    while data:
        n = _write(REPLY_FD, data)
        data = data[n:]


def main():
    os.set_inheritable(REQUEST_FD, False)
    os.set_inheritable(REPLY_FD, False)
    requests = os.fdopen(REQUEST_FD, 'rb', buffering=1 << 16)

    for f in (sys.stdout, sys.stderr):
        try:
            f.reconfigure(encoding='utf-8', errors='backslashreplace', write_through=True)
        except Exception:
            pass
    sys.argv = ['']
    builtins.input = _no_input
    builtins.exit = _Quitter('exit')
    builtins.quit = _Quitter('quit')

    main_module = types.ModuleType('__main__')
    main_module.__dict__['__builtins__'] = builtins
    sys.modules['__main__'] = main_module
    ns = main_module.__dict__

    signal.signal(signal.SIGINT, _on_sigint)
    _send({'status': 'ready', 'cwd': _cwd(), 'pid': os.getpid(),
           'version': sys.version.split()[0]})

    while True:
        line = requests.readline()
        if not line:
            return
        if not line.endswith(b'\n'):
            return
        try:
            code = _loads(line)['code']
        except Exception as e:
            _send({'status': 'protocol', 'error': 'bad request: %s' % e})
            continue
        status, success, exit_code = _run(code, ns)
        _flush()
        try:
            _track(code, ns)
            variables = _variables(ns)
        except Exception:
            variables = []
        _send({'status': status, 'success': success, 'exit_code': exit_code,
               'cwd': _cwd(), 'vars': variables})


main()
