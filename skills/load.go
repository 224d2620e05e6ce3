package skills

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/internal/printable"
)

// ProjectDirs are the skills folders of a project, relative to it, in the
// order [Discover] returns them: Claude Code's, the cross-client
// convention's, and a plain skills/ folder.
var ProjectDirs = []string{".claude/skills", ".agents/skills", "skills"}

// MaxSkills bounds the directories read from one skills folder; the rest
// are left out with a [RuleFolderSize] problem.
const MaxSkills = 2000

// headBytes is how much of a file [Skill.Inspect] reads.
const headBytes = 512

// Discover returns the skills folders of project that exist (see
// [ProjectDirs]), in order. A folder that cannot be looked at is an error;
// one that does not exist is not.
func Discover(project string) ([]string, error) {
	var out []string
	for _, d := range ProjectDirs {
		dir := filepath.Join(project, filepath.FromSlash(d))
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("skills: discover: %w", err)
		case fi.IsDir():
			out = append(out, dir)
		}
	}
	return out, nil
}

// Folder is a skills folder: each skill in it is a directory NAME holding
// NAME/SKILL.md.
type Folder struct {
	FS fs.FS
	// Dir is where FS is on disk, absolute. It names the skills'
	// directories in their sections, so that relative paths in their
	// instructions work, and the files in problems. Empty when FS is not
	// on disk: problems then name files as paths in FS.
	Dir string
}

// Set is the skills found in one or more folders, and the problems of
// those left out. It is immutable.
type Set struct {
	skills   []*Skill // by name
	byName   map[string]*Skill
	problems []Problem // in folder order, then by file
}

// Load loads the skills folders at dirs, in order ([Folder] on disk). A
// folder that cannot be read is an error; a skill that breaks the format's
// rules is a [Problem], left out while the others load.
func Load(dirs ...string) (*Set, error) {
	folders := make([]Folder, len(dirs))
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("skills: load %s: %w", d, err)
		}
		folders[i] = Folder{FS: newDiskFS(abs), Dir: abs}
	}
	return LoadFolders(folders...)
}

// LoadFolders loads the skills of folders, in order. Only each skill's
// front matter and the start of its files are read: its instructions are
// read when its section is shown in full. When two folders have a skill
// of the same name, the first folder's is kept and the other is a
// [RuleUnique] problem. Skills are read in parallel.
func LoadFolders(folders ...Folder) (*Set, error) {
	s := &Set{byName: map[string]*Skill{}}
	for _, f := range folders {
		if f.FS == nil {
			return nil, fmt.Errorf("skills: load %s: no filesystem", f.Dir)
		}
		loaded, problems, err := loadFolder(f)
		if err != nil {
			return nil, err
		}
		s.problems = append(s.problems, problems...)
		for _, k := range loaded {
			if first, dup := s.byName[k.Name]; dup {
				s.problems = append(s.problems, Problem{File: k.file, Line: 0, Rule: RuleUnique,
					Message: fmt.Sprintf("a skill named %q was loaded from %s already; this one is left out", k.Name, first.file)})
				continue
			}
			s.byName[k.Name] = k
			s.skills = append(s.skills, k)
		}
	}
	slices.SortFunc(s.skills, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

// Skills returns the skills, by name.
func (s *Set) Skills() []*Skill { return slices.Clone(s.skills) }

// Len returns the number of skills.
func (s *Set) Len() int { return len(s.skills) }

// Skill returns the skill called name.
func (s *Set) Skill(name string) (*Skill, bool) {
	k, ok := s.byName[name]
	return k, ok
}

// Problems returns the problems of the skills left out.
func (s *Set) Problems() []Problem { return slices.Clone(s.problems) }

// loadFolder loads every skill directory of f, in parallel, and returns the
// skills and the problems in directory order.
func loadFolder(f Folder) ([]*Skill, []Problem, error) {
	entries, err := fs.ReadDir(f.FS, ".")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the folder's, named below
		}
		return nil, nil, fmt.Errorf("skills: load %s: %w", f.label("."), err)
	}
	var dirs []string
	var problems []Problem
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		if !e.IsDir() {
			if e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			if fi, err := fs.Stat(f.FS, name); err != nil || !fi.IsDir() {
				continue
			}
		}
		if len(dirs) == MaxSkills {
			problems = append(problems, Problem{File: f.label("."), Rule: RuleFolderSize,
				Message: fmt.Sprintf("more than %d directories: %s and the ones after it are left out; split the folder", MaxSkills, name)})
			break
		}
		dirs = append(dirs, name)
	}
	type result struct {
		skill    *Skill
		problems []Problem
	}
	results := make([]result, len(dirs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(dirs)) {
		wg.Go(func() {
			var buf buffers // the worker's
			for i := int(next.Add(1) - 1); i < len(dirs); i = int(next.Add(1) - 1) {
				k, p := loadSkill(f, dirs[i], &buf)
				results[i] = result{k, p}
			}
		})
	}
	wg.Wait()
	var loaded []*Skill
	for _, r := range results {
		if len(r.problems) > 0 {
			problems = append(problems, r.problems...)
		} else if r.skill != nil {
			loaded = append(loaded, r.skill)
		}
	}
	return loaded, problems, nil
}

