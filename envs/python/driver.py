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
# logs and prints) and stays. A sys.stdout or sys.stderr closed or detached
# cannot write again, so a new one takes its place; so does a new
# sys.stdin when a cell closed the driver's.
#
# This file is compiled with the file name in DRIVER_FILE; frames from it
# are removed from tracebacks.

import ast
import builtins
import getpass
import importlib
import importlib.machinery
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
    stdin = None      # the _Stdin the driver set up as sys.stdin
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


def _line(prompt, hidden):
    # What is left of a line sys.stdin read in part comes first, as
    # python3 reading a pipe gives it to input(); only then is another
    # line asked for.
    stdin = _state.stdin
    if stdin is not None and stdin._pending:
        line = stdin.readline()
        return line[:-1] if line.endswith('\n') else line
    return _read_line(prompt, hidden)


def _input(prompt=''):
    _flush()
    text = str(prompt)
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
    return _line(text, False)


def _getpass(prompt='Password: ', stream=None):
    _flush()
    sys.stdout.write(str(prompt))
    sys.stdout.flush()
    line = _line(prompt, True)
    sys.stdout.write('\n')
    return line


class _Pending:
    """What sys.stdin and sys.stdin.buffer share: both hand out what is
    left in _pending, asking _more for another line when it runs out."""

    def readable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return 0

    def _take(self, n):
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    def read(self, size=-1):
        if size is None or size < 0:
            while self._more():
                pass
            return self._take(len(self._pending))
        while len(self._pending) < size and self._more():
            pass
        return self._take(size)


class _Stdin(_Pending, io.TextIOBase):
    """sys.stdin for cells: each line is asked of the Go side when the text
    read so far is used up, so read(n) and readline(n) take what is left of
    a line before asking for the next, as on a terminal; input() takes it
    too. What a cell leaves unread is dropped as it ends. close() is what
    multiprocessing calls in the processes it forks; reads then fail as on
    a closed file. In the session's own process a closed sys.stdin is
    replaced as the cell ends (see _restore_stdin)."""

    encoding = 'utf-8'
    errors = 'strict'
    name = '<stdin>'
    mode = 'r'
    newlines = None

    def __init__(self):
        self._pending = ''   # the rest of the last line asked for
        self.buffer = _StdinBytes(self)

    def _more(self):
        # Asks for the next line; False at the end of input.
        if self.closed:
            raise ValueError('I/O operation on closed file.')
        try:
            self._pending += _read_line('', False) + '\n'
        except EOFError:
            return False
        return True

    def _drop(self):
        # Forgets what is left unread, as text and as bytes.
        self._pending = ''
        self.buffer._pending = b''

    def close(self):
        self._drop()
        super().close()

    def readline(self, size=-1):
        if self.closed:
            raise ValueError('I/O operation on closed file.')
        if size is None or size < 0:
            size = sys.maxsize
        if size == 0:
            return ''
        if not self._pending and not self._more():
            return ''
        end = self._pending.find('\n') + 1 or len(self._pending)
        return self._take(min(end, size))

    def read(self, size=-1):
        # Closed fails even for read(0), as on a closed file.
        if self.closed:
            raise ValueError('I/O operation on closed file.')
        return super().read(size)


