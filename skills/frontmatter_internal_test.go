package skills

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadFrontMatter reads front matter whole and in short reads, and
// checks how far into the file it reads.
func TestReadFrontMatter(t *testing.T) {
	long := strings.Repeat("x", 3000)
	body := "\n# Instructions\n" + strings.Repeat("Step.\n", 2000)
	cases := []struct {
		name, src, want string
		err             error
	}{
		{"plain", "---\nname: a\n---" + body, "name: a\n", nil},
		{"bom and crlf", "\uFEFF---\r\nname: a\r\n--- \r\n" + body, "name: a\r\n", nil},
		{"empty", "---\n---\n", "", nil},
		{"closed at the end", "---\nname: a\n---", "name: a\n", nil},
		{"past the first read", "---\nd: " + long + "\n---" + body, "d: " + long + "\n", nil},
		{"a longer delimiter", "---\n----\n---\n", "----\n", nil},
		{"empty file", "", "", errNoFrontMatter},
		{"no opening", "name: a\n---\n", "", errNoFrontMatter},
		{"indented opening", " ---\nname: a\n---\n", "", errNoFrontMatter},
		{"unclosed", "---\nname: a\n", "", errUnclosed},
		{"opening alone", "---", "", errUnclosed},
		{"too large", "---\n" + strings.Repeat("a: b\n", MaxFrontMatterBytes/5) + "---\n", "", errTooLarge},
		{"one line too long", "---\nd: " + strings.Repeat("x", MaxFrontMatterBytes) + "\n---\n", "", errTooLarge},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r },
		"bytes": iotest.OneByteReader,
		"half":  iotest.HalfReader,
	}
	var buf []byte // shared, as a worker shares it
	for _, c := range cases {
		for how, wrap := range readers {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				src := strings.NewReader(c.src)
				yml, err := readFrontMatter(wrap(src), &buf)
				if !errors.Is(err, c.err) || string(yml) != c.want {
					t.Fatalf("got %q, %v, want %q, %v", yml, err, c.want, c.err)
				}
				read := len(c.src) - src.Len()
				if end := strings.Index(c.src, c.want) + len(c.want) + len("---\n"); c.err == nil && read > max(end+end, frontMatterBuffer) {
					t.Errorf("read %d bytes, want the front matter (%d) and at most as much again", read, end)
				}
			})
		}
	}
	if cap(buf) > MaxFrontMatterBytes+frontMatterBuffer {
		t.Errorf("the buffer grew to %d bytes, past the bound of the front matter", cap(buf))
	}
}
