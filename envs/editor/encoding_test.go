package editor

import (
	"cmp"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// encode returns s in enc, failing the test when it cannot.
func encode(t *testing.T, enc encoding.Encoding, s string) string {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCP1251 edits a windows-1251 file holding Cyrillic text: the view
// shows it decoded, the edit is written in windows-1251, and every other
// byte is kept.
func TestCP1251(t *testing.T) {
	before := "Привет, мир\r\nвторая строка\r\nконец\r\n"
	after := "Привет, мир\r\nновая строка — ёж\r\nконец\r\n"
	raw := encode(t, charmap.Windows1251, before)
	tests := []struct {
		name   string
		header string // the file's first line, declaring its encoding or not
		opts   []Option
	}{
		{name: "configured", opts: []Option{WithFallbackEncoding("cp1251")}},
		{name: "declared", header: "# -*- coding: cp1251 -*-\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := encode(t, charmap.Windows1251, tt.header)
			e, fsys := newMem(t, map[string]string{"ru.txt": head + raw}, tt.opts...)
			if got, want := ok(t, e, "view ru.txt /^Привет/ /^конец/"), "Added view [1] ru.txt /^Привет/ to /^конец/ [windows-1251]"; got != want {
				t.Errorf("response: got %q, want %q", got, want)
			}
			n := strings.Count(tt.header, "\n")
			screen := views(t, e)
			if want := "вторая строка"; !strings.Contains(screen, want) {
				t.Errorf("screen lacks %q:\n%s", want, screen)
			}
			line := strings.Fields(strings.Split(screen, "\n")[3])[0]
			ok(t, e, "edit ru.txt "+line+"\nновая строка — ёж")
			if got, want := readFile(t, fsys, "ru.txt"), head+encode(t, charmap.Windows1251, after); got != want {
				t.Errorf("file: got %q, want %q", got, want)
			}
			if got, want := ok(t, e, `search "ёж" *.txt`), "Matches:\n  ru.txt:"+string(rune('2'+n))+": новая строка — ёж\nSearched 1 file"; got != want {
				t.Errorf("search: got %q, want %q", got, want)
			}
			views(t, e)
			got := fail(t, e, "edit ru.txt "+line+"\n中文")
			if want := "line 1 of the new text has '中' (U+4E2D), which windows-1251 cannot encode"; !strings.Contains(got, want) {
				t.Errorf("unencodable: got %q, want it to contain %q", got, want)
			}
			if got, want := readFile(t, fsys, "ru.txt"), head+encode(t, charmap.Windows1251, after); got != want {
				t.Errorf("file after the refused edit: got %q, want %q", got, want)
			}
		})
	}
}

// TestLatin1 edits an ISO-8859-1 file named by its fallback.
func TestLatin1(t *testing.T) {
	raw := encode(t, charmap.ISO8859_1, "café\nnaïve\n")
	e, fsys := newMem(t, map[string]string{"fr.txt": raw}, WithFallbackEncoding("latin-1"))
	ok(t, e, "view fr.txt")
	if got, want := views(t, e), "Views:\n  [1] fr.txt (whole file) [ISO-8859-1]\n      1  café\n      2  naïve"; got != want {
		t.Errorf("screen: got %q, want %q", got, want)
	}
	ok(t, e, "edit fr.txt 2\ncrème brûlée")
	if got, want := readFile(t, fsys, "fr.txt"), encode(t, charmap.ISO8859_1, "café\ncrème brûlée\n"); got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
}

// TestUTF16 edits UTF-16 files with a byte order mark, little and big
// endian: shown decoded, written back in UTF-16 with the mark.
func TestUTF16(t *testing.T) {
	for _, tt := range []struct {
		name  string
		enc   encoding.Encoding
		label string
	}{
		{"little endian", unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), "UTF-16LE"},
		{"big endian", unicode.UTF16(unicode.BigEndian, unicode.UseBOM), "UTF-16BE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, fsys := newMem(t, map[string]string{"w.txt": encode(t, tt.enc, "Name=Ünïcode\r\nValue=1\r\n")})
			ok(t, e, "view w.txt")
			if got, want := views(t, e), "Views:\n  [1] w.txt (whole file) ["+tt.label+"]\n      1  Name=Ünïcode\n      2  Value=1"; got != want {
				t.Errorf("screen: got %q, want %q", got, want)
			}
			ok(t, e, "edit w.txt 2\nValue=2 ✓")
			if got, want := readFile(t, fsys, "w.txt"), encode(t, tt.enc, "Name=Ünïcode\r\nValue=2 ✓\r\n"); got != want {
				t.Errorf("file: got %q, want %q", got, want)
			}
			if got := ok(t, e, `search "Value" *.txt`); !strings.Contains(got, "w.txt:2: Value=2 ✓") {
				t.Errorf("search: got %q, want the decoded line", got)
			}
		})
	}
}

