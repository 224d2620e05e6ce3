package orchestrator

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// programPin is what the program of a spec file was made of when the spec
// files were fixed ([WithoutSpecReload]): the executable, and every file
// inside the project that the command line or the variables name, by
// content (or their absence). A program whose files differ is not started
// again: otherwise a model that may only write files could change what a
// program the user allowed runs, and have it run at the next start.
//
// The files a program reads as it runs (imports, configuration) are not
// known here; docs/design.md says what that leaves open.
type programPin struct {
	file   string // the spec file, like "env/build.json"
	reason string // why spec files are fixed
	exe    pinnedFile
	words  []pinnedFile
}

// pinnedFile is one file as the pin saw it.
type pinnedFile struct {
	word string // as the spec file gives it
	path string // where it is: absolute, or for an executable looked up in PATH, what the lookup found
	look bool   // the path is found in PATH at every check
	seen fileSeen
}

// fileSeen is what a file held: absent, a regular file with its content's
// sum, or something else (a directory: its content is not pinned).
type fileSeen struct {
	kind fileKind
	sum  [sha256.Size]byte
}

type fileKind int

const (
	fileAbsent fileKind = iota
	fileRegular
	fileOther
)

// newProgramPin pins the program a spec file starts: exe as the spec names
// it (a name looked up in PATH, or a path, relative ones from projectDir),
// its arguments and variables' values resolved from workDir. Only the
// words that name a path inside projectDir are pinned, besides exe.
func newProgramPin(projectDir, workDir, file, reason, exe string, args []string, env map[string]string) *programPin {
	p := &programPin{file: file, reason: reason, exe: pinnedFile{word: exe}}
	if strings.Contains(exe, "/") {
		p.exe.path = exe
		if !filepath.IsAbs(exe) {
			p.exe.path = filepath.Join(projectDir, exe)
		}
	} else {
		p.exe.look = true
		p.exe.path, _ = exec.LookPath(exe)
	}
	p.exe.seen = seeFile(p.exe.path)
	var words []string
	for _, a := range args {
		words = append(words, a)
		if _, v, ok := strings.Cut(a, "="); ok {
			words = append(words, v) // --config=env/x.toml
		}
	}
	for _, v := range env {
		words = append(words, filepath.SplitList(v)...)
	}
	seen := map[string]bool{p.exe.path: true}
	for _, w := range words {
		if w == "" || strings.HasPrefix(w, "-") || strings.ContainsRune(w, 0) {
			continue
		}
		path := w
		if !filepath.IsAbs(path) {
			path = filepath.Join(workDir, path)
		}
		path = filepath.Clean(path)
		if rel, err := filepath.Rel(projectDir, path); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue // outside the project, where the editor does not write
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		p.words = append(p.words, pinnedFile{word: w, path: path, seen: seeFile(path)})
	}
	return p
}

// pin keeps p, for ProgramFile, and returns its check.
func (o *Orchestrator) pin(p *programPin) func() error {
	o.pinsMu.Lock()
	defer o.pinsMu.Unlock()
	o.pins = append(o.pins, p)
	return p.check
}

// ProgramFile returns an error when spec files are fixed
// ([WithoutSpecReload]) and path, absolute, is one of the files the
// program of a loaded spec file is made of (its executable, or a file of
// the project its command line or variables name; the same file through
// another path too); nil otherwise. An environment that writes files the
// model names, and none that runs programs (the editor alone), asks it
// before each write and refuses such a file: changing it would change
// what the program runs. A start checks the files too (a changed program
// is not started), but a write refused never races a start.
func (o *Orchestrator) ProgramFile(path string) error {
	o.pinsMu.Lock()
	pins := o.pins
	o.pinsMu.Unlock()
	path = filepath.Clean(path)
	var fi os.FileInfo
	for _, p := range pins {
		for _, f := range append([]pinnedFile{p.exe}, p.words...) {
			same := f.path == path
			if !same && f.path != "" {
				if fi == nil {
					if fi, _ = os.Stat(path); fi == nil {
						continue
					}
				}
				if pf, err := os.Stat(f.path); err == nil {
					same = os.SameFile(fi, pf)
				}
			}
			if same {
				return fmt.Errorf("%s is part of the program %s starts, so it is kept as it is: %s. Restart with bash or python on to change it", f.word, p.file, p.reason)
			}
		}
	}
	return nil
}

// seeFile reads what path holds now. A file that cannot be read counts as
// absent.
func seeFile(path string) fileSeen {
	if path == "" {
		return fileSeen{}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileSeen{}
	}
	if !fi.Mode().IsRegular() {
		return fileSeen{kind: fileOther}
	}
	f, err := os.Open(path)
	if err != nil {
		return fileSeen{}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fileSeen{}
	}
	out := fileSeen{kind: fileRegular}
	h.Sum(out.sum[:0])
	return out
}

// check reports, as the reason a start is refused, the first pinned file
// that differs from what it was.
func (p *programPin) check() error {
	exe := p.exe
	if exe.look {
		now, _ := exec.LookPath(exe.word)
		if now != exe.path {
			was := exe.path
			if was == "" {
				was = "nothing"
			}
			if now == "" {
				now = "nothing"
			}
			return p.changed(fmt.Sprintf("the executable %q, which was %s, is now %s in PATH", exe.word, was, now))
		}
	}
	if err := p.differs(exe, "the executable"); err != nil {
		return err
	}
	for _, f := range p.words {
		if err := p.differs(f, "the file"); err != nil {
			return err
		}
	}
	return nil
}

// differs reports f if it differs from what it was.
func (p *programPin) differs(f pinnedFile, what string) error {
	now := seeFile(f.path)
	if now == f.seen {
		return nil
	}
	how := "changed"
	switch {
	case f.seen.kind == fileAbsent:
		how = "was made"
	case now.kind == fileAbsent:
		how = "was removed"
	}
	return p.changed(fmt.Sprintf("%s %s %s", what, f.word, how))
}

// changed is the error for a start refused because of what.
func (p *programPin) changed(what string) error {
	return fmt.Errorf("%s since %s was loaded, and a changed program is not started, because %s. Restart to accept the change", what, p.file, p.reason)
}
