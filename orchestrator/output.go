package orchestrator

import (
	"io"

	"github.com/unfold-dev/unfold/rootfs"
)

// outputDir is where, under the project directory, the whole output of
// responses cut to their budget or their environment's output limit is
// saved.
const outputDir = "context/output"

// saver returns how the environment called name saves the whole output of
// a response its budget or output limit cut, read as a stream (it may be
// larger than memory): in a new file under the project's context/output,
// named by its path relative to the project, when [WithProject] was given,
// removing the oldest files saved there past the bound on their total
// ([WithSavedOutputLimits]); nil (a temporary file) otherwise. The file is made through an [os.Root]
// of the project, so a context directory that is a symbolic link to
// somewhere outside the project fails the save (the response then shows
// the output whole, or for output past the memory limit saves it in the
// system's temporary directory, and says why) instead of writing there.
func (o *Orchestrator) saver(name string) func(io.Reader) (string, error) {
	if o.project == "" {
		return nil
	}
	return func(output io.Reader) (string, error) {
		fsys, err := rootfs.New(o.project)
		if err != nil {
			return "", err
		}
		defer fsys.Close()
		return rootfs.SaveNew(fsys, outputDir, name, output, o.dirLimit)
	}
}
