// Package golden compares test output with files under testdata. A
// difference fails the test with a unified diff from the file to the
// output; the files are rewritten instead when the environment has
// UNFOLD_UPDATE_GOLDEN=1 ([EnvVar]) or when a caller asks explicitly
// ([CheckFile]).
//
//	UNFOLD_UPDATE_GOLDEN=1 go test ./envs/...   # accept the new output
//	git diff                                    # and review it
//
// It registers no flag, so that a test binary which imports it, or
// prompttest, which is built on it, may define its own -update.
package golden

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// EnvVar is the environment variable that asks for golden files to be
// rewritten: 1 (or true) rewrites them, 0, false or unset compares.
const EnvVar = "UNFOLD_UPDATE_GOLDEN"

// Update reports whether the environment asks for golden files to be
// rewritten; a value of EnvVar that is not a boolean is an error.
func Update() (bool, error) {
	v, ok := os.LookupEnv(EnvVar)
	if !ok || v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("golden: %s=%q: want 1 to rewrite golden files or 0 to compare with them", EnvVar, v)
	}
	return on, nil
}

// Check compares got with testdata/<name> (a slash-separated path), or
// writes it there when the environment asks (see Update).
func Check(t testing.TB, name, got string) {
	t.Helper()
	CheckForce(t, name, got, false)
}

// CheckForce is Check, writing the file when force is set too. A value of
// the environment variable that is not a boolean fails either way: it was
// meant to say something, and a force that rewrites anyway would hide the
// mistake until a run without it.
func CheckForce(t testing.TB, name, got string, force bool) {
	t.Helper()
	update, err := Update()
	if err != nil {
		t.Fatal(err)
		return
	}
	path, err := Path(name)
	if err != nil {
		t.Fatal(err)
		return
	}
	CheckFile(t, path, got, update || force)
}

// Path returns the file testdata/<name>, name a slash-separated path. A
// name that leaves testdata (an absolute path, or one climbing out with
// ..) is an error: with an update, the file would be written there.
func Path(name string) (string, error) {
	p := filepath.FromSlash(name)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("golden: name %q leaves testdata; give a relative path inside it, without ..", name)
	}
	return filepath.Join("testdata", p), nil
}

// CheckFile compares got with the file at path, failing t with a unified
// diff when they differ, or, when update is true, writes got there (through
// a temporary file renamed into place, so that a failed write leaves the
// old file whole, keeping the file's permissions; a symbolic link is
// written through, to the file it leads to).
func CheckFile(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := write(path, got); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (set %s=1 to create it)", err, EnvVar)
		return
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (set %s=1 to accept the output):\n%s", path, EnvVar, Diff(path, string(want), got))
	}
}

// Diff returns the unified diff from want, the golden file at path, to got,
// the output; "" when they are equal. What a terminal does not show is
// marked on the lines that differ: a carriage return as ␍, spaces and tabs
// that end a line as · and →, and a character that shows as nothing or as
// a plain space (a byte order mark, a no-break or zero-width space, another
// control or format character, a byte that is not UTF-8) by its code, as
// ⟨U+FEFF⟩ or ⟨0xFF⟩; and a note says when that is the only difference.
func Diff(path, want, got string) string {
	d := udiff.Unified(path+" (golden)", path+" (output)", want, got)
	if d == "" {
		return ""
	}
	// The header, "--- " and "+++ " with the paths, is the first two
	// lines; it is told from the content by its place, since a line of
	// the files may start with "-- " or "++ " too.
	var b strings.Builder
	n := 0
	for line := range strings.Lines(d) {
		n++
		if body, ok := strings.CutSuffix(line, "\n"); ok && n > 2 && len(body) > 0 && (body[0] == '-' || body[0] == '+') {
			line = visible(body) + "\n"
		}
		b.WriteString(line)
	}
	lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
	switch {
	case lf(want) == lf(got) && strings.Contains(want, "\r\n"):
		b.WriteString("note: they differ only in line endings: the golden file has CRLF (\\r\\n), the output LF, as a checkout with core.autocrlf writes them; add the line `**/testdata/** -text` to the module's .gitattributes, so that git keeps testdata as committed, then check those files out again\n")
	case lf(want) == lf(got):
		b.WriteString("note: they differ only in line endings: the output has CRLF (\\r\\n), the golden file LF\n")
	case trimEnds(lf(want)) == trimEnds(lf(got)):
		b.WriteString("note: they differ only in spaces or tabs at the ends of lines, marked · and →\n")
	case plain(want) == plain(got):
		b.WriteString("note: they differ only in characters that show as nothing or as a space, marked ⟨U+…⟩\n")
	}
	return b.String()
}

// visible marks in a line of a diff a carriage return as ␍, the spaces
// and tabs that end it as · and →, and each hidden character (see hidden)
// by its code.
func visible(line string) string {
	var b strings.Builder
	for i, r := range line {
		switch {
		case r == '\r':
			b.WriteString("␍")
		case r == utf8.RuneError && !strings.HasPrefix(line[i:], "\uFFFD"):
			fmt.Fprintf(&b, "⟨0x%02X⟩", line[i])
		case hidden(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
	}
	line = b.String()
	body := strings.TrimRight(line, " \t")
	tail := strings.NewReplacer(" ", "·", "\t", "→").Replace(line[len(body):])
	return body + tail
}

// hidden reports whether r shows as nothing, or as a space that is not
// one: a space separator other than ' ' (U+00A0 NO-BREAK SPACE), a format
// character (U+200B ZERO WIDTH SPACE, U+FEFF the byte order mark), a
// line or paragraph separator, a control character other than tab,
// newline and carriage return.
func hidden(r rune) bool {
	switch {
	case r == ' ' || r == '\t' || r == '\n' || r == '\r':
		return false
	case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Cf, unicode.Cc):
		return true
	}
	return false
}

// plain is s with each hidden space separator as ' ', and the other
// hidden characters removed.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case !hidden(r):
			return r
		case unicode.Is(unicode.Zs, r):
			return ' '
		}
		return -1
	}, s)
}

// trimEnds removes the spaces and tabs that end each line of s.
func trimEnds(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		body, nl := strings.CutSuffix(line, "\n")
		b.WriteString(strings.TrimRight(body, " \t"))
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// write writes content to path through a temporary file renamed into
// place, with the permissions of the file it replaces (0644 for a new
// one). The temporary file's name is short, so that any name that may be
// a file's can be written, and errors name path, never it.
//
// A path that is a symbolic link (a golden file shared by several tests)
// is written through to the file it leads to: git keeps the link as
// committed and shows the change in that file, as an editor saving
// through the link would. Renamed onto the link, the new content would
// replace it with a file of its own, and the shared file keep the old.
func write(path, content string) error {
	dst := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if dst, err = filepath.EvalSymlinks(path); err != nil {
			return fmt.Errorf("write %s: it is a symbolic link to no file (%w); make it lead to one, or remove it", path, cause(err))
		}
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(dst); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".golden-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, cause(err))
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, cause(err))
	}
	return nil
}

// cause is err without the file names an *os.PathError or *os.LinkError
// adds, which are the temporary file's.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
