//go:build !unix

package skills

// openFlags are added to O_RDONLY when [diskFS] opens a file: none, and
// [diskFS] opens files as os.DirFS does.
const openFlags = 0
