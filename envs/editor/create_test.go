package editor

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCreateThroughFile creates a file below a path that is a file: the
// refusal names the file in the way, on disk and in memory.
func TestCreateThroughFile(t *testing.T) {
	_, disk := diskProject(t, map[string]string{"a.txt": "a\n"})
	mem, _ := newMem(t, map[string]string{"a.txt": "a\n"})
	for name, e := range map[string]*Editor{"disk": disk, "memory": mem} {
		for _, p := range []string{"a.txt/b.txt", "a.txt/c/d.txt"} {
			t.Run(name+" "+p, func(t *testing.T) {
				contains(t, "create", fail(t, e, "create "+p+"\nx"),
					"a.txt is a file, not a directory, so "+p+" cannot be created in it; nothing was created")
			})
		}
	}
}

// TestCreateDanglingLink creates a file where a symbolic link to nothing
// is: the refusal says it is such a link, and nothing is created.
func TestCreateDanglingLink(t *testing.T) {
	dir, e := diskProject(t, nil)
	symlink(t, "missing.txt", filepath.Join(dir, "dangling"))
	contains(t, "create", fail(t, e, "create dangling\nx"),
		"dangling is a symbolic link (to missing.txt) to a file that does not exist")
	if _, err := os.Lstat(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("the link's target was created")
	}
}

// TestCreateLineEndings ends the last line of created content as its other
// lines end: CRLF content (a client on Windows) gets CRLF, CR-only content
// a CR, not a bare LF.
func TestCreateLineEndings(t *testing.T) {
	for _, tt := range []struct{ name, command, want string }{
		{"lf", "create w.txt\na\nb", "a\nb\n"},
		{"crlf", "create w.txt\r\na\r\nb", "a\r\nb\r\n"},
		{"crlf ending in cr", "create w.txt\r\na\r\nb\r", "a\r\nb\r\n"},
		{"crlf already ended", "create w.txt\r\na\r\nb\r\n", "a\r\nb\r\n"},
		{"cr only", "create w.txt\na\rb", "a\rb\r"},
		{"cr only already ended", "create w.txt\na\rb\r", "a\rb\r"},
		{"one line ending in cr", "create w.txt\na\r", "a\r\n"},
		{"one line", "create w.txt\na", "a\n"},
		{"empty", "create w.txt\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, fsys := newMem(t, nil)
			ok(t, e, tt.command)
			if got := readFile(t, fsys, "w.txt"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNewTextWithNUL refuses an edit or a create whose text holds a NUL
// byte, naming the line: the file would read as binary afterwards, and the
// editor would no longer show it.
func TestNewTextWithNUL(t *testing.T) {
	e, fsys := newMem(t, map[string]string{"n.txt": "a\nb\n"})
	ok(t, e, "view n.txt")
	contains(t, "edit", fail(t, e, "edit n.txt 1-2\nx\ny\x00z"),
		"line 2 of the new text has a NUL byte", "n.txt was not changed")
	if got, want := readFile(t, fsys, "n.txt"), "a\nb\n"; got != want {
		t.Errorf("file after the refused edit: got %q, want %q", got, want)
	}
	contains(t, "create", fail(t, e, "create m.txt\n\x00"),
		"line 1 of the new text has a NUL byte", "nothing was created")
	if _, err := fsys.Stat("m.txt"); err == nil {
		t.Error("create made m.txt")
	}
}
