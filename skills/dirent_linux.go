package skills

import (
	"encoding/binary"
	"io/fs"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// direntBufSize is the size of the buffer directories are read into.
const direntBufSize = 8 << 10

// readDir lists the directory name with system calls alone, reading into
// *buf (grown to direntBufSize), and returns its entries in name order.
// Entries whose type the filesystem does not report are looked up.
func (d diskFS) readDir(name string, buf *[]byte) ([]dirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := openRetry(d.prefix+name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	if cap(*buf) < direntBufSize {
		*buf = make([]byte, direntBufSize)
	}
	b := (*buf)[:direntBufSize]
	var entries []dirEntry
	for {
		n, err := unix.Getdents(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: name, Err: err}
		}
		if n <= 0 {
			break
		}
		if entries, err = appendDirents(entries, fd, b[:n]); err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
	}
	slices.SortFunc(entries, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return entries, nil
}

// direntModes are the types of fs.FileMode for the types a directory read
// reports; DT_UNKNOWN is not among them.
var direntModes = map[byte]fs.FileMode{
	unix.DT_REG:  0,
	unix.DT_DIR:  fs.ModeDir,
	unix.DT_LNK:  fs.ModeSymlink,
	unix.DT_FIFO: fs.ModeNamedPipe,
	unix.DT_SOCK: fs.ModeSocket,
	unix.DT_CHR:  fs.ModeDevice | fs.ModeCharDevice,
	unix.DT_BLK:  fs.ModeDevice,
}

// statModes are the same types for the file types stat reports.
var statModes = map[uint32]fs.FileMode{
	unix.S_IFREG:  0,
	unix.S_IFDIR:  fs.ModeDir,
	unix.S_IFLNK:  fs.ModeSymlink,
	unix.S_IFIFO:  fs.ModeNamedPipe,
	unix.S_IFSOCK: fs.ModeSocket,
	unix.S_IFCHR:  fs.ModeDevice | fs.ModeCharDevice,
	unix.S_IFBLK:  fs.ModeDevice,
}

// appendDirents appends the entries of a directory read (linux_dirent64
// records) to entries, leaving out "." and "..". fd is the directory, to
// look up the type of an entry whose type is unknown; an entry gone since
// the read is left out, and a lookup that fails otherwise is the error,
// as os.ReadDir has it.
func appendDirents(entries []dirEntry, fd int, b []byte) ([]dirEntry, error) {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		ino := binary.NativeEndian.Uint64(rec[0:8])
		nameBytes := rec[19:]
		if i := slices.Index(nameBytes, 0); i >= 0 {
			nameBytes = nameBytes[:i]
		}
		if ino == 0 || string(nameBytes) == "." || string(nameBytes) == ".." {
			continue
		}
		name := string(nameBytes)
		mode, known := direntModes[rec[18]]
		if !known {
			var st unix.Stat_t
			switch err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
			case err == unix.ENOENT:
				continue // gone since the read
			case err != nil:
				return entries, err
			}
			mode = statModes[st.Mode&unix.S_IFMT]
		}
		entries = append(entries, dirEntry{name, mode})
	}
	return entries, nil
}
