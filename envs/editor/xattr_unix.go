//go:build linux || darwin

package editor

import (
	"bytes"
	"errors"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"
)

// xattr is one extended attribute of a file: a user.* tag, a POSIX ACL
// (system.posix_acl_access), a security label or capability.
type xattr struct {
	name  string
	value []byte
}

// fdOf returns the descriptor of an open file that has one (an *os.File
// and the files of rootfs.FS); ok is false for an in-memory file.
func fdOf(f afero.File) (fd int, ok bool) {
	h, ok := f.(interface{ Fd() uintptr })
	if !ok {
		return -1, false
	}
	return int(h.Fd()), true
}

// readAttrs returns the extended attributes of the open file fd. A
// filesystem without them gives none.
func readAttrs(fd int) ([]xattr, error) {
	names, err := listAttrs(fd)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	attrs := make([]xattr, 0, len(names))
	for _, name := range names {
		v, err := getAttr(fd, name)
		if errors.Is(err, errNoAttr) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, xattr{name, v})
	}
	return attrs, nil
}

// listAttrs returns the names of fd's extended attributes.
func listAttrs(fd int) ([]string, error) {
	for {
		n, err := unix.Flistxattr(fd, nil)
		if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
			return nil, nil
		}
		if err != nil || n == 0 {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = unix.Flistxattr(fd, buf)
		if errors.Is(err, unix.ERANGE) {
			continue // the list grew since its size was asked
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, name := range bytes.Split(buf[:n], []byte{0}) {
			if len(name) > 0 {
				names = append(names, string(name))
			}
		}
		return names, nil
	}
}

// getAttr returns the value of fd's extended attribute name.
func getAttr(fd int, name string) ([]byte, error) {
	for {
		n, err := unix.Fgetxattr(fd, name, nil)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = unix.Fgetxattr(fd, name, buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}

// copyAttrs gives the open file fd exactly the extended attributes attrs:
// it removes those fd has that attrs lacks (a default ACL of the directory
// or a label given on creation) and sets the others, leaving alone those
// it already has with the same value. It fails with errAttrsNotKept when
// one cannot be set or removed (a security.* attribute, for a user who is
// not root; a filesystem without extended attributes).
func copyAttrs(fd int, attrs []xattr) error {
	have, err := readAttrs(fd)
	if err != nil {
		return errAttrsNotKept
	}
	want := make(map[string][]byte, len(attrs))
	for _, a := range attrs {
		want[a.name] = a.value
	}
	same := make(map[string]bool, len(have))
	for _, a := range have {
		v, ok := want[a.name]
		switch {
		case !ok:
			if unix.Fremovexattr(fd, a.name) != nil {
				return errAttrsNotKept
			}
		case bytes.Equal(v, a.value):
			same[a.name] = true
		}
	}
	for _, a := range attrs {
		if same[a.name] {
			continue
		}
		if unix.Fsetxattr(fd, a.name, a.value, 0) != nil {
			return errAttrsNotKept
		}
	}
	return nil
}

// replaceRefused reports whether a rename over a file failed because the
// file cannot be replaced, though it may be written: it is a mount point
// (EBUSY), on another filesystem than its directory (EXDEV), or the
// directory does not let it be replaced (EPERM).
func replaceRefused(err error) bool {
	return errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EPERM)
}
