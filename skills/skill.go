package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// FileName is the file that makes a directory a skill.
const FileName = "SKILL.md"

// resources are the folders the format names for a skill's files; they
// are listed first, in this order (see [Skill.Files]).
var resources = []string{"scripts", "references", "assets"}

// Limits on what is read.
const (
	// MaxSkillBytes bounds a SKILL.md read when its skill is opened.
	MaxSkillBytes = 1 << 20
	// MaxFileBytes bounds a file read whole ([Skill.ReadFile]).
	MaxFileBytes = 16 << 20
	// MaxFiles bounds the files listed for one skill; the rest are counted
	// in [Skill.Omitted].
	MaxFiles = 256
	// MaxWalk bounds the directory entries read to list one skill's files
	// (a node_modules inside a skill): past it no folder is read further,
	// and [Skill.Uncounted] says that more files may be past MaxFiles than
	// [Skill.Omitted] counted.
	MaxWalk = 16384
)

// Skill is one skill: the fields of its front matter and where it is.
// Its instructions are not held: they are read when asked for
// ([Skill.Instructions]), which is when its section is shown in full. Its
// files are listed when first asked for ([Skill.Files]), which is when its
// section opens, and read when their sections show them.
type Skill struct {
	Name          string
	Description   string
	License       string            // empty when not given
	Compatibility string            // empty when not given
	Metadata      map[string]string // nil when not given
	AllowedTools  []string          // nil when not given
	// Dir is the skill's directory on disk, absolute, so that relative
	// paths in its instructions can be resolved and its scripts run from
	// there; empty when its folder is not on disk (see [Folder]).
	Dir string

	fsys fs.FS
	root string // the skill's directory in fsys
	file string // SKILL.md as problems name it
	// disk is the skill's directory on disk when fsys is a folder on disk
	// ([Load]); its files are then read through an [os.Root] on it, so
	// that no path, symbolic links included, leads out of it.
	disk string

	list      sync.Once // lists files, omitted and outside, when first asked for
	files     []string
	omitted   int
	walked    int      // directory entries read to list the files
	uncounted bool     // the listing stopped at MaxWalk entries
	outside   []string // links leading out of the directory, left out
	dangling  []danglingLink
}

// File is what a skill's file is, from its start: what its section shows
// until it is opened.
type File struct {
	Path string // as [Skill.Files] gives it
	Size int64
	// First is a markdown file's first heading, or else the file's first
	// line that is neither blank nor a "#!" line, cut to a hundred
	// characters; empty for a binary file. Characters that do not print
	// (a carriage return, ESC, U+2028) are written as Go escapes them
	// (`\r`, `\x1b`, `\u2028`), as in a file's name: the line is shown in
	// the prompt before the file is opened.
	First string
	// Binary reports a file whose first bytes are not UTF-8 text or hold a
	// NUL byte.
	Binary bool
}

// Instructions reads the skill's SKILL.md now and returns what follows its
// front matter, trimmed: the instructions the agent follows once it uses
// the skill.
func (k *Skill) Instructions() (string, error) {
	data, err := k.readAll(FileName, MaxSkillBytes)
	if err != nil {
		return "", fmt.Errorf("skills: %s: %w", k.Name, err)
	}
	return splitBody(data), nil
}

// Files returns the regular files in the skill's directory but its
// SKILL.md, at any depth (hidden ones, and those in hidden folders, left
// out), each as a slash-separated path relative to the skill's directory
// ("forms.md", "scripts/extract.py"): as the format has it, the
// instructions may point to any file of the skill. They come in this
// order: the files at the top of the directory, then those under
// scripts/, references/ and assets/, then under the other folders, in
// path order within each folder, at most MaxFiles. A top-level folder
// that is a symbolic link comes after the others, and is not listed when
// it leads to a folder listed already (the skill's own directory, say):
// each file is listed once. The directory is read
// when Files is first called, by any method, and the list is kept; none
// of the files is opened. A folder that cannot be read has no files.
func (k *Skill) Files() []string {
	k.listFiles()
	return slices.Clone(k.files)
}

// Omitted returns the number of files past MaxFiles, which [Skill.Files]
// leaves out.
func (k *Skill) Omitted() int {
	k.listFiles()
	return k.omitted
}

// Uncounted reports whether listing the skill's files stopped after
// [MaxWalk] directory entries, folders left unread: [Skill.Omitted] is
// then a lower bound.
func (k *Skill) Uncounted() bool {
	k.listFiles()
	return k.uncounted
}

// LinksOutside returns the paths of the skill's files and top-level
// folders that are symbolic links leading outside the skill's directory
// on disk, in the order [Skill.Files] would list
// them, at most MaxFiles. [Skill.Files] leaves them out and nothing reads
// them: a skill cannot show a file it does not hold (a cloned skill's
// link to ~/.ssh, say). Links inside the directory are files like others.
// Only a skill loaded from disk ([Load]) has any.
func (k *Skill) LinksOutside() []string {
	k.listFiles()
	return slices.Clone(k.outside)
}

