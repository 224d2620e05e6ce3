package rootfs

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"regexp"
	"slices"
	"sync"

	"github.com/spf13/afero"
)

// saving serializes SaveNew, so that one save never removes a file
// another is writing.
var saving sync.Mutex

// savedMode is the mode of the files SaveNew makes.
const savedMode = 0o600

// savedName matches the names SaveNew gives: prefix-<ten digits>.txt. A
// number of ten digits, always, tells them from a user's files named
// like results-2024.txt.
var savedName = regexp.MustCompile(`^.+-[0-9]{10}\.txt$`)

// SaveNew writes output to a new file in dir of fsys (made when missing),
// named prefix-<ten random digits>.txt, and returns its
// name in fsys; on failure no file is left. Over an [FS], a dir that is a
// symbolic link leading out of its directory fails instead of writing
// there: where unfold saves the whole of an output cut to its budget.
//
// When total is positive, the files SaveNew saved in dir (regular files
// named as it names them, of mode 0600) take at most total bytes together: once the
// new file is written, the oldest others are removed until they fit.
// The new file is always kept, even when it alone takes more; other
// files in dir are never counted or removed.
func SaveNew(fsys afero.Fs, dir, prefix string, output io.Reader, total int64) (string, error) {
	saving.Lock()
	defer saving.Unlock()
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for range 100 {
		name := path.Join(dir, fmt.Sprintf("%s-%010d.txt", prefix, rand.Uint32()))
		f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, savedMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = io.Copy(f, output)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = fsys.Remove(name)
			return "", err
		}
		if total > 0 {
			// A file that cannot be removed takes its room still; the
			// save itself succeeded.
			_ = prune(fsys, dir, path.Base(name), total)
		}
		return name, nil
	}
	return "", errors.New("save output: no free file name in " + dir)
}

// SaveNewIn is [SaveNew] in the directory dir of the operating system's
// file system (made when missing); the name it returns is dir joined with
// the file's.
func SaveNewIn(dir, prefix string, output io.Reader, total int64) (string, error) {
	return SaveNew(afero.NewOsFs(), dir, prefix, output, total)
}

// prune removes the oldest files SaveNew saved in dir, but keep, until
// they take at most total bytes.
func prune(fsys afero.Fs, dir, keep string, total int64) error {
	infos, err := afero.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	var saved []fs.FileInfo
	var used int64
	for _, fi := range infos {
		if fi.Mode().IsRegular() && fi.Mode().Perm() == savedMode && savedName.MatchString(fi.Name()) {
			saved = append(saved, fi)
			used += fi.Size()
		}
	}
	if used <= total {
		return nil
	}
	slices.SortFunc(saved, func(a, b fs.FileInfo) int {
		return cmp.Or(a.ModTime().Compare(b.ModTime()), cmp.Compare(a.Name(), b.Name()))
	})
	var errs []error
	for _, fi := range saved {
		if used <= total {
			break
		}
		if fi.Name() == keep {
			continue
		}
		if err := fsys.Remove(path.Join(dir, fi.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		used -= fi.Size()
	}
	return errors.Join(errs...)
}
