package editor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/spf13/afero"
	"github.com/unfold-dev/unfold/internal/readfile"
)

func (e *Editor) create(_ context.Context, c command) (string, error) {
	p, err := e.resolvePath(c.path)
	if err != nil {
		return "", err
	}
	q := quotePath(p)
	if fi, err := lstat(e.fs, p); err == nil {
		switch m := fi.Mode(); {
		case m.IsDir():
			return "", fmt.Errorf("%s is a directory; create makes files", p)
		case !m.IsRegular() && m&fs.ModeSymlink == 0:
			return "", fmt.Errorf("%s already exists and is %s, not a regular file; create makes new regular files, so nothing was written", p, readfile.Kind(m))
		}
		return "", fmt.Errorf("%s already exists; create only makes new files, so nothing was written.\nTo change it, open a view of the lines (view %s /<start>/ /<end>/), then edit them (edit %s <start>-<end>)", p, q, q)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", classify(p, err)
	}
	content := c.content
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	if int64(len(content)) > e.opt.maxFileSize {
		return "", fmt.Errorf("the content is %s, more than %s, the editor's limit for one file; nothing was created", formatSize(int64(len(content))), formatSize(e.opt.maxFileSize))
	}
	if dir := path.Dir(p); dir != "." {
		if err := e.fs.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("cannot create the directory %s: %w", dir, classify(dir, err))
		}
	}
	f, err := e.fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("%s already exists; create only makes new files", p)
		}
		return "", classify(p, err)
	}
	_, err = f.Write([]byte(content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = e.fs.Remove(p)
		return "", fmt.Errorf("cannot write %s: %v; nothing was created", p, err)
	}
	return "Created " + p, nil
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
