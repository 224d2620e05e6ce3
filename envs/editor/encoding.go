package editor

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// codec turns a file's bytes into the text the editor works on (UTF-8,
// lines ending in LF or CRLF) and back. The zero codec is UTF-8 without a
// byte order mark, where the text is the bytes themselves.
type codec struct {
	enc  encoding.Encoding // nil for UTF-8
	name string            // the encoding's name for messages; "" for UTF-8
	bom  []byte            // the byte order mark the file starts with, kept on write
	// crOnly: the file's lines end in a lone CR (and it has no LF); the
	// text has LF in their place.
	crOnly bool
	// unknown: the bytes are not UTF-8 and no encoding was declared or
	// configured. The text is the bytes as they are; an edit may only add
	// ASCII, which reads the same in any encoding the file may be in.
	unknown bool
}

// utf8BOM and the UTF-16 byte order marks.
var (
	utf8BOM    = []byte{0xEF, 0xBB, 0xBF}
	utf16LEBOM = []byte{0xFF, 0xFE}
	utf16BEBOM = []byte{0xFE, 0xFF}
)

// The places a format puts an encoding declaration. A declaration
// anywhere else (a string in code, "encoding: x" in YAML, a charset in a
// comment) says nothing about the file's own bytes.
var (
	// pep263RE is a Python comment naming the encoding (PEP 263), which
	// counts on the first two lines only.
	pep263RE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[ \t\f]*#.*?coding[:=][ \t]*([-_.a-z0-9]+)`)
	})
	// emacsRE is an Emacs file-variables line naming the coding system
	// ("-*- coding: latin-1 -*-", in any language's comment), on the first
	// two lines too.
	emacsRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)-\*-(?:.*?[;\s])?coding:[ \t]*([-_.a-z0-9]+)[^\n]*?-\*-`)
	})
	// metaRE is an HTML <meta charset="x"> or <meta http-equiv ...
	// content="text/html; charset=x">, which HTML looks for in the first
	// 1,024 bytes.
	metaRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)<meta\s[^>]*?charset\s*=\s*["']?([-_.:a-z0-9]+)`)
	})
	// xmlRE is the encoding in an XML declaration, which must open the
	// file.
	xmlRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^<\?xml\s[^>]*?encoding\s*=\s*["']([-_.a-zA-Z0-9]+)["']`)
	})
)

// declaredProbe is how many leading bytes are searched for a declaration.
const declaredProbe = 1024

// declared returns the encoding raw, the bytes of the file name,
// declares where its format puts a declaration: a PEP 263 or Emacs comment
// on line 1, or on line 2 when line 1 is blank or a # comment (as Python
// reads it; lines end at LF, CRLF or CR), an XML declaration at the start,
// or, in an HTML file ([looksHTML]), a <meta> charset in the first
// [declaredProbe] bytes. An encoding that cannot hold an ASCII
// declaration is never taken from one: UTF-16 and UTF-32 (their bytes hold
// NULs an ASCII declaration cannot sit among), EBCDIC and the like, the
// WHATWG "replacement" encoding (which reads a whole file as one U+FFFD)
// and x-user-defined; a file that declares one is in some other encoding.
func declared(raw []byte, name string) (namedEncoding, bool) {
	head := raw[:min(len(raw), declaredProbe)]
	var names [][]byte
	if m := xmlRE().FindSubmatch(head); m != nil {
		names = append(names, m[1])
	}
	rest := head
	for n := range 2 {
		line, after := cutLine(rest)
		if m := pep263RE().FindSubmatch(line); m != nil {
			names = append(names, m[1])
		} else if m := emacsRE().FindSubmatch(line); m != nil {
			names = append(names, m[1])
		}
		if t := bytes.TrimLeft(line, " \t\f"); n == 0 && len(t) > 0 && t[0] != '#' {
			break // line 2 counts only after a blank line or a comment
		}
		rest = after
	}
	if looksHTML(head, name) {
		if m := metaRE().FindSubmatch(head); m != nil {
			names = append(names, m[1])
		}
	}
	for _, name := range names {
		ne, err := lookupEncoding(string(name))
		if err != nil || ne.enc == nil || !holdsASCII(ne) {
			continue
		}
		return ne, true
	}
	return namedEncoding{}, false
}

// cutLine returns the first line of b and what follows its end (LF, CRLF
// or CR).
func cutLine(b []byte) (line, after []byte) {
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 {
		return b, nil
	}
	if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
		return b[:i], b[i+2:]
	}
	return b[:i], b[i+1:]
}

