package editor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/afero"
	"github.com/unfold-dev/unfold/internal/readfile"
)

// binaryProbe is how many leading bytes are checked for a NUL byte, the
// sign of a binary file.
const binaryProbe = 8 << 10

// problem says why a file could not be read as text.
type problem uint8

const (
	problemOther    problem = iota
	problemNotFound         // no such file
	problemBinary           // a NUL byte in the first 8 KB
	problemTooLarge         // larger than the size limit
	problemEscapes          // the path leads outside the root
	problemDir              // a directory
	problemSpecial          // a FIFO, socket or device
	problemReadOnly         // opened for writing, but its mode has no write bit
)

// fileError is a failure to read a file as text.
type fileError struct {
	problem problem
	path    string
	limit   int64       // problemTooLarge: the limit in bytes
	kind    string      // problemSpecial: what the file is
	mode    fs.FileMode // problemReadOnly: the file's mode
	nothing string      // problemReadOnly: what was left undone, if said
	err     error
}

func (e *fileError) Error() string {
	p := showPath(e.path)
	switch e.problem {
	case problemNotFound:
		return "File not found: " + p
	case problemBinary:
		return fmt.Sprintf("%s is a binary file (it has a NUL byte in its first 8 KB); the editor works on text files only", p)
	case problemTooLarge:
		return fmt.Sprintf("%s is larger than %s, the editor's limit for one file", p, formatSize(e.limit))
	case problemEscapes:
		return fmt.Sprintf("%s leads outside the project root (through a symbolic link); the editor only opens files inside it", p)
	case problemDir:
		return p + " is a directory, not a file"
	case problemSpecial:
		return fmt.Sprintf("%s is %s, not a regular file; the editor reads and writes regular files only", p, e.kind)
	case problemReadOnly:
		// The refusal asks for the user to lift it rather than saying
		// how, so the model does not remove it on its own.
		nothing := ""
		if e.nothing != "" {
			nothing = "; " + e.nothing
		}
		return fmt.Sprintf("%s is read-only (mode %04o, %s), and the editor does not write over a read-only file%s. The protection is the user's: if the file must change, ask the user to make it writable, then try again",
			p, e.mode.Perm(), e.mode, nothing)
	}
	var pe *fs.PathError
	if errors.As(e.err, &pe) && showPath(pe.Path) != pe.Path {
		// The system's message names the file raw.
		return strings.Replace(e.err.Error(), pe.Path, showPath(pe.Path), 1)
	}
	return e.err.Error()
}

func (e *fileError) Unwrap() error { return e.err }

// marker returns the screen's one-line mark for a view whose file cannot
// be read.
func (e *fileError) marker() string {
	switch e.problem {
	case problemNotFound:
		return "[ERROR: file not found]"
	case problemBinary:
		return "[ERROR: binary file]"
	case problemTooLarge:
		return "[ERROR: file larger than " + formatSize(e.limit) + "]"
	case problemEscapes:
		return "[ERROR: path leads outside the project root]"
	case problemDir:
		return "[ERROR: not a file]"
	case problemSpecial:
		return "[ERROR: not a regular file]"
	case problemReadOnly:
		return "[ERROR: read-only file]"
	}
	return "[ERROR: " + strings.ReplaceAll(e.err.Error(), "\n", " ") + "]"
}

// leftUndone adds to err, the failure to open the file p (as the command
// named it) for a change, what was left undone.
func leftUndone(err error, p, nothing string) error {
	if fe, ok := err.(*fileError); ok && fe.problem == problemReadOnly {
		ro := *fe
		ro.path, ro.nothing = p, nothing
		return &ro
	}
	return fmt.Errorf("%w; %s", err, nothing)
}

// classify turns a filesystem error on name into a *fileError.
func classify(name string, err error) *fileError {
	if fe, ok := err.(*fileError); ok {
		return fe
	}
	fe := &fileError{path: name, err: err}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fe.problem = problemNotFound
	case isEscape(err):
		fe.problem = problemEscapes
	}
	return fe
}

// isEscape reports whether err is os.Root refusing a path that leads
// outside it. The os package does not export that error; its text is
// stable.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// text is a file read for the editor: its bytes, and the text the views,
// searches and edits work on.
type text struct {
	raw   []byte      // the bytes on disk
	data  []byte      // UTF-8, lines ending in LF or CRLF; raw itself for plain UTF-8
	codec codec       // how data comes from raw and goes back
	info  fs.FileInfo // from the open file
}

