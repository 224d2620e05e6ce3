package editor

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/unfold-dev/unfold/rootfs"
	"golang.org/x/sys/unix"
)

// walkFast walks the project through directory handles when the editor
// runs on a [rootfs.FS]: each directory is opened relative to its parent's
// handle and listed once (getdents64, whose entries carry their type, so
// no stat per entry), and each file is read with one open relative to its
// directory's handle, one fstat and, for files under the buffer's size, one
// read. Every open is of a single name with O_NOFOLLOW, so no symbolic link
// is followed and nothing outside the root is reached; a link to a file is
// read through the confined root instead. The order and the results are
// those of [Editor.walkFs]. Without a rootfs.FS it returns errNoFastWalk.
func (e *Editor) walkFast(ctx context.Context, s *searcher, ig *ignorer) error {
	rfs, ok := e.fs.(*rootfs.FS)
	if !ok {
		return errNoFastWalk
	}
	d, err := rfs.Root().Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	w := &fastWalk{e: e, ctx: ctx, s: s, ig: ig, dents: make([]byte, 32<<10)}
	var werr error
	if err := rc.Control(func(fd uintptr) { werr = w.dir(int(fd), ".", 0) }); err != nil {
		return err
	}
	return werr
}

// fastWalk is one walk by directory handles.
type fastWalk struct {
	e     *Editor
	ctx   context.Context
	s     *searcher
	ig    *ignorer
	dents []byte // getdents64 buffer
	buf   []byte // file buffer, reused
}

// dirent is a directory entry: its name and its type (unix.DT_*).
type dirent struct {
	name string
	typ  uint8
}

// dir walks the directory open as fd, at the slash path p.
func (w *fastWalk) dir(fd int, p string, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := w.list(fd)
	if err != nil {
		if p == "." {
			return err
		}
		w.s.unreadableDirs++
		return nil
	}
	if depth > 0 {
		for _, en := range entries {
			if en.name == ".gitignore" && en.typ == unix.DT_REG {
				if data, err := w.readAt(fd, en.name, maxIgnoreFile); err == nil {
					defer w.ig.pop(w.ig.push(p, data))
				}
				break
			}
		}
	}
	sortEntries(entries, func(en dirent) (string, bool) { return en.name, en.typ == unix.DT_DIR })
	for _, en := range entries {
		child := en.name
		if p != "." {
			child = p + "/" + en.name
		}
		typ := en.typ
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, en.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue
			}
			typ = direntType(st.Mode)
		}
		if typ == unix.DT_DIR {
			if err := w.subdir(fd, en.name, child, depth); err != nil {
				return err
			}
			continue
		}
		if !w.s.glob.match(child) {
			continue
		}
		if w.ig.ignored(child, false) {
			w.s.leftOut(child)
			continue
		}
		if typ == unix.DT_LNK {
			// A link counts when it leads to a regular file inside the root.
			if fi, err := w.e.fs.Stat(child); err != nil || !fi.Mode().IsRegular() {
				continue
			}
		}
		if !w.s.take() {
			return errStopWalk
		}
		var raw []byte
		switch typ {
		case unix.DT_REG:
			raw, err = w.readAt(fd, en.name, w.s.limit)
		case unix.DT_LNK:
			raw, err = readRaw(w.e.fs, child, w.s.limit)
		default:
			err = &fileError{problem: problemSpecial, path: child}
		}
		if err != nil {
			w.s.failed(err)
			continue
		}
		w.s.scan(child, raw)
	}
	return nil
}

// subdir walks the directory name inside the directory open as fd, at the
// slash path child, unless the glob does not reach it or it is ignored.
func (w *fastWalk) subdir(fd int, name, child string, depth int) error {
	enter, named := w.s.glob.enter(child)
	if !enter {
		return nil
	}
	if !named && w.ig.ignored(child, true) {
		w.s.leftOut(child)
		return nil
	}
	if depth+1 >= maxSearchDepth {
		w.s.tooDeep++
		return nil
	}
	cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		w.s.unreadableDirs++
		return nil
	}
	defer unix.Close(cfd)
	return w.dir(cfd, child, depth+1)
}

// list reads the entries of the directory open as fd, without "." and
// "..".
func (w *fastWalk) list(fd int) ([]dirent, error) {
	var entries []dirent
	for {
		n, err := unix.Getdents(fd, w.dents)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return entries, nil
		}
		for b := w.dents[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if s := string(name); s != "." && s != ".." {
				entries = append(entries, dirent{name: s, typ: typ})
			}
			b = b[reclen:]
		}
	}
}

// readAt reads the regular file name in the directory open as dirfd,
// refusing anything else and files over limit. The bytes are valid until
// the next call.
func (w *fastWalk) readAt(dirfd int, name string, limit int64) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &fileError{path: name, err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fileError{path: name, err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &fileError{problem: problemSpecial, path: name}
	}
	if st.Size > limit {
		return nil, &fileError{problem: problemTooLarge, path: name, limit: limit}
	}
	want := int(st.Size) + 1 // one more byte tells a file that grew
	if cap(w.buf) < want {
		w.buf = make([]byte, max(want, 64<<10))
	}
	buf := w.buf[:cap(w.buf)]
	n := 0
	for {
		if n == len(buf) {
			if int64(n) > limit {
				return nil, &fileError{problem: problemTooLarge, path: name, limit: limit}
			}
			buf = append(buf, make([]byte, len(buf))...)
			w.buf = buf
		}
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fileError{path: name, err: err}
		}
		n += m
		if m == 0 || n < want {
			break
		}
	}
	if int64(n) > limit {
		return nil, &fileError{problem: problemTooLarge, path: name, limit: limit}
	}
	return buf[:n], nil
}

// direntType returns the unix.DT_* type of a stat mode.
func direntType(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_FIFO // any special file
}
