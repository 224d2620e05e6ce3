//go:build !linux

package skills

// readDir lists the directory name with fs.ReadDir.
func (d diskFS) readDir(name string, _ *[]byte) ([]dirEntry, error) {
	return readDirFS(d.dirFS, name)
}
