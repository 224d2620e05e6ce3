package python

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests run standard-library code that expects the session to act
// like a terminal's python3: multiprocessing, pdb, sys.exit, sys.stdin.

// TestMultiprocessing: processes forked by multiprocessing run their
// targets (they close sys.stdin first, which must work) and the session
// gets their results.
func TestMultiprocessing(t *testing.T) {
	r := newREPL(t)
	execute(t, r, "import multiprocessing as mp, concurrent.futures as cf\ndef sq(x): return x * x\ndef work(): print('child ran')")
	for _, s := range []step{
		{code: "with mp.get_context('fork').Pool(2) as p:\n    res = p.map(sq, range(10))\nres", has: []string{"[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"}, hasNot: []string{"Traceback"}, success: true},
		{code: "p = mp.get_context('fork').Process(target=work); p.start(); p.join()\np.exitcode", has: []string{"child ran\n0\n"}, success: true},
		{code: "with cf.ProcessPoolExecutor(2, mp_context=mp.get_context('fork')) as ex:\n    res = list(ex.map(sq, range(4)))\nres", has: []string{"[0, 1, 4, 9]"}, hasNot: []string{"Traceback"}, success: true},
	} {
		s.check(t, execute(t, r, s.code))
	}
}

// TestDebuggerSteppingOut: stepping in pdb past the end of the cell ends
// the debugger there; the driver's frames are never shown, the next cell
// does not stop in pdb, and the variables are kept.
func TestDebuggerSteppingOut(t *testing.T) {
	// A sitecustomize (or .pth file) that imports pdb: bdb is loaded
	// before the driver starts.
	site := t.TempDir()
	if err := os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte("import pdb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, code, answer string
		opts               []Option
	}{
		{"next at the last line", "x = 1\nbreakpoint()", "n", nil},
		{"next out of a function", "def f():\n    breakpoint()\n    return 2\ny = f()\ny", "n", nil},
		{"step through an exception", "breakpoint()\n1/0", "s", nil},
		{"pdb.set_trace and next", "import pdb\npdb.set_trace()\nz = 3", "n", nil},
		{"bdb loaded at start-up, step through an exception", "breakpoint()\n1/0", "s", []Option{WithEnv("PYTHONPATH=" + site)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t, c.opts...)
			execute(t, r, "kept = 42")
			resp := execute(t, r, c.code)
			for i := 0; resp.Waiting && i < 10; i++ {
				if strings.Contains(resp.Output, "<unfold-driver>") {
					t.Errorf("step %d: got %q, want no frame of the driver", i, resp.Output)
				}
				resp = execute(t, r, c.answer)
			}
			if resp.Waiting || strings.Contains(resp.Output, "<unfold-driver>") || strings.Contains(resp.Output, "BdbQuit") {
				t.Errorf("got %+v, want the cell ended, no frame of the driver", resp)
			}
			step{code: "kept", want: exactly("42"), success: true}.check(t, execute(t, r, "kept"))
			step{code: "1+1", want: exactly("2"), success: true}.check(t, execute(t, r, "1+1"))
		})
	}
}

// TestExitValues: SystemExit whose code a reply cannot carry as it is (too
// large for a JSON reader, too long, a repr that raises) is reported, and
// the session goes on.
func TestExitValues(t *testing.T) {
	r := newREPL(t)
	execute(t, r, "import sys\nkept = 42")
	for _, s := range []step{
		{code: "sys.exit(10**400)", has: []string{"SystemExit: 1000"}},
		{code: "sys.exit(10**5000)", has: []string{"SystemExit: <"}}, // "<exception str() failed>", "<unprintable SystemExit object>" up to 3.10
		{code: "sys.exit(list(range(300000)))", has: []string{"SystemExit: [0, 1, 2"}},
		{code: "class X:\n    def __repr__(self): raise ValueError('no repr')\nsys.exit(X())", has: []string{"SystemExit"}},
		{code: "sys.exit(0)", has: []string{"SystemExit: 0"}, success: true},
	} {
		s.check(t, execute(t, r, s.code))
		step{code: "kept", want: exactly("42"), success: true}.check(t, execute(t, r, "kept"))
	}
}

// TestLongExceptionChain: a chain of exceptions (raise ... from) longer
// than the recursion limit is shown, and the session goes on.
func TestLongExceptionChain(t *testing.T) {
	r := newREPL(t)
	execute(t, r, "kept = 42")
	chain := step{code: "chain", has: []string{"ValueError: 2999"}}
	if resp := execute(t, r, "import sys\nsys.version_info >= (3, 9)"); resp.Output == "True" {
		// Python 3.8's traceback module itself recurses along the chain:
		// only the message can be shown there.
		chain.has = append(chain.has, "The above exception was the direct cause")
	}
	chain.check(t, execute(t, r, "e = None\nfor i in range(3000):\n    try:\n        raise ValueError(i) from e\n    except ValueError as x:\n        e = x\nraise e"))
	step{code: "kept", want: exactly("42"), success: true}.check(t, execute(t, r, "kept"))
}