// label names a path of the folder in problems and errors.
func (f Folder) label(p string) string {
	if f.Dir == "" {
		return p
	}
	return filepath.Join(f.Dir, filepath.FromSlash(p))
}

// buffers are what loading one skill after another reuses.
type buffers struct {
	frontMatter []byte // see readFrontMatter
}

// loadSkill reads the skill in directory dir of f: nil and no problem when
// dir is no skill (it has no SKILL.md).
func loadSkill(f Folder, dir string, buf *buffers) (*Skill, []Problem) {
	name := dir + "/" + FileName // dir is one name
	file := f.label(name)
	r, err := openHead(f.FS, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, misnamed(f, dir)
	}
	if err != nil {
		return nil, []Problem{{File: file, Rule: RuleSkillFile, Message: fmt.Sprintf("cannot read %s: %v", FileName, err)}}
	}
	yml, err := readFrontMatter(r, &buf.frontMatter)
	r.Close()
	switch {
	case errors.Is(err, errNoFrontMatter), errors.Is(err, errTooLarge), errors.Is(err, errCROnly):
		return nil, []Problem{{File: file, Line: 1, Rule: RuleFrontMatter, Message: err.Error()}}
	case errors.Is(err, errUnclosed):
		return nil, []Problem{{File: file, Line: 1, Rule: RuleFrontMatter, Message: err.Error()}}
	case err != nil:
		return nil, []Problem{{File: file, Rule: RuleSkillFile, Message: fmt.Sprintf("cannot read %s: %v", FileName, err)}}
	}
	c := checker{file: file, offset: 1}
	fields := c.parseFields(yml, dir)
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	k := &Skill{
		Name: fields.Name, Description: fields.Description, License: fields.License,
		Compatibility: fields.Compatibility, Metadata: fields.Metadata, AllowedTools: fields.AllowedTools,
		fsys: f.FS, root: dir, file: file,
	}
	if f.Dir != "" {
		k.Dir = filepath.Join(f.Dir, dir)
	}
	if d, ok := f.FS.(diskFS); ok {
		k.disk = d.prefix + dir
	}
	return k, nil
}

// misnamed reports a skill file whose name differs from SKILL.md in case
// only: clients look for SKILL.md exactly. A directory with no such file
// is no skill, and no problem.
func misnamed(f Folder, dir string) []Problem {
	entries, err := fs.ReadDir(f.FS, dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if strings.EqualFold(e.Name(), FileName) && !e.IsDir() {
			return []Problem{{File: f.label(path.Join(dir, e.Name())), Rule: RuleSkillFile,
				Message: fmt.Sprintf("the skill file is named %s: name it %s exactly, as clients look for it", e.Name(), FileName)}}
		}
	}
	return nil
}

// listFiles lists the skill's files, once, reading directories only: the
// regular files at the top of its directory but SKILL.md, then those
// under its folders, shallowest first (breadth first: every folder's own
// files before those of its subfolders), the format's scripts/,
// references/ and assets/ first and the others in name order, and
// dependency and build folders (node_modules, __pycache__, venv, dist,
// build, target, vendor) after all the others, so that a large one does
// not fill the list before the files the instructions name. Top-level
// folders that are links come last, and one whose folder is listed
// already (the skill's own directory, or one of its folders) is not
// listed again, so that each file is listed once. On disk, a file or a
// top-level folder that is a link leading outside the skill's directory
// is left out, and noted in k.outside; a link to nothing, or back to
// itself, is left out, and noted in k.dangling; a link to SKILL.md is
// left out.
func (k *Skill) listFiles() {
	k.list.Do(func() {
		buf := direntBuffers.Get().(*[]byte) // see readDir
		defer direntBuffers.Put(buf)
		l := &lister{buf: buf}
		if k.disk != "" {
			r, err := os.OpenRoot(k.disk)
			if err != nil {
				return // the skill's directory cannot be read: no files
			}
			defer r.Close()
			l.root = r
		}
		entries, err := readDir(k.fsys, k.root, buf)
		if err != nil {
			return
		}
		k.walked += len(entries)
		var dirs, linked []string
		for _, e := range entries {
			if strings.HasPrefix(e.name, ".") || e.name == FileName {
				continue
			}
			mode := e.mode
			if mode&fs.ModeSymlink != 0 {
				fi, err := k.follow(l.root, e.name)
				if err != nil || l.isSkillFile(fi) {
					continue
				}
				if fi.IsDir() {
					linked = append(linked, e.name)
					continue
				}
				mode = fi.Mode()
			}
			switch {
			case mode.IsDir():
				dirs = append(dirs, e.name)
			case mode.IsRegular():
				k.add(e.name)
			}
		}
		slices.SortStableFunc(dirs, func(a, b string) int { return cmp.Compare(folderRank(a), folderRank(b)) })
		slices.SortStableFunc(linked, func(a, b string) int { return cmp.Compare(folderRank(a), folderRank(b)) })
		k.listDirs(l, dirs, linked)
	})
}