// readText reads name whole, refusing what is not a regular file
// (without blocking on a FIFO or opening a device), binary files and
// files over limit bytes; fallback is the encoding of a file that is not
// UTF-8 and declares none (nil for none).
func readText(fsys afero.Fs, name string, limit int64, fallback *namedEncoding) (*text, error) {
	f, fi, err := openRegular(fsys, name, false, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, fi, name, limit, fallback)
}

// readOpen reads the file f, opened by openRegular, as readText does.
func readOpen(f afero.File, fi fs.FileInfo, name string, limit int64, fallback *namedEncoding) (*text, error) {
	raw, err := readAll(f, fi.Size(), name, limit)
	if err != nil {
		return nil, err
	}
	return decodeText(raw, fi, name, fallback)
}

// readAll reads the open file f, of about size bytes, whole, refusing
// more than limit bytes.
func readAll(f io.Reader, size int64, name string, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead+1))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, classify(name, err)
	}
	if int64(buf.Len()) > limit {
		return nil, &fileError{problem: problemTooLarge, path: name, limit: limit}
	}
	return buf.Bytes(), nil
}

// decodeText detects raw's encoding and line endings and decodes it,
// refusing binary data.
func decodeText(raw []byte, fi fs.FileInfo, name string, fallback *namedEncoding) (*text, error) {
	c := detect(raw, name, fallback)
	if c.enc == nil && isBinary(raw) {
		return nil, &fileError{problem: problemBinary, path: name}
	}
	data, err := c.decode(raw)
	if err != nil {
		return nil, &fileError{path: name, err: fmt.Errorf("%s cannot be read as %s: %w", showPath(name), c.label(), err)}
	}
	if c.enc != nil && isBinary(data) {
		return nil, &fileError{problem: problemBinary, path: name}
	}
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') >= 0 {
		c.crOnly = true
		data = bytes.ReplaceAll(data, []byte{'\r'}, []byte{'\n'})
	}
	return &text{raw: raw, data: data, codec: c, info: fi}, nil
}

// openRegular opens name for reading, or reading and writing, when it is
// a regular file no larger than limit. A FIFO, socket or device is refused
// before it is opened, and the open cannot block (O_NONBLOCK); the open
// file is checked again, so a file swapped in between is refused too.
//
// For writing, a regular file whose mode has no write bit is refused:
// the protection is the user's, which root, who may write anyway, would
// otherwise pass over silently. The check comes before the size limit,
// so a read-only file that is also too large is refused as read-only.
func openRegular(fsys afero.Fs, name string, write bool, limit int64) (afero.File, fs.FileInfo, error) {
	fi, err := fsys.Stat(name)
	if err != nil {
		return nil, nil, classify(name, err)
	}
	if write && fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0 {
		return nil, nil, &fileError{problem: problemReadOnly, path: name, mode: fi.Mode()}
	}
	if err := checkRegular(name, fi, limit); err != nil {
		return nil, nil, err
	}
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := fsys.OpenFile(name, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, classify(name, err)
	}
	ofi, err := f.Stat()
	if err == nil {
		err = checkRegular(name, ofi, limit)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, classify(name, err)
	}
	return f, ofi, nil
}

// checkRegular refuses directories, special files and files over limit.
func checkRegular(name string, fi fs.FileInfo, limit int64) error {
	switch m := fi.Mode(); {
	case m.IsDir():
		return &fileError{problem: problemDir, path: name}
	case !m.IsRegular():
		return &fileError{problem: problemSpecial, path: name, kind: readfile.Kind(m)}
	case fi.Size() > limit:
		return &fileError{problem: problemTooLarge, path: name, limit: limit}
	}
	return nil
}

// isBinary reports whether data has a NUL byte in its first 8 KB.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
}

// formatSize formats n bytes for messages: "64 MB", "1.5 KB", "12 bytes".
func formatSize(n int64) string {
	const kb, mb = 1 << 10, 1 << 20
	switch {
	case n >= mb && n%mb == 0:
		return fmt.Sprintf("%d MB", n/mb)
	case n >= mb:
		return fmt.Sprintf("%.1f MB", float64(n)/mb)
	case n >= kb && n%kb == 0:
		return fmt.Sprintf("%d KB", n/kb)
	case n >= kb:
		return fmt.Sprintf("%.1f KB", float64(n)/kb)
	}
	return fmt.Sprintf("%d bytes", n)
}
