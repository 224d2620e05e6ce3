package editor

import (
	"io/fs"
	"syscall"
)

// changedStatus reports whether the file's change time moved from was to
// now (a write of the same size within the modification time's
// granularity moves it).
func changedStatus(was, now fs.FileInfo) bool {
	st, ok1 := was.Sys().(*syscall.Stat_t)
	nst, ok2 := now.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && nst.Ctim != st.Ctim
}

// errNoAttr is the error of an extended attribute that is not there.
const errNoAttr = syscall.ENODATA