// lister is what listing one skill's files on disk keeps.
type lister struct {
	root *os.Root // the skill's directory on disk, to resolve links; nil when not on disk
	buf  *[]byte  // see readDir
	// seen holds the folders read, when a top-level folder is a link
	// (nil when none is): one that is read twice is a folder the link
	// leads to.
	seen map[fileID]bool
	// skill is SKILL.md, looked at when a link is first met.
	skill     fs.FileInfo
	skillRead bool
}

// isSkillFile reports whether fi, what a link leads to, is the skill's
// SKILL.md: its instructions, which are not one of its files.
func (l *lister) isSkillFile(fi fs.FileInfo) bool {
	if l.root == nil || !fi.Mode().IsRegular() {
		return false
	}
	if !l.skillRead {
		l.skillRead = true
		l.skill, _ = l.root.Stat(FileName)
	}
	return l.skill != nil && os.SameFile(fi, l.skill)
}

// visit reports whether the folder at p (p is "." for the skill's
// directory) is to be read: always, unless folders are tracked (l.seen)
// and this one was read already, under another path.
func (l *lister) visit(p string) bool {
	if l.seen == nil {
		return true
	}
	fi, err := l.root.Stat(p)
	if isEscape(err) {
		if rel, ok := inside(l.root.Name(), p); ok {
			fi, err = l.root.Stat(rel)
		}
	}
	if err != nil {
		return true // the read fails, or lists what it can
	}
	id, ok := idOf(fi)
	if !ok {
		return true
	}
	if l.seen[id] {
		return false
	}
	l.seen[id] = true
	return true
}

// folderRank orders a skill's folders: the format's scripts/, references/
// and assets/ first, in that order, then the others, then dependency and
// build folders.
func folderRank(name string) int {
	if i := slices.Index(resources, name); i >= 0 {
		return i
	}
	if dependencyFolder(name) {
		return len(resources) + 1
	}
	return len(resources)
}

// dependencyFolders are the names of folders that package managers and
// builds fill: listed after every other folder of a skill.
var dependencyFolders = []string{"node_modules", "__pycache__", "venv", "dist", "build", "target", "vendor", "site-packages", "bower_components"}

// dependencyFolder reports whether a folder named name holds dependencies
// or build output.
func dependencyFolder(name string) bool { return slices.Contains(dependencyFolders, name) }

// add lists the file at p, or counts it in k.omitted past MaxFiles.
func (k *Skill) add(p string) {
	if len(k.files) == MaxFiles {
		k.omitted++
		return
	}
	k.files = append(k.files, p)
}

// follow looks at what the link at p leads to: on disk (root is not nil)
// through root, noting p in k.outside when it leads out of it, and in
// k.dangling when it leads to nothing or back to itself (a loop of links,
// which the system gives up on: ELOOP).
func (k *Skill) follow(root *os.Root, p string) (fs.FileInfo, error) {
	if root == nil {
		return fs.Stat(k.fsys, k.root+"/"+p)
	}
	fi, err := root.Stat(p)
	if isEscape(err) {
		if rel, ok := inside(k.disk, p); ok {
			return root.Stat(rel)
		}
		if _, serr := os.Stat(filepath.Join(k.disk, filepath.FromSlash(p))); errors.Is(serr, fs.ErrNotExist) || errors.Is(serr, syscall.ELOOP) {
			k.noteDangling(p, errors.Is(serr, syscall.ELOOP))
		} else if len(k.outside) < MaxFiles {
			k.outside = append(k.outside, p)
		}
		return fi, err
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ELOOP) {
		k.noteDangling(p, errors.Is(err, syscall.ELOOP))
	}
	return fi, err
}

// noteDangling notes the link at p, which leads to nothing (or, with
// loop, back to itself), in k.dangling.
func (k *Skill) noteDangling(p string, loop bool) {
	if len(k.dangling) >= MaxFiles {
		return
	}
	target, err := os.Readlink(filepath.Join(k.disk, filepath.FromSlash(p)))
	if err != nil {
		return // not a link itself: a folder on its path is gone
	}
	k.dangling = append(k.dangling, danglingLink{path: p, target: target, loop: loop})
}

