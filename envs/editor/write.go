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

// errNoTemp stops a write by rename that could not make its temporary
// file: the directory is not writable, though the file may be.
var errNoTemp = errors.New("the directory does not let a file be made in it")

// errAttrsNotKept stops a write by rename that could not give the new
// file the old one's extended attributes (its ACL, labels, tags).
var errAttrsNotKept = errors.New("the extended attributes cannot be kept by a rename")

// errNotReplaced stops a write by rename whose rename the system refused,
// though the file may be written: it is a mount point, for one.
var errNotReplaced = errors.New("the file cannot be replaced by a rename")

// maxTempBase is how many bytes of a file's name its temporary file's
// name repeats, so that it stays within the 255 bytes a name may have.
const maxTempBase = 200

// errChanged refuses a write to a file that another program wrote to
// since the editor read it: writing would throw those bytes away.
var errChanged = errors.New("the file changed while the new content was being written (another program wrote to it)")

// replaceContent writes data as the whole content of the file f, open for
// reading and writing at target, which fi describes and which held old.
// It keeps the file's owner, mode, extended attributes (ACLs included)
// and hard links: a file with one link whose owner and attributes a new
// file can have, in a directory a file can be made in, is replaced by a
// temporary file renamed over it (a failure leaves it as it was); any
// other, and one the system does not let a rename replace (a mount
// point), is written in place, and a failure there writes the old bytes
// back. A filesystem that reports no owner or links (an
// in-memory one) is always written by rename. Right before the rename or
// the write in place, the file is checked against fi: when another
// program changed it meanwhile, nothing is written and the error wraps
// errChanged. left, when not "", says that a temporary file could not be
// removed and where it is, whether or not the write went through.
func replaceContent(fsys afero.Fs, target string, f afero.File, fi fs.FileInfo, old, data []byte) (left string, err error) {
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st != nil && st.Nlink > 1 {
		return "", writeInPlace(f, fi, old, data)
	}
	err = writeRenamed(fsys, target, f, fi, st, data, &left)
	if errors.Is(err, errOwnerNotKept) || errors.Is(err, errNoTemp) ||
		errors.Is(err, errAttrsNotKept) || errors.Is(err, errNotReplaced) {
		return left, writeInPlace(f, fi, old, data)
	}
	return left, err
}

// leftNote tells of the temporary file tmp, which could not be removed
// (rerr says why), and whether it was emptied.
func leftNote(tmp string, rerr error, emptied bool) string {
	what := "it still holds the new content"
	if emptied {
		what = "it was emptied"
	}
	return fmt.Sprintf("The editor's temporary file %s could not be removed (%v); %s. Remove it once the directory allows it", showPath(tmp), hideTemp(rerr), what)
}

// unchanged returns errChanged when the open file f no longer has the
// size, modification time and (where the system reports it) change time
// fi gave when it was read.
func unchanged(f afero.File, fi fs.FileInfo) error {
	now, err := f.Stat()
	if err != nil {
		return err
	}
	if now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		return errChanged
	}
	if changedStatus(fi, now) {
		return errChanged
	}
	return nil
}

// writeRenamed writes data to a temporary file beside target, gives it
// target's mode, extended attributes (and owner, when st is not nil),
// checks that target is still the file st describes, unchanged since
// orig, open on it, was read (see unchanged), and renames it over target.
// On any failure the temporary file is removed (or, when the directory
// does not allow that, emptied and named in *left) and target is left as
// it was. A temporary file the directory does not allow, or whose name would
// be too long, fails with errNoTemp; attributes that cannot be copied
// with errAttrsNotKept; a rename the system refuses for target (a mount
// point) with errNotReplaced.
func writeRenamed(fsys afero.Fs, target string, orig afero.File, fi fs.FileInfo, st *syscall.Stat_t, data []byte, left *string) (err error) {
	defer func() { err = hideTemp(err) }()
	var attrs []xattr
	ofd, hasFd := fdOf(orig)
	if hasFd {
		if attrs, err = readAttrs(ofd); err != nil {
			return errAttrsNotKept
		}
	}
	tmp := tempName(target)
	mode := fi.Mode()
	perm := mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm&fs.ModePerm)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENAMETOOLONG) {
		return errNoTemp
	}
	if err != nil {
		return fmt.Errorf("cannot make a file beside it: %w", hideTemp(err))
	}
	// discard removes the temporary file; where the directory does not
	// allow that (it is append-only), it empties it, so that no copy of
	// the content stays, and says in left that it is there.
	discard := func() {
		rerr := fsys.Remove(tmp)
		if rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
			return
		}
		emptied := false
		if t, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0); err == nil {
			emptied = t.Close() == nil
		}
		*left = leftNote(tmp, rerr, emptied)
	}
	fail := func(err error) error {
		_ = f.Close()
		discard()
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
	// Chown clears set-id bits and capabilities: the mode and the
	// attributes come after it.
	if err := fsys.Chmod(tmp, perm); err != nil {
		return fail(err)
	}
	if tfd, ok := fdOf(f); ok && hasFd {
		if err := copyAttrs(tfd, attrs); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		discard()
		return err
	}
	if st != nil {
		if err := sameFile(fsys, target, st); err != nil {
			discard()
			return err
		}
	}
	if err := unchanged(orig, fi); err != nil {
		discard()
		return err
	}
	if err := fsys.Rename(tmp, target); err != nil {
		discard()
		if replaceRefused(err) {
			return errNotReplaced
		}
		return err
	}
	return nil
}

// tempName returns a new name for a temporary file beside target: a dot,
// target's name cut to maxTempBase bytes on a character's boundary (a
// filesystem may refuse a name that is not UTF-8), ".unfold-", 12 random
// hex digits and ".tmp".
func tempName(target string) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	base := path.Base(target)
	if n := maxTempBase; len(base) > n {
		for n > 0 && base[n]&0xC0 == 0x80 {
			n--
		}
		base = base[:n]
	}
	return path.Join(path.Dir(target), "."+base+".unfold-"+hex.EncodeToString(rnd[:])+".tmp")
}

// hideTemp drops the name of a temporary file from err, an error of an
// operation on it: that file is the editor's business, and the message
// says what failed. Other errors are returned as they are.
func hideTemp(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Path, ".unfold-") {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
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
		return fmt.Errorf("%s was replaced by another file while the edit was made", showPath(target))
	}
	return nil
}

// writeInPlace overwrites f with data and cuts it to data's length, once
// f is checked unchanged since fi described it. If that fails, it writes
// old back, which needs no more room than the file had, and returns the
// first error.
func writeInPlace(f afero.File, fi fs.FileInfo, old, data []byte) error {
	if err := unchanged(f, fi); err != nil {
		return err
	}
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
	p, err := followLinks(fsys, name)
	if err == nil && p == "." {
		return "", fmt.Errorf("%s is the project root itself; name a file inside it", showPath(name))
	}
	return p, err
}

// followLinks is realPath that lets name lead to the root itself, ".".
func followLinks(fsys afero.Fs, name string) (string, error) {
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
			return "", fmt.Errorf("%s: too many levels of symbolic links", showPath(name))
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
		return ".", nil
	}
	return path.Join(done...), nil
}
