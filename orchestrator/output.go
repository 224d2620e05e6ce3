package orchestrator

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
)

// outputDir is where, under the project directory, the whole output of
// responses cut to their budget or their environment's output limit is
// saved.
const outputDir = "context/output"

// saver returns how the environment called name saves the whole output of
// a response its budget or output limit cut, read as a stream (it may be
// larger than memory): in a new file under the project's context/output,
// named by its path relative to the project, when [WithProject] was given;
// nil (a temporary file) otherwise. The file is made through an [os.Root]
// of the project, so a context directory that is a symbolic link to
// somewhere outside the project fails the save (the response then shows
// the output whole, or for output past the memory limit saves it in the
// system's temporary directory, and says why) instead of writing there.
func (o *Orchestrator) saver(name string) func(io.Reader) (string, error) {
	if o.project == "" {
		return nil
	}
	return func(output io.Reader) (string, error) {
		root, err := os.OpenRoot(o.project)
		if err != nil {
			return "", err
		}
		defer root.Close()
		if err := root.MkdirAll(outputDir, 0o755); err != nil {
			return "", err
		}
		return saveNew(root, outputDir, name, output)
	}
}

// saveNew writes output to a new file in dir of root, named
// prefix-<random>.txt as os.CreateTemp names files, and returns its name
// relative to root; on failure no file is left.
func saveNew(root *os.Root, dir, prefix string, output io.Reader) (string, error) {
	for range 100 {
		rel := path.Join(dir, prefix+"-"+strconv.FormatUint(uint64(rand.Uint32()), 10)+".txt")
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
			_ = root.Remove(rel)
			return "", err
		}
		return rel, nil
	}
	return "", errors.New("save output: no free file name in " + dir)
}
