# The driver of unfold's Python environment. It runs code cells in one
# persistent namespace for the Go side.
#
# Protocol: the Go side writes one JSON request per line to fd 3
# ({"id": "...", "code": "..."}); the driver answers each with one JSON line
# on fd 4 carrying the same id and its own process ID. The first line on
# fd 4 is {"status": "ready", ...}, sent before any request. While a cell
# runs, input() and the like ask for a line with {"status": "input", ...};
# the Go side answers with {"id": "...", "input": "..."} (or "eof": true)
# on fd 3. Code output never touches fds 3 and 4: fds 1 and 2 are one pipe
# the Go side drains, so output from subprocesses is captured too, in write
# order.
#
# A cell cannot make the driver answer for another command: a process it
# forks closes fds 3 and 4 and exits where its copy of the cell ends; a
# cell that closes or replaces fds 3 or 4 is seen when it ends, and the
# driver then exits, saying why, for the Go side to start a new one; what a
# cell writes to fd 4 lacks the request's id.
#
# Nor can a cell lose the output of the cells after it: the driver keeps a
# copy of fds 1 and 2, and when a cell ends with either closed or pointing
# elsewhere (os.dup2 of /dev/null left in place when a library raised), it
# is put back before the cell's traceback is shown, and the reply names it
# in "restored". So are sys.stdout and sys.stderr, when a cell leaves in
# their place what surely does not write to fds 1 and 2: None, a StringIO,
# a file of another descriptor. Anything else may (a wrapper, a tee that
# logs and prints) and stays.
#
# This file is compiled with the file name in DRIVER_FILE; frames from it
# are removed from tracebacks.

import ast
import builtins
import getpass
import importlib
import io
import json
import linecache
import os
import re
import shlex
import signal
import subprocess
import sys
import traceback
import types

DRIVER_FILE = '<unfold-driver>'
MAX_VARS = 100        # variables reported per reply
MAX_NAME = 200        # characters kept of a variable or type name
SOURCE_BUDGET = 16 << 20  # characters of cell source kept for tracebacks
REQUEST_FD = 3
REPLY_FD = 4
OUTPUT_FDS = (1, 2)

# Bound now, so user code that rebinds module attributes cannot break the
# protocol.
_dumps = json.dumps
_loads = json.loads
_write = os.write
_getcwd = os.getcwd
_getpid = os.getpid
_fstat = os.fstat
_exit = os._exit
_dup = os.dup
_dup2 = os.dup2
_readlink = os.readlink
_buffers = (io.StringIO, io.BytesIO)
_word = re.compile(r'\w+')
_magic = re.compile(r'^([ \t]*)(!|%pip(?=\s|$))(.*)$')
_missing = object()

_future_mask = 0
for _name in __import__('__future__').all_feature_names:
    _future_mask |= getattr(__import__('__future__'), _name).compiler_flag


class _State:
    running = False   # a cell is executing
    pending = False   # SIGINT arrived while the driver itself was on top
    reading = False   # the driver waits for a line of input for the cell
    request = None    # the id of the request being run
    pid = 0           # the driver's process ID: a fork's copy has another
    fds = None        # identities of fds 3 and 4 and of the output copies, to see them changed
    outputs = {}      # fd 1 and 2: (a copy of it as the driver started, its identity)
    streams = {}      # 'stdout', 'stderr': the sys object as the driver set it up
    forks = 0         # processes forked during the cell
    requests = None   # the request stream (fd 3)
    cell = 0          # cells run so far
    flags = 0         # __future__ flags in effect, as in the interactive interpreter
    order = []        # namespace names, most recently mentioned first
    sources = []      # (file name, length) of cells in linecache, oldest first
    source_chars = 0


_state = _State()


def _on_sigint(signum, frame):
    # KeyboardInterrupt goes to the cell only, or to its wait for input. A
    # signal that arrives while the driver is reading a request or writing
    # a reply is dropped, so a late interrupt cannot break the protocol.
    if _state.running and (_state.reading or frame is None or frame.f_code.co_filename != DRIVER_FILE):
        raise KeyboardInterrupt
    if _state.running:
        _state.pending = True


