package editor

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"
)

// binaryProbe is how many leading bytes are checked for a NUL byte, the
// sign of a binary file.
const binaryProbe = 8 << 10

// maxLinkHops bounds how many symbolic links a write follows.
const maxLinkHops = 40

// problem says why a file could not be read as text.
type problem uint8

const (
	problemOther    problem = iota
	problemNotFound         // no such file
	problemBinary           // a NUL byte in the first 8 KB
	problemTooLarge         // larger than the size limit
	problemEscapes          // the path leads outside the root
	problemDir              // a directory
)

// fileError is a failure to read a file as text.
type fileError struct {
	problem problem
	path    string
	limit   int64 // problemTooLarge: the limit in bytes
	err     error
}

func (e *fileError) Error() string {
	switch e.problem {
	case problemNotFound:
		return "File not found: " + e.path
	case problemBinary:
		return fmt.Sprintf("%s is a binary file (it has a NUL byte in its first 8 KB); the editor works on text files only", e.path)
	case problemTooLarge:
		return fmt.Sprintf("%s is larger than %s, the editor's limit for one file", e.path, formatSize(e.limit))
	case problemEscapes:
		return fmt.Sprintf("%s leads outside the project root (through a symbolic link); the editor only opens files inside it", e.path)
	case problemDir:
		return e.path + " is a directory, not a file"
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
	}
	return "[ERROR: " + strings.ReplaceAll(e.err.Error(), "\n", " ") + "]"
}

// classify turns a filesystem error on name into a *fileError.
func classify(name string, err error) *fileError {
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

// readText reads name whole, refusing directories, binary files and files
// over limit bytes.
func readText(fsys afero.Fs, name string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, nil, classify(name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, classify(name, err)
	}
	if fi.IsDir() {
		return nil, nil, &fileError{problem: problemDir, path: name}
	}
	if fi.Size() > limit {
		return nil, nil, &fileError{problem: problemTooLarge, path: name, limit: limit}
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead+1))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, nil, classify(name, err)
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, nil, &fileError{problem: problemTooLarge, path: name, limit: limit}
	}
	if isBinary(data) {
		return nil, nil, &fileError{problem: problemBinary, path: name}
	}
	return data, fi, nil
}

// isBinary reports whether data has a NUL byte in its first 8 KB.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
}

// writeAtomic replaces the file name with data: it writes a temporary file
// in the same directory, gives it mode, and renames it over name. On any
// failure the temporary file is removed and name is left as it was. A
// symbolic link at name is followed (inside the root), so the link stays a
// link.
func writeAtomic(fsys afero.Fs, name string, data []byte, mode fs.FileMode) error {
	target, err := followLinks(fsys, name)
	if err != nil {
		return err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(target), "."+path.Base(target)+".unfold-"+hex.EncodeToString(rnd[:])+".tmp")
	perm := mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm&fs.ModePerm)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		_ = f.Close()
		_ = fsys.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := fsys.Chmod(tmp, perm); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := fsys.Rename(tmp, target); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	return nil
}

// followLinks returns the file name's symbolic links lead to, relative to
// the root, when fsys can report links; otherwise name.
func followLinks(fsys afero.Fs, name string) (string, error) {
	ls, ok1 := fsys.(afero.Lstater)
	lr, ok2 := fsys.(afero.LinkReader)
	if !ok1 || !ok2 {
		return name, nil
	}
	for range maxLinkHops {
		fi, lstat, err := ls.LstatIfPossible(name)
		if err != nil || !lstat || fi.Mode()&fs.ModeSymlink == 0 {
			return name, nil
		}
		dest, err := lr.ReadlinkIfPossible(name)
		if err != nil {
			return "", err
		}
		dest = filepath.ToSlash(dest)
		if path.IsAbs(dest) || filepath.IsAbs(dest) {
			return "", &fileError{problem: problemEscapes, path: name}
		}
		next := path.Join(path.Dir(name), dest)
		if next == ".." || strings.HasPrefix(next, "../") {
			return "", &fileError{problem: problemEscapes, path: name}
		}
		name = next
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", name)
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