// TestUnknownEncoding edits a file that is not UTF-8 and names no
// encoding: ASCII goes in with every other byte kept; other characters
// are refused, so the file never holds two encodings.
func TestUnknownEncoding(t *testing.T) {
	const raw = "caf\xe9\nline two\n"
	e, fsys := newMem(t, map[string]string{"x.txt": raw})
	ok(t, e, "view x.txt")
	if got, want := views(t, e), "Views:\n  [1] x.txt (whole file) [unknown 8-bit encoding]\n      1  caf\uFFFD\n      2  line two"; got != want {
		t.Errorf("screen: got %q, want %q", got, want)
	}
	got := fail(t, e, "edit x.txt 2\nligne deux é")
	if want := "the file is not UTF-8 and its encoding is unknown"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
	ok(t, e, "edit x.txt 2\nLINE TWO")
	if got, want := readFile(t, fsys, "x.txt"), "caf\xe9\nLINE TWO\n"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
}

// TestEncodingNotRoundTrip refuses to edit a file whose bytes its
// encoding cannot give back (0x98 has no character in windows-1251).
func TestEncodingNotRoundTrip(t *testing.T) {
	raw := encode(t, charmap.Windows1251, "строка\n") + "\x98\n"
	e, fsys := newMem(t, map[string]string{"r.txt": raw}, WithFallbackEncoding("windows-1251"))
	ok(t, e, "view r.txt")
	got := fail(t, e, "edit r.txt 1\nновая")
	if want := "r.txt has bytes that are not valid windows-1251"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
	if got := readFile(t, fsys, "r.txt"); got != raw {
		t.Errorf("file: got %q, want it untouched", got)
	}
}

