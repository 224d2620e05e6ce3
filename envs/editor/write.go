package editor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/afero"
)

// maxLinkHops bounds how many symbolic links a write follows.
const maxLinkHops = 40

// errOwnerNotKept stops a write by rename that could not give the new file
// the old one's owner.
var errOwnerNotKept = errors.New("the owner cannot be kept by a rename")

// replaceContent writes data as the whole content of the file f, open for
// reading and writing at target, which fi describes and which held old.
// It keeps the file's owner, mode and hard links: a file with one link
// whose owner a new file can have is replaced by a temporary file renamed
// over it (a failure leaves it as it was); any other is written in place,
// and a failure there writes the old bytes back. A filesystem that reports
// no owner or links (an in-memory one) is always written by rename.
func replaceContent(fsys afero.Fs, target string, f afero.File, fi fs.FileInfo, old, data []byte) error {
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st != nil && st.Nlink > 1 {
		return writeInPlace(f, old, data)
	}
	err := writeRenamed(fsys, target, fi, st, data)
	if errors.Is(err, errOwnerNotKept) {
		return writeInPlace(f, old, data)
	}
	return err
}

// writeRenamed writes data to a temporary file beside target, gives it
// target's mode (and owner, when st is not nil), checks that target is
// still the file st describes, and renames it over target. On any failure
// the temporary file is removed and target is left as it was.
func writeRenamed(fsys afero.Fs, target string, fi fs.FileInfo, st *syscall.Stat_t, data []byte) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(target), "."+path.Base(target)+".unfold-"+hex.EncodeToString(rnd[:])+".tmp")
	mode := fi.Mode()
	perm := mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm&fs.ModePerm)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		_ = f.Close()
		_ = fsys.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if st != nil {
		tfi, err := f.Stat()
		if err != nil {
			return fail(err)
		}
		if tst, ok := tfi.Sys().(*syscall.Stat_t); ok && (tst.Uid != st.Uid || tst.Gid != st.Gid) {
			if err := fsys.Chown(tmp, int(st.Uid), int(st.Gid)); err != nil {
				return fail(errOwnerNotKept)
			}
		}
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := fsys.Chmod(tmp, perm); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if st != nil {
		if err := sameFile(fsys, target, st); err != nil {
			_ = fsys.Remove(tmp)
			return err
		}
	}
	if err := fsys.Rename(tmp, target); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	return nil
}

// sameFile checks that target is still the file st describes, not one put
// in its place since it was read.
func sameFile(fsys afero.Fs, target string, st *syscall.Stat_t) error {
	var fi fs.FileInfo
	var err error
	if ls, ok := fsys.(afero.Lstater); ok {
		fi, _, err = ls.LstatIfPossible(target)
	} else {
		fi, err = fsys.Stat(target)
	}
	if err != nil {
		return err
	}
	if now, ok := fi.Sys().(*syscall.Stat_t); ok && (now.Dev != st.Dev || now.Ino != st.Ino) {
		return fmt.Errorf("%s was replaced by another file while the edit was made", target)
	}
	return nil
}

// writeInPlace overwrites f with data and cuts it to data's length. If
// that fails, it writes old back, which needs no more room than the file
// had, and returns the first error.
func writeInPlace(f afero.File, old, data []byte) error {
	restore := func(cause error) error {
		if _, err := f.WriteAt(old, 0); err == nil {
			_ = f.Truncate(int64(len(old)))
			_ = f.Sync()
		}
		return cause
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return restore(err)
	}
	if len(data) < len(old) {
		if err := f.Truncate(int64(len(data))); err != nil {
			return restore(err)
		}
	}
	if err := f.Sync(); err != nil {
		return restore(err)
	}
	return nil
}

// realPath returns the path, relative to the root, of the file name
// leads to once every symbolic link on the way is followed, in its
// directories and at its end, when fsys can report links; otherwise name.
// A link that leads outside the root, by an absolute target or by "..",
// is refused.
func realPath(fsys afero.Fs, name string) (string, error) {
	ls, ok1 := fsys.(afero.Lstater)
	lr, ok2 := fsys.(afero.LinkReader)
	if !ok1 || !ok2 {
		return name, nil
	}
	todo := strings.Split(name, "/")
	var done []string
	for hops := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", &fileError{problem: problemEscapes, path: name}
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(path.Join(done...), part)
		fi, _, err := ls.LstatIfPossible(cur)
		if err != nil {
			return "", classify(name, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, part)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%s: too many levels of symbolic links", name)
		}
		dest, err := lr.ReadlinkIfPossible(cur)
		if err != nil {
			return "", classify(name, err)
		}
		dest = filepath.ToSlash(dest)
		if path.IsAbs(dest) || filepath.IsAbs(dest) {
			return "", &fileError{problem: problemEscapes, path: name}
		}
		todo = append(strings.Split(dest, "/"), todo...)
	}
	if len(done) == 0 {
		return "", fmt.Errorf("%s is the project root itself; name a file inside it", name)
	}
	return path.Join(done...), nil
}
