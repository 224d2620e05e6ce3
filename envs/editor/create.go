package editor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/spf13/afero"
	"github.com/unfold-dev/unfold/internal/readfile"
)

func (e *Editor) create(_ context.Context, c command) (string, error) {
	p, err := e.resolvePath(c.path)
	if err != nil {
		return "", err
	}
	q, sp := quotePath(p), showPath(p)
	if fi, err := lstat(e.fs, p); err == nil {
		switch m := fi.Mode(); {
		case m.IsDir():
			return "", fmt.Errorf("%s is a directory; create makes files", sp)
		case m&fs.ModeSymlink != 0:
			if _, err := e.fs.Stat(p); errors.Is(err, fs.ErrNotExist) {
				return "", danglingError(e.fs, p)
			}
		case !m.IsRegular():
			return "", fmt.Errorf("%s already exists and is %s, not a regular file; create makes new regular files, so nothing was written", sp, readfile.Kind(m))
		}
		return "", fmt.Errorf("%s already exists; create only makes new files, so nothing was written.\nTo change it, open a view of the lines (view %s /<start>/ /<end>/), then edit them (edit %s <start>-<end>)", sp, q, q)
	} else if errors.Is(err, syscall.ENOTDIR) {
		return "", notDirError(e.fs, p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", classify(p, err)
	}
	// The check, and the write, go to the file the path leads to once
	// the links among its directories are followed: the same file
	// through an alias is the same file.
	target, err := e.newFilePath(p)
	if err != nil {
		return "", fmt.Errorf("%w; nothing was written", err)
	}
	if err := e.mayWrite(target); err != nil {
		return "", fmt.Errorf("%w; nothing was written", err)
	}
	if err := checkText(contentLines(c.content)); err != nil {
		return "", fmt.Errorf("%w; nothing was created", err)
	}
	content := c.content
	if content != "" && !strings.HasSuffix(content, "\n") {
		// The last line ends as the lines before it do: CRLF content
		// (a client on Windows) gets CRLF, CR-only content (lines, no
		// LF) a CR.
		switch i := strings.LastIndexByte(content, '\n'); {
		case i < 0 && strings.Contains(content[:len(content)-1], "\r"):
			if !strings.HasSuffix(content, "\r") {
				content += "\r"
			}
		case i > 0 && content[i-1] == '\r' && strings.HasSuffix(content, "\r"):
			content += "\n"
		case i > 0 && content[i-1] == '\r':
			content += "\r\n"
		default:
			content += "\n"
		}
	}
	if int64(len(content)) > e.opt.maxFileSize {
		return "", fmt.Errorf("the content is %s, more than %s, the editor's limit for one file; nothing was created", formatSize(int64(len(content))), formatSize(e.opt.maxFileSize))
	}
	if fileOnPath(e.fs, p) != "" {
		// Some filesystems (an in-memory one) would make it.
		return "", notDirError(e.fs, p)
	}
	if dir := path.Dir(target); dir != "." {
		if err := e.fs.MkdirAll(dir, 0o755); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return "", deniedError(p, dir)
			}
			return "", fmt.Errorf("cannot create the directory %s: %w; nothing was created", showPath(dir), classify(dir, err))
		}
	}
	f, err := e.fs.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("%s already exists; create only makes new files", sp)
		}
		if errors.Is(err, fs.ErrPermission) {
			return "", deniedError(p, path.Dir(target))
		}
		return "", fmt.Errorf("cannot create %s: %w; nothing was created", sp, classify(p, err))
	}
	_, err = f.Write([]byte(content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = e.fs.Remove(target)
		return "", fmt.Errorf("cannot write %s: %v; nothing was created", sp, err)
	}
	return "Created " + sp, nil
}

// deniedError explains a create the system refused: the directory dir
// (relative to the root) does not let the file p be made in it.
func deniedError(p, dir string) error {
	where := "the project's top directory"
	if dir != "." {
		where = "the directory " + showPath(dir)
	}
	return fmt.Errorf("cannot create %s: the system denied permission: %s does not let files be made in it; nothing was created. Check its permissions (ls -ld %s) and have them changed, or create the file elsewhere",
		showPath(p), where, quotePath(dir))
}

// newFilePath returns the path, relative to the root, of the new file p
// once the symbolic links among its directories that exist are followed
// (see realPath); the directories not made yet are kept as named.
func (e *Editor) newFilePath(p string) (string, error) {
	dir, rest := path.Dir(p), path.Base(p)
	for dir != "." {
		if _, err := lstat(e.fs, dir); err == nil {
			break
		}
		rest = path.Join(path.Base(dir), rest)
		dir = path.Dir(dir)
	}
	if dir == "." {
		return p, nil
	}
	real, err := followLinks(e.fs, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", danglingDirError(e.fs, dir, path.Join(dir, rest))
	}
	if err != nil {
		return "", err
	}
	return path.Join(real, rest), nil
}

// lstat describes name without following a final symbolic link, when
// fsys can; otherwise it follows it.
func lstat(fsys afero.Fs, name string) (fs.FileInfo, error) {
	if ls, ok := fsys.(afero.Lstater); ok {
		fi, _, err := ls.LstatIfPossible(name)
		return fi, err
	}
	return fsys.Stat(name)
}

// notDirError explains a path to create that goes through a file, as
// though it were a directory.
func notDirError(fsys afero.Fs, p string) error {
	file := fileOnPath(fsys, p)
	if file == "" {
		return fmt.Errorf("a directory on the way to %s is not a directory; nothing was created", showPath(p))
	}
	return fmt.Errorf("%s is a file, not a directory, so %s cannot be created in it; nothing was created. Choose a path whose directories are directories (or are not there yet: create makes them)", showPath(file), showPath(p))
}

// fileOnPath returns the first of p's parent directories that exists and
// is not a directory, or "".
func fileOnPath(fsys afero.Fs, p string) string {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := fsys.Stat(dir)
		if err != nil {
			return ""
		}
		if !fi.IsDir() {
			return dir
		}
	}
	return ""
}

// danglingDirError explains a path to create, p, whose directory dir
// exists as a symbolic link, or leads through one, to nothing.
func danglingDirError(fsys afero.Fs, dir, p string) error {
	to := ""
	if lr, ok := fsys.(afero.LinkReader); ok {
		if dest, err := lr.ReadlinkIfPossible(dir); err == nil {
			to = " (to " + showPath(dest) + ")"
		}
	}
	return fmt.Errorf("%s is a symbolic link%s, or leads through one, to a directory that does not exist, so %s cannot be created in it; create makes directories but not at the far end of a link. Create the directory the link names (create a file in it), or remove the link", showPath(dir), to, showPath(p))
}

// danglingError explains a path to create that is a symbolic link to
// nothing.
func danglingError(fsys afero.Fs, p string) error {
	to := ""
	if lr, ok := fsys.(afero.LinkReader); ok {
		if dest, err := lr.ReadlinkIfPossible(p); err == nil {
			to = " (to " + showPath(dest) + ")"
		}
	}
	return fmt.Errorf("%s is a symbolic link%s to a file that does not exist; create does not write through links, so nothing was created. Create the file the link names, or remove the link and create %s", showPath(p), to, showPath(p))
}
