package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// projectDir returns the absolute path of the --project directory, or an
// error that says what is wrong with it, the same for every command: a
// typo must not start a session, or render without the project's skills.
func projectDir(project string) (string, error) {
	dir, err := filepath.Abs(project)
	if err != nil {
		return "", fmt.Errorf("--project: %w", err)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("--project: directory %s does not exist; give a directory that exists", dir)
	case err != nil:
		return "", fmt.Errorf("--project: %w", err)
	case !fi.IsDir():
		return "", fmt.Errorf("--project: %s is not a directory; give the project's directory", dir)
	}
	return dir, nil
}