// TestDeclarationWhereTheFormatPutsIt takes an encoding from a
// declaration only where its format puts one: a PEP 263 or Emacs comment on
// line 1 or 2, an XML declaration opening the file, an HTML <meta>. A name
// in code, a string or a YAML value is not a declaration, and UTF-16 or
// UTF-32 is never taken from one.
func TestDeclarationWhereTheFormatPutsIt(t *testing.T) {
	for _, tt := range []struct {
		name, raw, want string // want: the codec's label
		file            string // the file's name, "x" when empty
	}{
		{"pep 263 line 1", "# -*- coding: cp1251 -*-\n\xcf\n", "windows-1251", ""},
		{"pep 263 line 2", "#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\ncaf\xe9\n", "ISO-8859-1", ""},
		{"emacs in a C comment", "/* -*- mode: c; coding: cp1251 -*- */\n\xcf\n", "windows-1251", ""},
		{"xml prolog", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<a>caf\xe9</a>\n", "ISO-8859-1", ""},
		{"html meta charset", "<!doctype html>\n<html><head><meta charset=\"windows-1251\">\n\xcf\n", "windows-1251", ""},
		{"html meta content", "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\ncaf\xe9\n", "ISO-8859-1", ""},
		{"pep 263 on line 3", "import sys\n\n# coding: cp1251\n\xcf\n", "unknown 8-bit encoding", ""},
		{"a name in code", "import sys\nLEGACY = 'encoding=cp1251'\nsign = '\xb1'\n", "unknown 8-bit encoding", ""},
		{"a charset in a string", "CT = 'text/html; charset=windows-1251'\nname = 'Jos\xe9'\n", "unknown 8-bit encoding", ""},
		{"yaml value", "encoding: cp1251\nname: Jos\xe9\n", "unknown 8-bit encoding", ""},
		{"xml declaration not first", "\n<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\ncaf\xe9\n", "unknown 8-bit encoding", ""},
		{"utf-16 in a code line", "# caf\xe9 script\nf = io.open('x', encoding=\"utf-16\")\n", "unknown 8-bit encoding", ""},
		{"utf-16 in pep 263", "# coding: utf-16\ncaf\xe9\n", "unknown 8-bit encoding", ""},
		{"utf-32 in xml", "<?xml version=\"1.0\" encoding=\"UTF-32\"?>\ncaf\xe9\n", "unknown 8-bit encoding", ""},
		{"utf-16le in meta", "<html><meta charset=\"utf-16le\">\ncaf\xe9\n", "unknown 8-bit encoding", ""},
		{"meta in an html file", "<head><meta charset=\"windows-1251\">\n\xcf\n", "windows-1251", "page.htm"},
		{"meta in a python string", "# app.py\nTPL = '<meta charset=\"windows-1251\">'\ns = 'caf\xe9'\n", "unknown 8-bit encoding", "t.py"},
		{"meta in markdown", "Use `<meta charset=\"shift_jis\">` in your page.\nCaf\xe9\n", "unknown 8-bit encoding", "R.md"},
		{"cr-only past line 2", "# config\rname: x\rdb:\r  encoding: cp1251\rtitle: caf\xe9\r", "unknown 8-bit encoding", "c.yaml"},
		{"cr-only pep 263 line 2", "#!/usr/bin/env python\r# coding: cp1251\r\xcf\r", "windows-1251", "a.py"},
		{"crlf pep 263 line 2", "#!/usr/bin/env python\r\n# coding: cp1251\r\n\xcf\r\n", "windows-1251", "a.py"},
		{"pep 263 line 2 after code", "import os\n# coding: cp1251\ncaf\xe9\n", "unknown 8-bit encoding", "a.py"},
		{"pep 263 line 2 after a blank line", "\n# coding: cp1251\n\xcf\n", "windows-1251", "a.py"},
		{"replacement in meta", "<!DOCTYPE html>\n<meta charset=\"iso-2022-kr\">\na\nb\xe9\n", "unknown 8-bit encoding", ""},
		{"replacement in pep 263", "# coding: csiso2022kr\ncaf\xe9\n", "unknown 8-bit encoding", ""},
		{"ebcdic", "# coding: ibm037\ncaf\xe9\n", "unknown 8-bit encoding", ""},
		{"x-user-defined", "# coding: x-user-defined\ncaf\xe9\n", "unknown 8-bit encoding", ""},
		{"shift_jis is taken", "# coding: shift_jis\n\x82\xa0\n", "Shift_JIS", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := detect([]byte(tt.raw), cmp.Or(tt.file, "x"), nil).label(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStrayDeclarationKeepsOneEncoding edits a file that is UTF-8 but for
// one stray Latin-1 byte and names cp1251 in its code: the file is not
// taken for windows-1251, so a Cyrillic edit is refused rather than
// written in cp1251 among UTF-8 lines, and an ASCII edit goes in.
func TestStrayDeclarationKeepsOneEncoding(t *testing.T) {
	const raw = "import sys\nLEGACY = 'encoding=cp1251'\ngreeting = 'привет'\nsign = '\xb1'\n"
	e, fsys := newMem(t, map[string]string{"g.py": raw})
	ok(t, e, "view g.py")
	if got, want := views(t, e), "      3  greeting = 'привет'"; !strings.Contains(got, want) {
		t.Errorf("screen: got %q, want it to contain %q", got, want)
	}
	got := fail(t, e, "edit g.py 3\ngreeting = 'привет, мир'")
	if want := "its encoding is unknown"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
	if got := readFile(t, fsys, "g.py"); got != raw {
		t.Errorf("file after the refused edit: got %q, want it untouched", got)
	}
	ok(t, e, "edit g.py 1\nimport os")
	if got, want := readFile(t, fsys, "g.py"), "import os"+raw[len("import sys"):]; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
}

func TestBadFallbackEncoding(t *testing.T) {
	_, err := NewFs(nil, nil)
	if err == nil {
		t.Fatal("NewFs(nil): got no error")
	}
	if _, err := New(t.TempDir(), nil, WithFallbackEncoding("klingon")); err == nil || !strings.Contains(err.Error(), `unknown encoding "klingon"`) {
		t.Errorf("got %v, want an error naming the unknown encoding", err)
	}
}

// FuzzDecode decodes arbitrary bytes as a file: it never panics, and when
// the codec says the text round-trips, encoding it gives the bytes back
// and its lines read back as they were split.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("a\r\nb\n"), "")
	f.Add([]byte("\xff\xfea\x00\r\x00"), "")
	f.Add([]byte("caf\xe9\rx\r"), "windows-1252")
	f.Add([]byte("# coding: cp1251\n\xcf\xf0\xe8"), "")
	f.Fuzz(func(t *testing.T, raw []byte, fallback string) {
		var fb *namedEncoding
		if ne, err := lookupEncoding(fallback); err == nil && fallback != "" {
			fb = &ne
		}
		tx, err := decodeText(raw, nil, "f", fb)
		if err != nil {
			return
		}
		if !tx.codec.roundTrips(tx.raw, tx.data) {
			return
		}
		back, err := tx.codec.encode(tx.data)
		if err != nil || string(back) != string(raw) {
			t.Fatalf("%q (%s): round trip gave %q, %v", raw, tx.codec.label(), back, err)
		}
		if n := lineCount(tx.data); n < 1 {
			t.Fatalf("%q: %d lines", raw, n)
		}
		if sec, ok := resolveLines(tx.data, 1, 0); !ok || len(sec.lines) == 0 {
			t.Fatalf("%q: whole-file view: %+v %v", raw, sec, ok)
		}
	})
}