// readable reports whether p names a file of the skill that may be read:
// a listed one, or one past [MaxFiles] that would be, at a clean
// slash-separated path with no hidden part, no deeper than listing goes,
// and not SKILL.md (read as the instructions). Opening it still goes
// through the skill's directory (see open), so p cannot leave it, nor
// lead to SKILL.md through a link.
func (k *Skill) readable(p string) bool {
	k.listFiles()
	if slices.Contains(k.files, p) {
		return true
	}
	if !fs.ValidPath(p) || p == "." || p == FileName || strings.Count(p, "/") > maxDepth+1 {
		return false
	}
	for part := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// Inspect reads the start of the file at p (see [Skill.ReadFile]): its
// size, its first heading or line, and whether it is binary.
func (k *Skill) Inspect(p string) (File, error) {
	if !k.readable(p) {
		return File{}, k.notListed(p)
	}
	head, size, err := k.readHead(p, headBytes)
	if err != nil {
		return File{}, err
	}
	file := File{Path: p, Size: size}
	file.First, file.Binary = firstLine(p, head, size > int64(len(head)))
	return file, nil
}

func (k *Skill) notListed(p string) error {
	return fmt.Errorf("skills: %s: %s: %w: not one of the skill's files (those in its directory but %s and hidden ones)", k.Name, p, fs.ErrNotExist, FileName)
}

// ReadFile reads the file at p whole, up to MaxFileBytes: one of
// [Skill.Files], or any other regular file of the skill's directory past
// [MaxFiles] (not SKILL.md under any path, nor a hidden one). On disk files are read
// through an [os.Root] on the skill's directory, so p cannot leave it,
// even when a file listed is replaced by a link leading out.
func (k *Skill) ReadFile(p string) ([]byte, error) {
	if !k.readable(p) {
		return nil, k.notListed(p)
	}
	data, err := k.readAll(p, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("skills: %s: %w", k.Name, err)
	}
	return data, nil
}

// readHead reads the start of the listed file at p, up to limit bytes, and
// returns them with the file's size.
func (k *Skill) readHead(p string, limit int64) (head []byte, size int64, err error) {
	f, err := k.open(p)
	if err != nil {
		return nil, 0, fmt.Errorf("skills: %s: %w", k.Name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("skills: %s: %w", k.Name, err)
	}
	head, err = io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, 0, fmt.Errorf("skills: %s: read %s: %w", k.Name, p, err)
	}
	return head, max(fi.Size(), int64(len(head))), nil
}

// errTooBig is wrapped by reads over their limit.
var errTooBig = errors.New("file too large")

// errOutside is wrapped by opening a file of a skill on disk that leads
// outside its directory.
var errOutside = errors.New("leads outside the skill's directory (through a symbolic link), so it is not read: copy the file into the skill or remove the link")

// open opens the regular file at p, a slash-separated path in the
// skill's directory: on disk through an [os.Root] on the directory, so
// that a path leading out of it, through ".." or a symbolic link, fails
// with errOutside. A file that is not regular (a named pipe, which would
// stop the read until something writes to it) is refused.
func (k *Skill) open(p string) (fs.File, error) {
	name := path.Join(k.root, p) // as errors name it
	if k.disk == "" {
		return openRegular(k.fsys, name)
	}
	f, err := openInside(k.disk, p, name)
	if err != nil {
		return nil, err
	}
	if p != FileName {
		// A link to SKILL.md (self/SKILL.md, when self leads to the
		// skill's directory) is not one of its files.
		fi, err := f.Stat()
		if err == nil {
			if skill, serr := os.Stat(filepath.Join(k.disk, FileName)); serr == nil && os.SameFile(fi, skill) {
				err = fmt.Errorf("%s %w", name, errSkillFile)
			}
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// errSkillFile is wrapped by opening a path of a skill on disk that is
// its SKILL.md under another name, through a symbolic link.
var errSkillFile = errors.New("is the skill's " + FileName + " (through a symbolic link): its instructions are shown in the skill's section, not as one of its files")

// openInside opens p, a regular file at a slash-separated path in the
// directory dir on disk, through an [os.Root] on dir; errors name it
// name. It looks at the file before opening it, so that a device is never
// opened, and after, without waiting (openFlags), so that what was
// opened is what was looked at.
func openInside(dir, p, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close() // the file stays open
	fi, err := root.Stat(p)
	if isEscape(err) {
		rel, ok := inside(dir, p)
		if !ok {
			return nil, fmt.Errorf("%s %w", name, errOutside)
		}
		p = rel
		fi, err = root.Stat(p)
	}
	if err == nil {
		err = regular(name, fi)
	}
	var f *os.File
	if err == nil {
		f, err = root.OpenFile(p, os.O_RDONLY|openFlags, 0)
	}
	if err == nil {
		if fi, err = f.Stat(); err == nil {
			err = regular(name, fi)
		}
		if err != nil {
			f.Close()
		}
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: pe.Err} // as os.DirFS has it
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// inside returns the path in dir, with no link on it, that p leads to
// when p leads through a link the root refuses though it stays inside
// (one with an absolute target, which an [os.Root] never follows). The
// path found is opened through the root again, so a link changed
// meanwhile still cannot lead out.
func inside(dir, p string) (string, bool) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	target, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(real, target)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// isEscape reports whether err is an [os.Root] refusing a path that leads
// outside it. The os package does not export that error; its text is
// stable.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// readAll reads the file at p in the skill's directory, failing past
// limit bytes.
func (k *Skill) readAll(p string, limit int64) ([]byte, error) {
	f, err := k.open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	name := path.Join(k.root, p)
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w: over the limit of %d MiB", name, errTooBig, limit>>20)
	}
	return data, nil
}
