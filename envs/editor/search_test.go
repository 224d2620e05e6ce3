package editor

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/afero"
)

func TestSearch(t *testing.T) {
	files := map[string]string{
		"b.go":            "package b\n// TODO: b\n",
		"a.go":            "package a\n\n// TODO: first\nfunc a() {} // TODO: second\n",
		"a-c.go":          "// TODO: dash sorts before slash\n",
		"a/x.go":          "// TODO: in a dir\n",
		"deep/er/y.go":    "// TODO: deep\n",
		"deep/er/y.md":    "TODO: markdown\n",
		".git/config.go":  "// TODO: never\n",
		"bin.go":          "// TODO\x00 binary\n",
		"crlf.go":         "x\r\n// TODO: crlf\r\n",
		"notes/TODO.txt":  "nothing here\n",
		"web/app.ts":      "// TODO: ts\n",
		"web/style.css":   "/* TODO: css */\n",
		"web/index.html":  "<!-- TODO: html -->\n",
		"dot/.hidden.go":  "// TODO: hidden\n",
		"skip/large.go":   strings.Repeat("// TODO: large\n", 10),
		"space dir/s.go":  "// TODO: space\n",
		"invalid/utf8.go": "// TODO: \xff\n",
	}
	e, _ := newMem(t, files, WithMaxFileSize(100))
	tests := []struct {
		name, command, want string
	}{
		{
			name:    "any depth, sorted by path and line",
			command: `search "TODO" *.go`,
			want: "Matches:\n" +
				"  a-c.go:1: // TODO: dash sorts before slash\n" +
				"  a.go:3: // TODO: first\n" +
				"  a.go:4: func a() {} // TODO: second\n" +
				"  a/x.go:1: // TODO: in a dir\n" +
				"  b.go:2: // TODO: b\n" +
				"  crlf.go:2: // TODO: crlf\n" +
				"  deep/er/y.go:1: // TODO: deep\n" +
				"  dot/.hidden.go:1: // TODO: hidden\n" +
				"  invalid/utf8.go:1: // TODO: \uFFFD\n" +
				"  space dir/s.go:1: // TODO: space\n" +
				"Searched 9 files; skipped 1 binary file, 1 file larger than 100 bytes",
		},
		{
			name:    "double star",
			command: `search "TODO" deep/**/*.go`,
			want:    "Matches:\n  deep/er/y.go:1: // TODO: deep\nSearched 1 file",
		},
		{
			name:    "braces",
			command: `search "TODO" web/*.{ts,css}`,
			want:    "Matches:\n  web/app.ts:1: // TODO: ts\n  web/style.css:1: /* TODO: css */\nSearched 2 files",
		},
		{
			name:    "regex and anchors",
			command: `search "^// TODO: (first|deep)$" **`,
			want:    "Matches:\n  a.go:3: // TODO: first\n  deep/er/y.go:1: // TODO: deep\nSearched 14 files; skipped 1 binary file, 1 file larger than 100 bytes",
		},
		{
			name:    "quote inside the pattern",
			command: `search "a\"b" *.txt`,
			want:    "No matches for \"a\\\"b\" in 1 file matching *.txt\nSearched 1 file",
		},
		{
			name:    "no file matches the glob",
			command: `search "TODO" *.rs`,
			want:    `No matches for "TODO" in files matching *.rs (no file matches the glob)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ok(t, e, tt.command); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestSearchCap(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	e, _ := newMem(t, map[string]string{"a.txt": b.String(), "b.txt": b.String()}, WithMaxMatches(5))
	got := ok(t, e, `search "hit" **`)
	want := "Matches:\n  a.txt:1: hit 0\n  a.txt:2: hit 1\n  a.txt:3: hit 2\n  a.txt:4: hit 3\n  a.txt:5: hit 4\n" +
		"  ... and 55 more matches (showing the first 5; narrow the pattern or the glob)\nSearched 2 files"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	e2, _ := newMem(t, map[string]string{"a.txt": "x\n", "b.txt": "x\n", "c.txt": "x\n"}, WithMaxFiles(2))
	if got := ok(t, e2, `search "x" *.txt`); !strings.HasSuffix(got, "\nStopped after 2 files; narrow the glob to search the rest") {
		t.Errorf("got %q, want it to say the search stopped", got)
	}
}

func TestSearchCancelled(t *testing.T) {
	e, _ := newMem(t, map[string]string{"a.txt": "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := e.Execute(ctx, `search "x" **`)
	if err != nil || r.Success {
		t.Errorf("got %+v, %v; want a failed response", r, err)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		glob string
		yes  []string
		no   []string
	}{
		{"*.go", []string{"a.go", "x/y/a.go"}, []string{"a.gox", "a.md"}},
		{"src/*.go", []string{"src/a.go"}, []string{"src/x/a.go", "a.go"}},
		{"src/**/*.go", []string{"src/a.go", "src/x/y/a.go"}, []string{"a.go", "srcx/a.go"}},
		{"**/test/**", []string{"test/a", "x/test/y/z"}, []string{"tests/a"}},
		{"**", []string{"a", "x/y"}, nil},
		{"./a/*", []string{"a/b"}, []string{"a/b/c"}},
		{"*.{go,md}", []string{"a.go", "d/b.md"}, []string{"c.txt"}},
		{"{a,b/{c,d}}/*", []string{"a/x", "b/c/x", "b/d/x"}, []string{"b/x", "c/x"}},
		{"?.go", []string{"a.go"}, []string{"ab.go"}},
		{"[ab].go", []string{"a.go"}, []string{"c.go"}},
		{"a/**/**/b", []string{"a/b", "a/x/b"}, []string{"a/x/c"}},
	}
	for _, tt := range tests {
		t.Run(tt.glob, func(t *testing.T) {
			g, err := compileGlob(tt.glob)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.yes {
				if !g.match(p) {
					t.Errorf("match(%q): got false, want true", p)
				}
			}
			for _, p := range tt.no {
				if g.match(p) {
					t.Errorf("match(%q): got true, want false", p)
				}
			}
		})
	}
	for _, bad := range []string{"/abs/*", "../x", "a/[", "{a,b", "x/../../y"} {
		t.Run("bad "+bad, func(t *testing.T) {
			if _, err := compileGlob(bad); err == nil {
				t.Errorf("got no error, want one")
			}
		})
	}
}

// denyFs refuses to open the paths in deny, as permissions would for a
// user who is not root.
type denyFs struct {
	afero.Fs
	deny map[string]bool
}

func (d denyFs) Open(name string) (afero.File, error) {
	return d.OpenFile(name, os.O_RDONLY, 0)
}

func (d denyFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if d.deny[path.Clean(name)] {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EACCES}
	}
	return d.Fs.OpenFile(name, flag, perm)
}

// TestSearchUnreadableDirectory counts a directory search cannot list
// as a directory, apart from the files it cannot read.
func TestSearchUnreadableDirectory(t *testing.T) {
	mem := afero.NewMemMapFs()
	for name, data := range map[string]string{"a.txt": "s\n", "secret.txt": "s\n", "locked/b.txt": "s\n"} {
		if err := afero.WriteFile(mem, name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := NewFs(denyFs{Fs: mem, deny: map[string]bool{"secret.txt": true, "locked": true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got := ok(t, e, `search "s" **`)
	if want := "Searched 1 file; skipped 1 unreadable file, 1 unreadable directory"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
}

// TestSearchDepthLimit reports a directory left out for being too deep as
// a directory, on both walks, and not as a file: it is not counted among
// the files searched or skipped.
func TestSearchDepthLimit(t *testing.T) {
	deep := strings.Repeat("d/", maxSearchDepth)
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{
			name:  "beside a file",
			files: map[string]string{"a.txt": "s\n", deep + "x.txt": "s\n", "b.txt": "none\n"},
			want:  "Matches:\n  a.txt:1: s\nSearched 2 files; skipped 1 directory 256 levels deep (the search goes no deeper)",
		},
		{
			name:  "alone",
			files: map[string]string{deep + "x.txt": "s\n"},
			want:  "No matches for \"s\" in files matching ** (no file matches the glob)\nSearched 0 files; skipped 1 directory 256 levels deep (the search goes no deeper)",
		},
	}
	for _, tc := range tests {
		t.Run("memory/"+tc.name, func(t *testing.T) {
			e, _ := newMem(t, tc.files)
			if got := ok(t, e, `search "s" **`); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
		t.Run("disk/"+tc.name, func(t *testing.T) {
			_, e := diskProject(t, tc.files)
			if got := ok(t, e, `search "s" **`); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
