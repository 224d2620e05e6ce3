package rootfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"

	"github.com/spf13/afero"
)

// SaveNew writes output to a new file in dir of fsys (made when missing),
// named prefix-<random>.txt as os.CreateTemp names files, and returns its
// name in fsys; on failure no file is left. Over an [FS], a dir that is a
// symbolic link leading out of its directory fails instead of writing
// there: where unfold saves the whole of an output cut to its budget.
func SaveNew(fsys afero.Fs, dir, prefix string, output io.Reader) (string, error) {
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for range 100 {
		name := path.Join(dir, prefix+"-"+strconv.FormatUint(uint64(rand.Uint32()), 10)+".txt")
		f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
		return name, nil
	}
	return "", errors.New("save output: no free file name in " + dir)
}