// looksHTML reports whether a file is HTML, where a <meta> charset is a
// declaration: by its name's extension, or by its first bytes (a doctype
// or <html> tag, after blank space).
func looksHTML(head []byte, name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return true
	}
	start := bytes.ToLower(bytes.TrimLeft(head[:min(len(head), 64)], " \t\r\n\f"))
	return bytes.HasPrefix(start, []byte("<!doctype html")) || bytes.HasPrefix(start, []byte("<html"))
}

// asciiSample is the ASCII a declaration is written in: an encoding that
// does not read it as itself cannot have declared itself in it. (No
// backslash or tilde, which Shift_JIS and the like may read as ¥ and ‾.)
const asciiSample = "# -*- coding: x -*-\n<?xml encoding=\"x\"?><meta charset='x'>abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.;!"

// holdsASCII reports whether a declaration written in ASCII can name ne:
// not UTF-16 or UTF-32, the replacement encoding, x-user-defined, or an
// encoding that reads ASCII bytes as other characters (EBCDIC).
func holdsASCII(ne namedEncoding) bool {
	if wideUnicode(ne.name) || ne.enc == encoding.Replacement || strings.EqualFold(ne.name, "x-user-defined") {
		return false
	}
	got, err := ne.enc.NewDecoder().String(asciiSample)
	return err == nil && got == asciiSample
}

// wideUnicode reports whether the encoding named name is UTF-16 or UTF-32.
func wideUnicode(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasPrefix(n, "UTF-16") || strings.HasPrefix(n, "UTF-32") || strings.HasPrefix(n, "UTF16") || strings.HasPrefix(n, "UTF32")
}

// detect chooses the codec for raw: a byte order mark first, then valid
// UTF-8, then an encoding the file declares (see [declared]), then
// fallback (nil for none), else unknown. It does not check that the
// encoding round-trips; see [codec.roundTrips].
func detect(raw []byte, name string, fallback *namedEncoding) codec {
	var c codec
	switch {
	case bytes.HasPrefix(raw, utf8BOM):
		c = codec{bom: utf8BOM}
	case bytes.HasPrefix(raw, utf16LEBOM):
		c = codec{enc: unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), name: "UTF-16LE", bom: utf16LEBOM}
	case bytes.HasPrefix(raw, utf16BEBOM):
		c = codec{enc: unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), name: "UTF-16BE", bom: utf16BEBOM}
	case utf8.Valid(raw):
	default:
		if ne, ok := declared(raw, name); ok {
			c = codec{enc: ne.enc, name: ne.name}
			break
		}
		if fallback != nil && fallback.enc != nil {
			c = codec{enc: fallback.enc, name: fallback.name}
			break
		}
		c = codec{unknown: true}
	}
	return c
}

// namedEncoding is an encoding with the name messages give it; enc is nil
// for UTF-8.
type namedEncoding struct {
	enc  encoding.Encoding
	name string
}

// lookupEncoding finds an encoding by one of its names: IANA names and
// aliases ("ISO-8859-1", "latin1", "windows-1251") first, then the WHATWG
// labels ("cp1251").
func lookupEncoding(name string) (namedEncoding, error) {
	tries := []string{name, strings.ReplaceAll(name, "-", ""), strings.ReplaceAll(name, "_", "-")}
	for _, n := range tries {
		if enc, err := ianaindex.IANA.Encoding(n); err == nil && enc != nil {
			return namedEncoding{enc: unicodeOrNil(enc), name: encodingName(enc, n)}, nil
		}
	}
	for _, n := range tries {
		if enc, err := htmlindex.Get(n); err == nil && enc != nil {
			return namedEncoding{enc: unicodeOrNil(enc), name: encodingName(enc, n)}, nil
		}
	}
	return namedEncoding{}, fmt.Errorf("unknown encoding %q; give an IANA or WHATWG name such as windows-1251, ISO-8859-1 or UTF-16LE", clip(name, 40))
}

// unicodeOrNil returns nil for UTF-8, which needs no decoding.
func unicodeOrNil(enc encoding.Encoding) encoding.Encoding {
	if enc == unicode.UTF8 || enc == encoding.Nop {
		return nil
	}
	return enc
}

// encodingName returns the preferred MIME name of enc, else the name it
// was looked up by.
func encodingName(enc encoding.Encoding, asked string) string {
	if n, err := ianaindex.MIME.Name(enc); err == nil && n != "" {
		return n
	}
	if n, err := htmlindex.Name(enc); err == nil && n != "" {
		return n
	}
	return asked
}

