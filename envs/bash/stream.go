package bash

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/term"
)

// Bounds on what the stream holds besides the command's output.
const (
	maxFrame      = 256 << 10 // a marker's state: the working directory and the job list
	backgroundCap = 8 << 10   // output that arrives between commands
)

// frame is the state a marker carries.
type frame struct {
	status int
	cwd    string
	jobs   []string // as the screen shows them: "[1] 12345 ./server"
}

// stream sorts what the shell writes: a command's output up to its marker,
// the marker's frame, and output between commands (from background jobs).
// The reader goroutine calls feed; the command waiting calls the rest.
type stream struct {
	mu      sync.Mutex // guards every field below
	tag     []byte     // the marker tag expected; nil between commands
	tagBuf  []byte     // tag's storage, reused
	end     []byte     // the tag that ends the marker
	pend    []byte     // the end of the last chunk, when it may begin a tag
	inFrame bool
	frame   []byte
	out     *envs.Output // the command's output
	outf    *term.Filter
	bg      *envs.Output // output between commands
	bgf     *term.Filter
	done    chan frame // gets the frame of the expected tag; capacity 1
}

func newStream() *stream {
	s := &stream{done: make(chan frame, 1)}
	s.resetBackground()
	return s
}

func (s *stream) resetBackground() {
	s.bg = envs.NewOutput(backgroundCap)
	s.bgf = term.NewFilter(s.bg)
}

// expect starts a command: output goes to out until the marker with
// nonce.
func (s *stream) expect(nonce []byte, out *envs.Output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tagBuf = append(append(s.tagBuf[:0], 0x1e), nonce...)
	s.tag, s.pend, s.inFrame, s.frame = s.tagBuf, s.pend[:0], false, s.frame[:0]
	s.end = append(append(s.end[:0], s.tag...), 0x1e)
	s.redirect(out)
	select {
	case <-s.done:
	default:
	}
}

// redirect sends the rest of the current command's output to out.
func (s *stream) redirect(out *envs.Output) {
	if s.outf != nil {
		_ = s.outf.Flush()
	}
	s.out, s.outf = out, term.NewFilter(out)
}

// Redirect is redirect under the lock.
func (s *stream) Redirect(out *envs.Output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect(out)
}

// finish ends the current command's output: the unfinished line is flushed
// and further output counts as background output.
func (s *stream) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outf != nil {
		_ = s.outf.Flush()
	}
	if len(s.pend) > 0 {
		_, _ = s.bgf.Write(s.pend)
	}
	s.tag, s.pend, s.out, s.outf, s.inFrame = nil, s.pend[:0], nil, nil, false
}

// background returns the output that arrived between commands and clears
// it.
func (s *stream) background() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.bgf.Flush()
	if s.bg.Total() == 0 {
		return ""
	}
	text := s.bg.String()
	s.resetBackground()
	return text
}

// lastLine returns the unfinished line of the command's output, or "".
func (s *stream) lastLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outf == nil {
		return ""
	}
	return strings.ToValidUTF8(string(s.outf.Line()), "\uFFFD")
}

// outputTotal returns how many bytes the command's output has had.
func (s *stream) outputTotal() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		return 0
	}
	return s.out.Total() + int64(len(s.outf.Line()))
}

// feed takes bytes read from the terminal.
func (s *stream) feed(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tag == nil {
		_, _ = s.bgf.Write(p)
		return
	}
	data := p
	if len(s.pend) > 0 {
		s.pend = append(s.pend, p...)
		data = s.pend
	}
	for len(data) > 0 && s.tag != nil {
		if !s.inFrame {
			i := bytes.Index(data, s.tag)
			if i < 0 {
				k := partialTag(data, s.tag)
				_, _ = s.outf.Write(data[:len(data)-k])
				// data may share pend's array; append moves the overlap safely.
				s.pend = append(s.pend[:0], data[len(data)-k:]...)
				return
			}
			_, _ = s.outf.Write(data[:i])
			data = data[i+len(s.tag):]
			s.inFrame, s.frame = true, s.frame[:0]
			continue
		}
		s.frame = append(s.frame, data...)
		data = nil
		j := bytes.Index(s.frame, s.end)
		if j < 0 {
			if len(s.frame) > maxFrame {
				// Not a marker this shell printed; keep only what may
				// still be the start of the end tag.
				s.frame = append(s.frame[:0], s.frame[len(s.frame)-len(s.end):]...)
			}
			break
		}
		fr := parseFrame(s.frame[:j], s.tag)
		rest := s.frame[j+len(s.end):]
		_ = s.outf.Flush()
		s.tag, s.inFrame = nil, false
		_, _ = s.bgf.Write(rest)
		s.frame = s.frame[:0]
		select {
		case s.done <- fr:
		default:
		}
	}
	s.pend = s.pend[:0]
}

// partialTag returns the length of the longest end of data that is a
// proper prefix of tag.
func partialTag(data, tag []byte) int {
	for k := min(len(tag)-1, len(data)); k > 0; k-- {
		if bytes.HasPrefix(tag, data[len(data)-k:]) {
			return k
		}
	}
	return 0
}

// parseFrame reads a marker's state, what came between its first tag and
// its end tag: optionally 0x1d, the output of jobs -l and the tag again;
// then 0x1f, the status, 0x1f and the working directory.
func parseFrame(b, tag []byte) frame {
	var fr frame
	if len(b) > 0 && b[0] == 0x1d {
		i := bytes.Index(b, tag)
		if i < 0 {
			i = len(b)
		}
		fr.jobs = parseJobs(strings.ToValidUTF8(string(b[1:i]), "\uFFFD"))
		b = b[min(i+len(tag), len(b)):]
	}
	b = bytes.TrimPrefix(b, []byte{0x1f})
	status, cwd, _ := bytes.Cut(b, []byte{0x1f})
	fr.status, _ = strconv.Atoi(string(status))
	fr.cwd = strings.ToValidUTF8(string(cwd), "\uFFFD")
	return fr
}

// jobLine matches a line of `jobs -l`: "[1]+ 12345 Running    sleep 100 &".
// A pipeline's further processes are on indented lines, which do not match.
var jobLine = regexp.MustCompile(`^\[(\d+)\][+\- ]\s*(\d+)\s+(\S+(?: \S+)*?)(?:\s{2,}|\s+$|$)(.*)$`)

// parseJobs turns `jobs -l` output into the screen's entries: running jobs
// as "[1] 12345 command", stopped ones with " (stopped)"; finished ones are
// left out.
func parseJobs(text string) []string {
	var jobs []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		m := jobLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		status, command := m[3], strings.TrimSpace(m[4])
		command = strings.TrimSpace(strings.TrimSuffix(command, "&"))
		switch {
		case status == "Running":
			jobs = append(jobs, "["+m[1]+"] "+m[2]+" "+command)
		case strings.HasPrefix(status, "Stopped"):
			jobs = append(jobs, "["+m[1]+"] "+m[2]+" "+command+" (stopped)")
		}
	}
	return jobs
}
