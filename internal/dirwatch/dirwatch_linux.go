//go:build linux

package dirwatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirMask is what is watched in the directory: its entries coming, going,
// being written or changing attributes, and the directory going away.
const dirMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// parentMask is what is watched in the parent: entries coming and going
// (the directory among them), and the parent going away.
const parentMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// gone is what a watched directory's own events say when it went away or
// its watch ended.
const gone = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_IGNORED | unix.IN_UNMOUNT

// Watcher follows one directory (see the package doc). It is not safe for
// concurrent use: callers serialize [Watcher.Changed] and [Watcher.Close].
type Watcher struct {
	dir   string            // the directory, cleaned
	base  string            // its name in its parent
	match func(string) bool // the entries that count; nil: all
	fd    int               // the inotify instance, non-blocking
	buf   []byte            // read buffer
	// parentWd and dirWd are the watch descriptors; dirWd is -1 while the
	// directory does not exist.
	parentWd, dirWd int32
	err             error // set once the watch is lost: every later call reports a change and it
	closed          bool
}

// New starts watching dir, which need not exist; its parent must. Only
// entries whose name match accepts count (nil: every entry); the
// directory itself coming or going always does.
func New(dir string, match func(name string) bool) (*Watcher, error) {
	dir = filepath.Clean(dir)
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("dirwatch: watch %s: %w", dir, err)
	}
	w := &Watcher{dir: dir, base: filepath.Base(dir), match: match, fd: fd, buf: make([]byte, 16<<10), dirWd: -1}
	wd, err := unix.InotifyAddWatch(fd, filepath.Dir(dir), parentMask)
	if err == nil {
		w.parentWd = int32(wd)
		err = w.arm()
	}
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("dirwatch: watch %s: %w", dir, err)
	}
	return w, nil
}

// arm watches the directory when it exists, and forgets the watch of the
// one it replaced.
func (w *Watcher) arm() error {
	wd, err := unix.InotifyAddWatch(w.fd, w.dir, dirMask)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		wd = -1
	case err != nil:
		return err
	}
	if old := w.dirWd; old >= 0 && old != int32(wd) {
		// A directory renamed away still sends events; an error means its
		// watch ended already.
		_, _ = unix.InotifyRmWatch(w.fd, uint32(old))
	}
	w.dirWd = int32(wd)
	return nil
}

// Changed reports whether the directory, or an entry of it that counts,
// changed since the last call (since New for the first), without waiting.
// A change made before the call (a write that returned) is always seen.
// It may report a change that left things as they were (a file written
// with the same bytes). An error means the watch is lost (the parent was
// removed or renamed, the instance failed): the call, and every later
// one, reports a change with it, and the caller should look for itself.
func (w *Watcher) Changed() (bool, error) {
	if w.closed {
		return true, errors.New("dirwatch: changed: the watcher is closed")
	}
	if w.err != nil {
		return true, w.err
	}
	changed := false
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil {
			w.err = fmt.Errorf("dirwatch: %s: read events: %w", w.dir, err)
			return true, w.err
		}
		if w.parse(w.buf[:n]) {
			changed = true
		}
		if w.err != nil {
			return true, w.err
		}
	}
	if changed {
		// The directory may have been made, or replaced, since it was last
		// watched.
		if err := w.arm(); err != nil {
			w.err = fmt.Errorf("dirwatch: %s: watch again: %w", w.dir, err)
			return true, w.err
		}
	}
	return changed, nil
}

// parse reads a buffer of events and reports whether one counts.
func (w *Watcher) parse(buf []byte) bool {
	changed := false
	for len(buf) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		mask := binary.NativeEndian.Uint32(buf[4:])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[12:]))
		if size > len(buf) {
			break // the kernel writes whole events; this cannot happen
		}
		name := string(bytes.TrimRight(buf[unix.SizeofInotifyEvent:size], "\x00"))
		buf = buf[size:]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			changed = true // events were dropped: anything may have happened
		case wd == w.parentWd && mask&gone != 0:
			w.err = fmt.Errorf("dirwatch: %s: the parent directory was removed or renamed", w.dir)
			return true
		case wd == w.parentWd:
			changed = changed || name == w.base
		case wd == w.dirWd && (mask&gone != 0 || name == ""):
			changed = true
		case wd == w.dirWd:
			changed = changed || w.match == nil || w.match(name)
		}
	}
	return changed
}

// Close stops watching. It is idempotent.
func (w *Watcher) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := unix.Close(w.fd); err != nil {
		return fmt.Errorf("dirwatch: close: %w", err)
	}
	return nil
}
