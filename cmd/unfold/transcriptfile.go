package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/internal/readfile"
)

// openTranscripts opens the transcript a run appends to, tpath (the
// resumed file when empty), locked for the run so that no other run
// writes it meanwhile; and, with resume, reads the transcript the run
// continues. When the two are different files, the conversation resumed
// is copied into tpath first, so that tpath resumes on its own. Errors
// name the flag of the file at fault.
func openTranscripts(resume, tpath string, stderr io.Writer) (*agent.Transcript, *os.File, error) {
	if tpath == "" {
		tpath = resume
	}
	var rf *os.File
	if resume != "" {
		// Opened first: a file that is not regular is refused before
		// anything else is opened or made.
		var err error
		if rf, err = readfile.Open(resume); err != nil {
			return nil, nil, fmt.Errorf("--resume: %w", err)
		}
		defer rf.Close()
	}
	flag, which := os.O_RDWR|os.O_APPEND, "--resume"
	if rf == nil || tpath != resume {
		flag, which = flag|os.O_CREATE, "--transcript"
	}
	// made: this run made the file (O_EXCL says so, whatever another run
	// does at the same moment), so a refusal once it holds the lock
	// removes it; a file it did not make, or could not lock, stays.
	made := false
	var out *os.File
	var err error
	if flag&os.O_CREATE != 0 {
		out, err = os.OpenFile(tpath, flag|os.O_EXCL, 0o644)
		made = err == nil
	}
	if !made && (flag&os.O_CREATE == 0 || errors.Is(err, fs.ErrExist)) {
		out, err = os.OpenFile(tpath, flag, 0o644)
	}
	if err == nil {
		err = lockFile(out, tpath, unix.LOCK_EX)
	}
	if err != nil {
		if out != nil {
			out.Close()
		}
		return nil, nil, fmt.Errorf("%s: %w", which, err)
	}
	tr, err := resumeInto(rf, out, resume, tpath, stderr)
	if err != nil {
		out.Close()
		if made {
			os.Remove(tpath)
		}
		return nil, nil, err
	}
	return tr, out, nil
}

// resumeInto readies out, locked, for the run's records: it reads the
// transcript rf resumes, if any, and copies its conversation into out
// when out is another file.
func resumeInto(rf, out *os.File, resume, tpath string, stderr io.Writer) (*agent.Transcript, error) {
	if rf == nil {
		if err := endLines(out, tpath, stderr); err != nil {
			return nil, fmt.Errorf("--transcript: %w", err)
		}
		return nil, nil
	}
	same, err := sameFile(rf, out)
	if err == nil && !same {
		// Read, not written: other runs may read it too, none write it.
		err = lockFile(rf, resume, unix.LOCK_SH)
	}
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	tr, err := readResume(rf, resume, stderr)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	if same {
		if tr.Incomplete > 0 {
			err = out.Truncate(tr.Complete)
		}
		if err == nil {
			err = endLines(out, tpath, stderr)
		}
		if err != nil {
			return nil, fmt.Errorf("--resume: %s: %w", resume, err)
		}
		return tr, nil
	}
	if err := copyConversation(rf, out, tr, tpath, stderr); err != nil {
		return nil, fmt.Errorf("--transcript: %s: %w", tpath, err)
	}
	fmt.Fprintf(stderr, "unfold agent: --transcript: %s: the conversation resumed from %s is copied into it first, so that it resumes on its own\n", tpath, resume)
	return tr, nil
}

