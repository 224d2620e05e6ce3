package orchestrator

import (
	"fmt"
	"io"
	"os"

	"github.com/unfold-dev/unfold/envs"
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
			dir, err := o.outputTemp()
			if err != nil {
				return "", err
			}
			defer o.tempSaves.Done()
			return rootfs.SaveNewIn(dir, name, output, o.dirLimit)
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

// outputTemp returns the orchestrator's temporary directory for saved
// outputs, making it the first time, and counts a save under way, which
// the caller ends with tempSaves.Done when it returns no error. After
// Close it fails with [envs.ErrClosed].
func (o *Orchestrator) outputTemp() (string, error) {
	o.tempMu.Lock()
	defer o.tempMu.Unlock()
	if o.tempClosed {
		return "", fmt.Errorf("orchestrator: save output: %w", envs.ErrClosed)
	}
	if o.tempDir == "" {
		dir, err := os.MkdirTemp("", "unfold-output-*")
		if err != nil {
			return "", err
		}
		o.tempDir = dir
	}
	o.tempSaves.Add(1)
	return o.tempDir, nil
}

// removeOutputTemp removes the temporary directory of saved outputs, if
// one was made; no save makes one after it.
func (o *Orchestrator) removeOutputTemp() error {
	o.tempMu.Lock()
	o.tempClosed = true
	dir := o.tempDir
	o.tempMu.Unlock()
	o.tempSaves.Wait() // saves under way finish first
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("orchestrator: remove the saved outputs: %w", err)
	}
	return nil
}