// danglingLink is a symbolic link of a skill that leads to nothing.
type danglingLink struct {
	path   string // relative to the skill's directory, slash-separated
	target string // as the link holds it
	loop   bool   // it leads back to itself, through itself or other links
}

// direntBuffers are the buffers listing skills' files reads directories
// into, kept from one listing to the next.
var direntBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxDepth bounds how deep listDir goes below a skill's top-level folder.
const maxDepth = 16

// listDirs lists the regular files under dirs, then under linked (the
// top-level folders that are links), paths relative to the skill's
// directory, breadth first: the files of every folder at one depth before
// those one deeper, in each folder in path order, and the folders under a
// dependency folder (see dependencyFolder) after all the others. Hidden
// files and folders are left out; a folder that is missing or cannot be
// read has nothing to list; links to folders below the top are not
// followed; past MaxWalk entries read, no folder is. When a top-level
// folder is a link, each folder is read once: one that a link leads to
// (the skill's own directory, say) is not read again. l.root is the
// skill's directory on disk (nil when it is not on disk): a link counts
// when it resolves to a regular file inside it, not SKILL.md.
func (k *Skill) listDirs(l *lister, dirs, linked []string) {
	type folder struct {
		path  string
		depth int
	}
	// The folders to read, in order: queues[1] holds dependency folders
	// and what is under them, read once queues[0] is done; queues[2] the
	// folders that are links, and what is under them.
	var queues [3][]folder
	for _, d := range dirs {
		q := 0
		if dependencyFolder(d) {
			q = 1
		}
		queues[q] = append(queues[q], folder{d, 0})
	}
	if len(linked) > 0 && l.root != nil {
		l.seen = map[fileID]bool{}
		l.visit(".")
		for _, d := range linked {
			queues[2] = append(queues[2], folder{d, 0})
		}
	}
	for q := range queues {
		for i := 0; i < len(queues[q]); i++ {
			if k.walked >= MaxWalk {
				k.uncounted = true
				return
			}
			dir := queues[q][i]
			queues[q][i] = folder{} // read: let its path go
			if !l.visit(dir.path) {
				continue
			}
			entries, err := readDir(k.fsys, k.root+"/"+dir.path, l.buf)
			if err != nil {
				continue
			}
			k.walked += len(entries)
			for _, e := range entries {
				if strings.HasPrefix(e.name, ".") {
					continue
				}
				p := dir.path + "/" + e.name
				switch t := e.mode; {
				case t.IsDir():
					if dir.depth < maxDepth {
						sq := q
						if q == 0 && dependencyFolder(e.name) {
							sq = 1
						}
						queues[sq] = append(queues[sq], folder{p, dir.depth + 1})
					}
					continue
				case t&fs.ModeSymlink != 0:
					// A link counts when it leads to a regular file.
					if fi, err := k.follow(l.root, p); err != nil || !fi.Mode().IsRegular() || l.isSkillFile(fi) {
						continue
					}
				case !t.IsRegular():
					continue
				}
				k.add(p)
			}
		}
	}
}

// firstLine returns a file's first heading (markdown) or first line, from
// its first bytes (more when the file goes on), or binary. Characters that
// do not print are escaped (see [File]).
func firstLine(name string, head []byte, more bool) (first string, binary bool) {
	if isBinary(head, more) {
		return "", true
	}
	markdown := strings.HasSuffix(strings.ToLower(name), ".md") || strings.HasSuffix(strings.ToLower(name), ".markdown")
	var line string
	for rest := string(head); rest != ""; {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#!") {
			continue
		}
		if markdown {
			if h := strings.TrimLeft(l, "#"); len(h) < len(l) && len(l)-len(h) <= 6 && (h == "" || h[0] == ' ') {
				return printable.String(cut(strings.TrimSpace(h), 100)), false
			}
		}
		if line == "" {
			line = l
			if !markdown {
				break
			}
		}
	}
	return printable.String(cut(line, 100)), false
}

// IsText reports whether a skill file's whole content is text, as its
// section reads it: UTF-8 without a NUL byte. The MCP server serves such a
// file as text, any other as a blob.
func IsText(data []byte) bool { return !isBinary(data, false) }

// isBinary reports whether a file's first bytes hold a NUL byte or are
// not UTF-8. When the file goes on (more), a character cut by the end of
// the bytes read is fine.
func isBinary(head []byte, more bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if more {
		for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	return !utf8.Valid(head)
}

// cut shortens s to at most n characters, at a space when there is one
// near the end, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	short := string(r)
	if i := strings.LastIndexByte(short, ' '); i > len(short)/2 {
		short = short[:i]
	}
	return strings.TrimRight(short, " ,.;:") + "…"
}
