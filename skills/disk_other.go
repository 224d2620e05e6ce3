//go:build !unix

package skills

import "io"

// openFlags are added to O_RDONLY when [diskFS] opens a file: none, and
// [diskFS] opens files as os.DirFS does.
const openFlags = 0

// openHead opens name to read its start.
func (d diskFS) openHead(name string) (io.ReadCloser, error) { return openRegular(d, name) }
