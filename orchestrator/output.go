package orchestrator

import (
	"os"
	"path/filepath"

	"github.com/unfold-dev/unfold/envs"
)

// outputDir is where, under the project directory, the whole output of
// responses cut to their budget is saved.
const outputDir = "context/output"

// saver returns how the environment called name saves the whole output of
// a response its budget cut: under the project's context/output, named by
// its path relative to the project, when [WithProject] was given; nil (a
// temporary file) otherwise.
func (o *Orchestrator) saver(name string) func(string) (string, error) {
	if o.project == "" {
		return nil
	}
	return func(output string) (string, error) {
		dir := filepath.Join(o.project, filepath.FromSlash(outputDir))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		path, err := envs.SaveIn(dir, name+"-*.txt", output)
		if err != nil {
			return "", err
		}
		return outputDir + "/" + filepath.Base(path), nil
	}
}