// identity reports whether the text is the file's bytes as they are.
func (c codec) identity() bool {
	return c.enc == nil && len(c.bom) == 0 && !c.crOnly
}

// label is the encoding's name for headers and messages, "" for UTF-8.
func (c codec) label() string {
	if c.unknown {
		return "unknown 8-bit encoding"
	}
	return c.name
}

// decode returns the text of raw.
func (c codec) decode(raw []byte) ([]byte, error) {
	body := raw[len(c.bom):]
	if c.enc != nil {
		var err error
		if body, err = c.enc.NewDecoder().Bytes(body); err != nil {
			return nil, err
		}
	}
	if c.crOnly {
		body = bytes.ReplaceAll(body, []byte{'\r'}, []byte{'\n'})
	}
	return body, nil
}

// encode returns the bytes of text in the file's encoding, with its byte
// order mark and line endings. A character the encoding cannot hold is an
// error naming it.
func (c codec) encode(text []byte) ([]byte, error) {
	if c.crOnly {
		text = bytes.ReplaceAll(text, []byte{'\n'}, []byte{'\r'})
	}
	if c.enc != nil {
		out, err := c.enc.NewEncoder().Bytes(text)
		if err != nil {
			if bad, ok := c.firstUnencodable(string(text)); ok {
				return nil, bad
			}
			return nil, fmt.Errorf("cannot encode the text as %s: %v", c.name, err)
		}
		text = out
	}
	if len(c.bom) == 0 {
		return text, nil
	}
	return append(append(make([]byte, 0, len(c.bom)+len(text)), c.bom...), text...), nil
}

// roundTrips reports whether encoding the text of raw gives raw back, so
// that writing an edit changes no byte outside the edited lines.
func (c codec) roundTrips(raw, text []byte) bool {
	if c.identity() || c.unknown {
		return true
	}
	back, err := c.encode(text)
	return err == nil && bytes.Equal(back, raw)
}

// checkNew checks lines an edit would write: they must be valid UTF-8,
// hold only characters the encoding has, and, for a file whose encoding is
// unknown, only ASCII.
func (c codec) checkNew(lines []string) error {
	if err := checkText(lines); err != nil {
		return err
	}
	for i, l := range lines {
		if !utf8.ValidString(l) && !c.identity() {
			return fmt.Errorf("line %d of the new text is not valid UTF-8; write the text as UTF-8 and the editor writes it in the file's encoding (%s)", i+1, c.label())
		}
		if c.unknown {
			for _, r := range l {
				if r >= utf8.RuneSelf {
					return fmt.Errorf("line %d of the new text has %q (U+%04X), but the file is not UTF-8 and its encoding is unknown, so it could end up in two encodings; write ASCII only, declare the file's encoding in its first lines (like \"coding: cp1251\"), or configure a fallback encoding for the editor", i+1, r, r)
				}
			}
		}
		if c.enc != nil {
			if err, ok := c.firstUnencodable(l); ok {
				return fmt.Errorf("line %d of the new text %w", i+1, err)
			}
		}
	}
	return nil
}

// checkText refuses new text holding a NUL byte: the editor writes text,
// and a file with a NUL reads as binary, which the editor would then not
// show. In a model's text a NUL is a slip (a JSON "\u0000").
func checkText(lines []string) error {
	for i, l := range lines {
		if strings.IndexByte(l, 0) >= 0 {
			return fmt.Errorf(`line %d of the new text has a NUL byte ("\x00", in JSON "\u0000"); the editor writes text only, and a file holding NUL would read as binary: remove it`, i+1)
		}
	}
	return nil
}

// unencodableError is a character an encoding cannot hold.
type unencodableError struct {
	r    rune
	name string
}

func (e *unencodableError) Error() string {
	return fmt.Sprintf("has %q (U+%04X), which %s cannot encode; write it another way (the file keeps its encoding)", e.r, e.r, e.name)
}

// firstUnencodable returns the first character of s the encoding cannot
// hold.
func (c codec) firstUnencodable(s string) (*unencodableError, bool) {
	enc := c.enc.NewEncoder()
	var buf [16]byte
	for _, r := range s {
		if r < utf8.RuneSelf {
			continue
		}
		n := utf8.EncodeRune(buf[:], r)
		if _, err := enc.Bytes(buf[:n]); err != nil {
			return &unencodableError{r: r, name: c.name}, true
		}
	}
	return nil, false
}