def _read_line(prompt, hidden):
    """Asks the Go side for a line of input for the running cell."""
    if _getpid() != _state.pid or not _state.running:
        raise EOFError('no input: this process cannot reach the session')
    _send({'status': 'input', 'prompt': str(prompt)[-MAX_NAME:], 'hidden': bool(hidden)})
    while True:
        _state.reading = True
        try:
            line = _state.requests.readline()
        finally:
            _state.reading = False
        if not line or not line.endswith(b'\n'):
            _exit(0)
        try:
            msg = _loads(line)
        except Exception:
            continue
        if msg.get('id') != _state.request:
            continue
        if msg.get('eof'):
            raise EOFError('end of input')
        if 'input' in msg:
            return str(msg['input'])


def _input(prompt=''):
    _flush()
    text = str(prompt)
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
    return _read_line(text, False)


def _getpass(prompt='Password: ', stream=None):
    _flush()
    sys.stdout.write(str(prompt))
    sys.stdout.flush()
    line = _read_line(prompt, True)
    sys.stdout.write('\n')
    return line


class _Stdin:
    """sys.stdin for cells: each line read is asked of the Go side."""

    encoding = 'utf-8'
    errors = 'strict'
    name = '<stdin>'
    closed = False

    def readable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return 0

    def readline(self, size=-1):
        try:
            return _read_line('', False) + '\n'
        except EOFError:
            return ''

    def read(self, size=-1):
        if size is not None and size >= 0:
            return self.readline()[:size]
        out = []
        while True:
            line = self.readline()
            if not line:
                return ''.join(out)
            out.append(line)

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def readlines(self, hint=-1):
        return list(self)


def _shell(command):
    """!command: runs command in a shell, its output with the cell's."""
    _flush()
    subprocess.run(command, shell=True, stdin=subprocess.DEVNULL)


def _pip(args):
    """%pip args: runs pip with the environment's own interpreter."""
    _flush()
    subprocess.run([sys.executable, '-m', 'pip'] + shlex.split(args), stdin=subprocess.DEVNULL)
    importlib.invalidate_caches()


def _magics(code):
    """Returns code with !command and %pip lines turned into calls, or None
    when it has none."""
    out, changed = [], False
    for line in code.split('\n'):
        m = _magic.match(line)
        if m:
            fn = '_unfold_shell' if m.group(2) == '!' else '_unfold_pip'
            line = '%s%s(%r)' % (m.group(1), fn, m.group(3).strip())
            changed = True
        out.append(line)
    return '\n'.join(out) if changed else None


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
    try:
        tree = ast.parse(code, filename, 'exec', type_comments=False)
    except SyntaxError as first:
        # Notebook lines (!command, %pip) are no Python: turn them into
        # calls, and report the first error when that does not parse either.
        other = _magics(code)
        if other is None:
            raise
        try:
            tree = ast.parse(other, filename, 'exec', type_comments=False)
        except SyntaxError:
            raise first from None
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
    """Runs one cell and returns (status, success, exit_code, restored):
    restored as _restore_outputs returns it."""
    _state.cell += 1
    filename = '<cell-%d>' % _state.cell
    _remember_source(filename, code)
    try:
        codes = _compile(code, filename)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
        _report(_format(e, only=isinstance(e, SyntaxError)))
        return 'error', False, None, []
    status, success, exit_code, error = 'ok', True, None, None
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
        error = 'SystemExit\n' if code is None else _format(e, only=True)
    except BaseException as e:
        _state.running = False
        status = 'interrupted' if isinstance(e, KeyboardInterrupt) else 'error'
        success = False
        error = _format(e)
    finally:
        _state.running = False
    # What the cell wrote goes where it sent it; its traceback, which may
    # say why it left an output redirected, goes to the session.
    _flush()
    restored = _restore_outputs() + _restore_streams()
    if error is not None:
        _report(error)
    return status, success, exit_code, restored


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
    msg['id'] = _state.request
    msg['pid'] = _state.pid
    data = (_dumps(msg) + '\n').encode('utf-8', 'backslashreplace')
    while data:
        n = _write(REPLY_FD, data)
        data = data[n:]


def _identity(fd):
    try:
        st = _fstat(fd)
        return (st.st_dev, st.st_ino)
    except OSError:
        return None


def _descriptors():
    return (_identity(REQUEST_FD), _identity(REPLY_FD)) + tuple(
        _identity(copy) for copy, _ in _state.outputs.values())


def _keep_outputs():
    # A copy of fds 1 and 2, not inherited by programs the cells start.
    for fd in OUTPUT_FDS:
        identity = _identity(fd)
        if identity is not None:
            _state.outputs[fd] = (_dup(fd), identity)