// TestTracebackNotShown: an exception whose traceback cannot be formatted
// (a module's loader fails to give its source) is shown with its message
// and a note, and the session goes on.
func TestTracebackNotShown(t *testing.T) {
	r := newREPL(t)
	execute(t, r, "kept = 42")
	step{code: "loader", want: exactly("KeyError: 'the message'\n[the traceback could not be shown: ValueError]")}.check(t,
		execute(t, r, "class Loader:\n    def get_source(self, name):\n        raise ValueError('no source')\n"+
			"g = {'__name__': 'm', '__loader__': Loader()}\n"+
			"exec(compile('def f():\\n    raise KeyError(\"the message\")', '/nonexistent/m.py', 'exec'), g)\ng['f']()"))
	step{code: "kept", want: exactly("42"), success: true}.check(t, execute(t, r, "kept"))
}

// TestStdinReads: sys.stdin gives the lines it is sent in order, none
// lost, whatever the size of each read, as text and as bytes.
func TestStdinReads(t *testing.T) {
	for _, c := range []struct {
		name, code string
		answers    []string
		want       string
	}{
		{"read(n) twice from one line", "a = sys.stdin.read(3)\nb = sys.stdin.read(4)\n(a, b)", []string{"abcdef"}, "('abc', 'def\\n')"},
		{"read(n) over two lines", "sys.stdin.read(5)", []string{"abc", "def"}, "'abc\\nd'"},
		{"read(0)", "sys.stdin.read(0)", nil, "''"},
		{"readline(n)", "(sys.stdin.readline(2), sys.stdin.readline())", []string{"abcd"}, "('ab', 'cd\\n')"},
		{"buffer", "sys.stdin.buffer.read(6)", []string{"é ok"}, "b'\\xc3\\xa9 ok\\n'"},
		{"a text stream", "isinstance(sys.stdin, io.TextIOBase)", nil, "True"},
		{"input() after read(1)", "c = sys.stdin.read(1)\nrest = input('rest? ')\n(c, rest)", []string{"yes"}, "rest? ('y', 'es')"},
		{"getpass() after read(1)", "import getpass\nc = sys.stdin.read(1)\n(c, getpass.getpass())", []string{"secret"}, "Password: \n('s', 'ecret')"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newREPL(t)
			execute(t, r, "import sys, io")
			resp := execute(t, r, c.code)
			for _, a := range c.answers {
				if !resp.Waiting {
					t.Fatalf("got %+v, want it waiting for %q", resp, a)
				}
				resp = execute(t, r, a)
			}
			step{code: c.code, want: exactly(c.want), success: true}.check(t, resp)
		})
	}
	t.Run("what a cell leaves unread is dropped", func(t *testing.T) {
		r := newREPL(t)
		execute(t, r, "import sys")
		if resp := execute(t, r, "sys.stdin.read(1)"); !resp.Waiting {
			t.Fatalf("got %+v, want it waiting for a line", resp)
		}
		step{code: "abc", want: exactly("'a'"), success: true}.check(t, execute(t, r, "abc"))
		if resp := execute(t, r, "sys.stdin.readline()"); !resp.Waiting {
			t.Errorf("got %+v, want it waiting for a new line, not the rest of the last", resp)
		}
	})
	t.Run("closed by a with block", func(t *testing.T) {
		r := newREPL(t)
		execute(t, r, "import sys")
		resp := execute(t, r, "with sys.stdin as f:\n    d = f.readline()\nd")
		if !resp.Waiting {
			t.Fatalf("got %+v, want it waiting for a line", resp)
		}
		step{code: "once", want: exactly("'once\\n'\n[The code closed sys.stdin, so nothing could be read from it any more. " +
			"A new sys.stdin reading this session's input was put in its place; variables and imports are kept.]"), success: true}.check(t, execute(t, r, "once"))
		if resp := execute(t, r, "sys.stdin.closed, sys.stdin.readline()"); !resp.Waiting {
			t.Fatalf("got %+v, want it waiting for a line", resp)
		}
		step{code: "again", want: exactly("(False, 'again\\n')"), success: true}.check(t, execute(t, r, "again"))
	})
}

// TestLastException: a failed cell sets sys.last_value and the rest, as
// the interactive interpreter does, so pdb.pm() and
// traceback.print_last() work.
func TestLastException(t *testing.T) {
	r := newREPL(t)
	execute(t, r, "def f():\n    secret = 7\n    1/0\nf()")
	step{code: "last", want: exactly("('ZeroDivisionError', True)"), success: true}.check(t,
		execute(t, r, "import sys\n(type(sys.last_value).__name__, sys.last_exc is sys.last_value)")) // pdb.pm() reads sys.last_exc from 3.13 on
	resp := execute(t, r, "import pdb\npdb.pm()")
	if !resp.Waiting {
		t.Fatalf("pdb.pm(): got %+v, want the debugger waiting", resp)
	}
	step{code: "p secret", has: []string{"7"}}.check(t, execute(t, r, "p secret"))
	step{code: "q", success: true}.check(t, execute(t, r, "q"))
}
