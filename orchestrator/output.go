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
// larger than memory): in a new file named by its path relative to the
// project under the project's context/output when [WithProject] was given,
// else by its absolute path in a temporary directory of the orchestrator's
// own, made at the first save and removed by [Orchestrator.Close]. Either
// way, saving a file removes the oldest files saved there past the bound on
// their total ([WithSavedOutputLimits]). The project's file is made
// through an [os.Root] of the project, so a context directory that is a
// symbolic link to somewhere outside the project fails the save (the
// response then shows the output whole, or for output past the memory
// limit saves it in the system's temporary directory, and says why)
// instead of writing there.
func (o *Orchestrator) saver(name string) func(io.Reader) (string, error) {
	if o.project == "" {
		return func(output io.Reader) (string, error) {
			return o.temp.SaveNamed(name, o.dirLimit, output)
		}
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