class _StdinBytes(_Pending, io.BufferedIOBase):
    """sys.stdin.buffer: the same lines, as UTF-8 bytes."""

    name = '<stdin>'
    mode = 'rb'

    def __init__(self, text):
        self._text = text
        self._pending = b''

    def _more(self):
        if self.closed:
            raise ValueError('I/O operation on closed file.')
        if not self._text._pending and not self._text._more():
            return False
        self._pending += self._text._take(len(self._text._pending)).encode('utf-8', 'surrogateescape')
        return True

    def read1(self, size=-1):
        if not self._pending:
            self._more()
        return self._take(len(self._pending) if size is None or size < 0 else size)

    def readline(self, size=-1):
        if size is None or size < 0:
            size = sys.maxsize
        while b'\n' not in self._pending and len(self._pending) < size and self._more():
            pass
        end = self._pending.find(b'\n') + 1 or len(self._pending)
        return self._take(min(end, size))

    def close(self):
        super().close()
        self._text.close()


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
    when it has none. Only a line that starts a statement is one: Python's
    own tokenizer, fed the lines as they are rewritten, tells a line inside
    a string or brackets, or after a backslash, which stays as it is."""
    import tokenize
    lines = code.split('\n')
    lines = [line + '\n' for line in lines[:-1]] + [lines[-1]]
    state = {'i': 0, 'starts': True, 'depth': 0, 'changed': False}

    def readline():
        i = state['i']
        if i >= len(lines):
            return ''
        state['i'] = i + 1
        line = lines[i]
        m = _magic.match(line.rstrip('\n'))
        if m and state['starts']:
            fn = '_unfold_shell' if m.group(2) == '!' else '_unfold_pip'
            line = '%s%s(%r)%s' % (m.group(1), fn, m.group(3).strip(), line[len(line.rstrip('\n')):])
            lines[i] = line
            state['changed'] = True
        state['starts'] = False
        return line

    try:
        for tok in tokenize.generate_tokens(readline):
            if tok.type == tokenize.OP and tok.string in ('(', '[', '{'):
                state['depth'] += 1
            elif tok.type == tokenize.OP and tok.string in (')', ']', '}'):
                state['depth'] = max(0, state['depth'] - 1)
            elif tok.type in (tokenize.NEWLINE, tokenize.NL):
                state['starts'] = state['depth'] == 0
    except (SyntaxError, tokenize.TokenError):
        pass
    return ''.join(lines) if state['changed'] else None


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


def _strip(te):
    # Remove the driver's frames from a TracebackException and everything
    # chained to it: with a stack, as a chain may be longer than the
    # recursion limit (a retry loop that raises ... from the last error).
    seen, todo = set(), [te]
    while todo:
        te = todo.pop()
        if te is None or id(te) in seen:
            continue
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if f.filename != DRIVER_FILE])
        todo.append(te.__cause__)
        todo.append(te.__context__)
        todo.extend(getattr(te, 'exceptions', None) or ())


def _format(e, only=False):
    # Formatting runs the exception's own code (__str__, notes); should it
    # fail, the type and what can be said of it are shown instead.
    try:
        if only:
            return ''.join(traceback.format_exception_only(type(e), e))
        te = traceback.TracebackException(type(e), e, e.__traceback__)
        _strip(te)
        return ''.join(te.format())
    except BaseException as failed:
        return '%s[the traceback could not be shown: %s]\n' % (_exception_line(e), _type_name(failed))


def _exception_line(e):
    # The last line of a traceback, without it: the exception's type and
    # message, as format_exception_only gives them, which follows the
    # chain too up to Python 3.9 (and may fail the same way), so else
    # built here.
    try:
        return ''.join(traceback.format_exception_only(type(e), e))
    except BaseException:
        pass
    try:
        name = str(type(e).__qualname__)
        if type(e).__module__ not in ('__main__', 'builtins'):
            name = '%s.%s' % (type(e).__module__, name)
    except BaseException:
        name = _type_name(type(e))
    try:
        text = str(e)
    except BaseException:
        text = '<exception str() failed>'
    return '%s: %s\n' % (name, text) if text else name + '\n'


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
    _untraced(sys._getframe())
    _state.pending = False
    _state.running = True
    caught = None
    try:
        if _state.pending:
            raise KeyboardInterrupt
        for c in codes:
            exec(c, ns)
    except BaseException as e:
        caught = e
    finally:
        _state.running = False
        # A debugger still tracing when the cell ends (pdb after n at its
        # last line, or s through its exception) stops here, rather than
        # in the code that shows the traceback or at the first line of the
        # next cell. Inline: a call before it would be an event it stops at.
        bdb = sys.modules.get('bdb')
        if bdb is not None and isinstance(getattr(sys.gettrace(), '__self__', None), bdb.Bdb):
            sys.settrace(None)
            _untraced(sys._getframe(), True)
    if isinstance(caught, SystemExit):
        status = 'exit'
        success, exit_code = _exit_code(caught.code)
        error = 'SystemExit\n' if caught.code is None else _format(caught, only=True)
    elif caught is not None:
        status = 'interrupted' if isinstance(caught, KeyboardInterrupt) else 'error'
        success = False
        # As the interactive interpreter does, for pdb.pm() and
        # traceback.print_last(); pdb.pm() reads only sys.last_exc from
        # Python 3.13 on.
        sys.last_type, sys.last_value, sys.last_traceback = type(caught), caught, caught.__traceback__
        sys.last_exc = caught
        error = _format(caught)
    caught = None  # no cycle through the traceback's frames
    # What the cell wrote goes where it sent it; its traceback, which may
    # say why it left an output redirected, goes to the session.
    _flush()
    # What the cell left unread of its input is not the next cell's: a
    # terminal's python3 would read it as the next command.
    _state.stdin._drop()
    restored = _restore_outputs() + _restore_streams() + _restore_stdin()
    if error is not None:
        _report(error)
    return status, success, exit_code, restored


def _untraced(frame, forget=False):
    # A debugger started in the cell (breakpoint(), pdb.set_trace()) traces
    # every frame below it, the driver's too: stepping past the cell's end
    # would go on in the driver. Its frames report no lines to a debugger,
    # and forget it once it is stopped.
    while frame is not None:
        frame.f_trace_lines = False
        if forget:
            frame.f_trace = None
        frame = frame.f_back


def _exit_code(code):
    """Returns whether SystemExit(code) means success, and the code as the
    reply carries it: an int JSON readers keep exactly (within 2**53), else
    a short repr."""
    try:
        if code is None:
            return True, None
        if isinstance(code, int) and -2**53 < code < 2**53:
            return code == 0, int(code)
        if isinstance(code, int):
            return code == 0, '%s of %d bits' % (_type_name(code), code.bit_length())
        text = repr(code)
    except BaseException:
        return False, '%s whose repr failed' % _type_name(code)
    if len(text) > MAX_NAME:
        text = text[:MAX_NAME] + '...'
    return False, text


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


def _unusable(stream):
    # Whether stream is a file closed, or whose buffer was detached: no
    # write to it can succeed.
    if not isinstance(stream, io.IOBase):
        return False
    try:
        if stream.closed:
            return True
        stream.fileno()
    except io.UnsupportedOperation:  # no descriptor (a StringIO)
        return False
    except ValueError:  # detached, or closed underneath
        return True
    except BaseException:
        pass
    return False


def _dead_end(stream):
    # Whether what stream writes surely does not reach fd 1 or 2 as the
    # driver started (the descriptors themselves, or copies of them):
    # None, a buffer in memory, a file of another descriptor, a file closed
    # or detached. An object without a descriptor may write to them itself.
    if stream is None or isinstance(stream, _buffers) or _unusable(stream):
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
        unusable = _unusable(original)
        if now is original:
            if not unusable:
                continue
            to, how = None, 'closed'
        elif _dead_end(now):
            # Replaced, whether or not the replacement was closed after:
            # the original, not a new stream, is put back.
            to, how = _describe(now), 'replaced'
        else:
            continue
        if unusable:
            # Closed (sys.stdout.close(), a with block over it) or detached:
            # the same object cannot write again, so a new one takes its
            # place, on the same descriptor, which closing it leaves open.
            try:
                original = _new_stream(OUTPUT_FDS[0] if name == 'stdout' else OUTPUT_FDS[1])
            except (OSError, ValueError):
                continue
            _state.streams[name] = original
            setattr(sys, '__%s__' % name, original)
        setattr(sys, name, original)
        restored.append({'stream': name, 'to': to, 'how': how})
    return restored


def _restore_stdin():
    """Puts a new sys.stdin in place of the driver's when the cell closed
    it (sys.stdin.close(), a with block over it), so that later cells can
    read it again; only processes the cell forked keep it closed, as
    multiprocessing wants. A sys.stdin the cell replaced (a StringIO of
    test input) stays. Returns the note as _restore_streams does."""
    if _getpid() != _state.pid or sys.stdin is not _state.stdin or not _state.stdin.closed:
        return []
    _state.stdin = sys.stdin = _Stdin()
    return [{'stream': 'stdin', 'to': None, 'how': 'closed'}]


def _new_stream(fd):
    # A text stream like the driver's sys.stdout, writing to fd.
    stream = io.TextIOWrapper(io.FileIO(fd, 'w', closefd=False), encoding='utf-8',
                              errors='backslashreplace', write_through=True)
    stream.mode = 'w'
    return stream


def _skip_driver(bdb):
    # Makes every debugger skip the driver's frames, as pdb's skip argument
    # does: stepping off the end of a cell, or through its exception, never
    # stops in the driver.
    init = bdb.Bdb.__init__

    def __init__(self, skip=None, *args, **kwargs):
        init(self, set(skip or ()) | {__name__}, *args, **kwargs)
    bdb.Bdb.__init__ = __init__


class _DebuggerSkipsDriver:
    """A finder that applies _skip_driver to bdb (the base of pdb) when it
    is first imported. bdb costs tens of milliseconds to import, so it is
    not imported before a cell does, unless it already was as Python
    started (a sitecustomize or .pth file importing pdb)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != 'bdb':
            return None
        try:
            sys.meta_path.remove(cls)
        except ValueError:
            pass
        spec = importlib.machinery.PathFinder.find_spec(name)
        if spec is None or spec.loader is None:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _skip_driver(module)
        spec.loader.exec_module = exec_module
        return spec


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
    if 'bdb' in sys.modules:
        _skip_driver(sys.modules['bdb'])
    else:
        sys.meta_path.insert(0, _DebuggerSkipsDriver)

    for f in (sys.stdout, sys.stderr):
        try:
            f.reconfigure(encoding='utf-8', errors='backslashreplace', write_through=True)
        except Exception:
            pass
    _state.streams = {'stdout': sys.stdout, 'stderr': sys.stderr}
    sys.argv = ['']
    builtins.input = _input
    getpass.getpass = _getpass
    _state.stdin = sys.stdin = _Stdin()
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
        try:
            status, success, exit_code, restored = _run(code, ns)
        except BaseException as e:
            # Not the code's own error (that _run reports) but one raised
            # after it, by what it left behind (a hook, a debugger): the
            # session goes on.
            _state.running = False
            status, success, exit_code, restored = 'error', False, None, []
            _report('[After the code ended, %s was raised outside it: %s]\n' % (
                _type_name(type(e)), _format(e, only=True).strip()))
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