def _restore_outputs():
    """Puts fds 1 and 2 back where they pointed when the driver started,
    when the cell closed or redirected them, so that later output and
    tracebacks are not lost. Returns {"fd": fd, "to": where it pointed, or
    None when it was closed} for each. A copy the cell closed or replaced
    cannot serve; the descriptors check after the cell finds it."""
    restored = []
    for fd, (copy, identity) in _state.outputs.items():
        now = _identity(fd)
        if now == identity or _identity(copy) != identity:
            continue
        to = None
        if now is not None:
            try:
                to = _readlink('/proc/self/fd/%d' % fd)
            except OSError:
                to = 'another file'
        try:
            _dup2(copy, fd)
        except OSError:
            continue
        restored.append({'fd': fd, 'to': to})
    return restored


def _dead_end(stream):
    # Whether what stream writes surely does not reach fd 1 or 2 as the
    # driver started (the descriptors themselves, or copies of them):
    # None, a buffer in memory, a file of another descriptor. An object
    # without a descriptor may write to them itself.
    if stream is None or isinstance(stream, _buffers):
        return True
    try:
        fd = stream.fileno()
    except BaseException:
        return False
    if not isinstance(fd, int):
        return False
    identity = _identity(fd)
    return identity is None or not any(identity == i for _, i in _state.outputs.values())


def _describe(stream):
    if stream is None:
        return 'None'
    try:
        name = stream.name
        if isinstance(name, str):
            return name[:MAX_NAME]
    except BaseException:
        pass
    return 'a ' + _type_name(stream)[:MAX_NAME]


def _restore_streams():
    """Puts sys.stdout and sys.stderr back as the driver set them up when
    the cell left in their place what surely does not write to the session
    (see _dead_end), so that later output and tracebacks are not lost. Returns
    {"stream": its name, "to": what was in its place} for each."""
    restored = []
    for name, original in _state.streams.items():
        now = getattr(sys, name, None)
        if now is original or not _dead_end(now):
            continue
        to = _describe(now)
        setattr(sys, name, original)
        restored.append({'stream': name, 'to': to})
    return restored


def _in_child():
    # A process forked by a cell must not answer for the session: its
    # copies of the protocol's descriptors go, it shows no value of a final
    # expression, and it exits where its copy of the cell ends (see main).
    sys.displayhook = lambda value: None
    for fd in (REQUEST_FD, REPLY_FD):
        try:
            os.close(fd)
        except OSError:
            pass


def _forked():
    _state.forks += 1


def main(requests):
    _state.pid = _getpid()
    _state.requests = requests
    _keep_outputs()
    _state.fds = _descriptors()
    os.set_inheritable(REQUEST_FD, False)
    os.set_inheritable(REPLY_FD, False)
    os.register_at_fork(after_in_child=_in_child, after_in_parent=_forked)

    for f in (sys.stdout, sys.stderr):
        try:
            f.reconfigure(encoding='utf-8', errors='backslashreplace', write_through=True)
        except Exception:
            pass
    _state.streams = {'stdout': sys.stdout, 'stderr': sys.stderr}
    sys.argv = ['']
    builtins.input = _input
    getpass.getpass = _getpass
    sys.stdin = _Stdin()
    builtins._unfold_shell = _shell
    builtins._unfold_pip = _pip
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
            msg = _loads(line)
        except Exception as e:
            _send({'status': 'protocol', 'error': 'bad request: %s' % e})
            continue
        if 'code' not in msg:
            continue  # input for a cell that has ended
        _state.request = msg.get('id')
        code = msg['code']
        _state.forks = 0
        status, success, exit_code, restored = _run(code, ns)
        _flush()
        if _getpid() != _state.pid:
            # A copy of the driver in a process the cell forked.
            _exit(0)
        if _descriptors() != _state.fds:
            copies = sorted(copy for copy, _ in _state.outputs.values())
            _report('\n[The code closed or replaced the descriptors (3 and 4) that carry '
                    'commands and replies between unfold and Python, or the copies of its '
                    'output (%s) kept to put it back, so this interpreter cannot answer '
                    'reliably any more and stops.]\n' % ' and '.join(map(str, copies)))
            _flush()
            _exit(3)
        try:
            _track(code, ns)
            variables = _variables(ns)
        except Exception:
            variables = []
        _send({'status': status, 'success': success, 'exit_code': exit_code,
               'cwd': _cwd(), 'vars': variables, 'forks': _state.forks,
               'restored': restored})


main(_requests)
