//go:build unix

package skills

import "syscall"

// openFlags are added to O_RDONLY when [diskFS] opens a file.
const openFlags = syscall.O_NONBLOCK