// readResume reads the transcript a run resumes as a stream: each line is
// bounded (agent.MaxTranscriptLine), the file is not, and only what the
// resume needs is kept. A last line cut short by a run that stopped while
// writing it is left out, with a note.
func readResume(f *os.File, path string, stderr io.Writer) (*agent.Transcript, error) {
	tr, err := agent.ReadForResume(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if tr.Incomplete > 0 {
		fmt.Fprintf(stderr, "unfold agent: --resume: %s: line %d was cut short (the run stopped while writing it); resuming without it\n", path, tr.Incomplete)
	}
	return tr, nil
}

// copyConversation appends the records of the conversation tr continues,
// from rf, to out; a copy that fails is removed.
func copyConversation(rf, out *os.File, tr *agent.Transcript, tpath string, stderr io.Writer) error {
	end := tr.Complete
	if tr.Incomplete == 0 {
		fi, err := rf.Stat()
		if err != nil {
			return err
		}
		end = fi.Size()
	}
	if err := endLines(out, tpath, stderr); err != nil {
		return err
	}
	fi, err := out.Stat()
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(rf, tr.Start, end-tr.Start))
	if err == nil {
		// The resumed file's last line may lack only its newline.
		err = endLines(out, tpath, stderr)
	}
	if err != nil && fi.Mode().IsRegular() {
		if terr := out.Truncate(fi.Size()); terr != nil {
			return fmt.Errorf("%w; removing the part copied: %w", err, terr)
		}
	}
	return err
}

// sameFile reports whether a and b are one file, under any names.
func sameFile(a, b *os.File) (bool, error) {
	ai, err := a.Stat()
	if err != nil {
		return false, err
	}
	bi, err := b.Stat()
	if err != nil {
		return false, err
	}
	return os.SameFile(ai, bi), nil
}

// lockFile takes a lock (unix.LOCK_EX or unix.LOCK_SH) on a regular
// file, held until the file is closed, without waiting: a file another
// run holds is refused. Other files are not locked.
func lockFile(f *os.File, path string, how int) error {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return err
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	cerr := conn.Control(func(fd uintptr) {
		for {
			if err = unix.Flock(int(fd), how|unix.LOCK_NB); err != unix.EINTR {
				return
			}
		}
	})
	switch {
	case cerr != nil:
		return cerr
	case errors.Is(err, unix.EWOULDBLOCK):
		return fmt.Errorf("%s is in use by another unfold agent run; wait for that run to end, or use another file", path)
	case err != nil:
		return fmt.Errorf("lock %s: %w", path, err)
	}
	return nil
}

// endLines readies a regular file for appending: a last line cut short
// (a run stopped while writing it, or the disk filled up) is removed,
// with a note, since a record after it would make it a broken line in
// the middle of the file, which --resume refuses; and a last line that
// lacks only its newline gets one, so that the first record appended
// starts a line of its own.
func endLines(f *os.File, path string, stderr io.Writer) error {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return err
	}
	size := fi.Size()
	start, err := lastLine(f, path, size)
	if err != nil || start == size {
		return err
	}
	line := make([]byte, size-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return err
	}
	// Only a transcript's last line is mended: any other file is left as
	// it is, and refused.
	if ok, err := looksLikeTranscript(f); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s does not look like a transcript (its first line is not a transcript record) and does not end with a newline; it is left as it is: give --transcript a new file, or a transcript", path)
		}
		return err
	}
	if json.Valid(line) {
		_, err = f.Write([]byte{'\n'})
		return err
	}
	if err := f.Truncate(start); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "unfold agent: %s: its last line was cut short (a run stopped while writing it); removed it (%d bytes) so that the file resumes\n", path, size-start)
	return nil
}

// recordStart is how every transcript record's line begins.
var recordStart = []byte(`{"kind":`)

// looksLikeTranscript reports whether f begins as a transcript does, with
// a record.
func looksLikeTranscript(f io.ReaderAt) (bool, error) {
	head := make([]byte, len(recordStart))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.Equal(head, recordStart), nil
}

// lastLine returns the offset of the file's last line, size when the
// file ends with a newline.
func lastLine(f io.ReaderAt, path string, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		n := min(int64(len(buf)), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
		if size-end > agent.MaxTranscriptLine {
			return 0, fmt.Errorf("%s: its last line is over %d bytes, with no newline; is this a transcript?", path, agent.MaxTranscriptLine)
		}
	}
	return 0, nil
}
