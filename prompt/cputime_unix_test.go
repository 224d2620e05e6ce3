//go:build unix

package prompt_test

import (
	"syscall"
	"time"
)

// processTime is the processor time the test process has used, all threads
// (the garbage collector's too). On a shared machine it moves less with
// load than the wall clock does.
func processTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
