package bash

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// Bounds on what the stream holds besides the command's output.
const (
	maxFrame      = 256 << 10 // a marker's state: the working directory and the job list
	backgroundCap = 8 << 10   // output that arrives between commands
)

// frame is the state a marker carries.
type frame struct {
	pid      int   // the process ID of the shell that printed it
	number   int64 // the command number: markers count only when it grew
	id       int64 // the id the last line that set one gave (see [proc.submit])
	status   int
	override bool // the status came from exit or set -e, in place of $?
	psLen    int  // the length of PS1 (as if it held $? where it holds the override)
	errexit  bool // set -e is on
	cwd      string
	jobCount int      // the shell's count of jobs
	listed   bool     // the marker carries the job list
	jobs     []string // as the screen shows them: "[1] 12345 ./server"
}

// stream sorts what the shell writes: a command's output up to its marker,
// the marker's frame, and output between commands (from background jobs).
// The holder of the terminal calls feed; the command waiting calls the
// rest.
type stream struct {
	mu      sync.Mutex // guards every field below
	tag     []byte     // the marker tag: 0x1e and the session's secret
	end     []byte     // the tag that ends a marker
	active  bool       // a command's marker is expected
	after   int64      // the number the expected marker must exceed
	id      int64      // the id the expected marker must carry
	anyID   bool       // a marker of any id may end the command (see repeatEnds)
	pid     int        // the shell's process ID, which the marker must carry
	repeats int        // markers of this shell's dropped: repeated prompts
	drained int        // bytes of an answer the shell discarded before its marker
	drains  int        // the discard records that came
	cwd     string     // the working directory of the last marker
	pend    []byte     // the end of the last chunk, when it may begin a tag
	inFrame bool       // a tag came: frame holds what came from it on
	frame   []byte
	out     *envs.Output // the command's output
	outf    *term.Filter
	open    bool         // the output before out ended in an unfinished line
	bg      *envs.Output // output between commands
	bgf     *term.Filter
	done    chan frame // gets the expected marker's frame; capacity 1
}

func newStream(secret string, pid int) *stream {
	s := &stream{done: make(chan frame, 1), pid: pid}
	s.tag = append([]byte{0x1e}, secret...)
	s.end = append(append([]byte(nil), s.tag...), 0x1e)
	s.resetBackground()
	return s
}

func (s *stream) resetBackground() {
	s.bg = envs.NewOutput(backgroundCap)
	s.bgf = term.NewFilter(s.bg)
}

// expect starts a command: output goes to out until a marker whose number
// is above after and that carries id, the one the command's line set or,
// for a line that set none, the last one set: a line the shell ran before
// it (typed to a program that did not read it all, say) cannot end the
// command with its marker. Bytes held back as the possible start of a
// marker stay held: they complete a repeated prompt, or are the command's
// output.
func (s *stream) expect(after, id int64, out *envs.Output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active, s.after, s.id, s.anyID = true, after, id, false
	s.redirect(out)
	s.open = false
	select {
	case <-s.done:
	default:
	}
}

// redirect sends the rest of the current command's output to out.
func (s *stream) redirect(out *envs.Output) {
	if s.outf != nil {
		s.open = s.endsOpen()
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
		if s.active {
			// The command ended without its marker: what was held back
			// as the possible start of one is its output after all.
			if s.inFrame {
				_, _ = s.outf.Write(s.frame)
			}
			_, _ = s.outf.Write(s.pend)
			s.pend, s.frame, s.inFrame = s.pend[:0], s.frame[:0], false
		}
		_ = s.outf.Flush()
	}
	s.active, s.out, s.outf = false, nil, nil
}

// repeatEnds lets a marker that repeats the last counted number (and the
// id before the line's) end the command too: after Ctrl-C reached the
// shell at its prompt, before it read the command's line, which the
// terminal then discarded, the shell prompts again without having run
// anything.
func (s *stream) repeatEnds() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active {
		s.after--
		s.anyID = true
	}
}

// repeated returns how many markers of this shell's were dropped so far.
func (s *stream) repeated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repeats
}

// w is where output goes now: the command's, or between commands the
// background's.
func (s *stream) w() *term.Filter {
	if s.active {
		return s.outf
	}
	return s.bgf
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

// unfinished reports whether the command's output ends in an unfinished
// line that is not blank, as a question leaves it, counting the line an
// earlier response showed when nothing came since.
func (s *stream) unfinished() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outf != nil && s.endsOpen()
}

// endsOpen is unfinished under the lock, with outf set.
func (s *stream) endsOpen() bool {
	if line := s.outf.Line(); len(line) > 0 || s.out.Total() > 0 {
		return len(bytes.TrimSpace(line)) > 0
	}
	return s.open
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

// feed takes bytes read from the terminal. Markers are looked for between
// commands too, so that a prompt the shell repeats (after a Ctrl-C that
// came as a command ended, say) is not taken for output.
func (s *stream) feed(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := p
	if len(s.pend) > 0 {
		s.pend = append(s.pend, p...)
		data = s.pend
	}
	for len(data) > 0 {
		if s.inFrame {
			s.frame = append(s.frame, data...)
		} else {
			i := bytes.Index(data, s.tag)
			if i < 0 {
				k := partialTag(data, s.tag)
				_, _ = s.w().Write(data[:len(data)-k])
				// data may share pend's array; append moves the overlap safely.
				s.pend = append(s.pend[:0], data[len(data)-k:]...)
				return
			}
			_, _ = s.w().Write(data[:i])
			s.frame = append(s.frame[:0], data[i:]...)
			s.inFrame = true
		}
		data = s.scan()
	}
	s.pend = s.pend[:0]
}

// scan looks at the frame buffer, which begins with a tag, once it holds
// an end tag: the marker ends there and begins at the last tag before it
// (or at the jobs block before that); what comes before is output. It
// hands on the marker when a command waits for it and its number is above
// after. Another marker (a repeated prompt, or an old one replayed) is
// dropped, as is the prompt printed with promptvars off (its fields not
// expanded: the shell is then seen back at its prompt without a marker),
// a discard record (the tag, 0x1c and a count, written before the marker
// once an answer was typed: see __unfold_drain in init.sh) is counted,
// and what is not a marker at all is output. scan returns what
// follows, to be looked at again.
func (s *stream) scan() []byte {
	e := bytes.Index(s.frame, s.end)
	if e < 0 {
		if len(s.frame) > maxFrame {
			// No end in sight: what comes before the last tag is output.
			if k := bytes.LastIndex(s.frame[1:], s.tag) + 1; k > 0 {
				_, _ = s.w().Write(s.frame[:k])
				s.frame = append(s.frame[:0], s.frame[k:]...)
			} else {
				// Look at the last bytes again: they may begin a tag.
				k := len(s.frame) - (len(s.tag) - 1)
				_, _ = s.w().Write(s.frame[:k])
				tail := append([]byte(nil), s.frame[k:]...)
				s.inFrame, s.frame = false, s.frame[:0]
				return tail
			}
		}
		return nil
	}
	fr := frame{cwd: s.cwd}
	ok, unexpanded := false, false
	begin := bytes.LastIndex(s.frame[:e], s.tag)
	if begin >= 0 && s.frame[begin+len(s.tag)] == 0x1c {
		if n, err := strconv.Atoi(string(s.frame[begin+len(s.tag)+1 : e])); err == nil && n >= 0 {
			_, _ = s.w().Write(s.frame[:begin])
			s.drained += n
			s.drains++
			next := append([]byte(nil), s.frame[e+len(s.end):]...)
			s.inFrame, s.frame = false, s.frame[:0]
			return next
		}
	}
	if begin >= 0 {
		fields := s.frame[begin+len(s.tag) : e]
		unexpanded = bytes.HasPrefix(fields, []byte("\x1f$$\x1f"))
		if j := bytes.LastIndex(s.frame[:begin], s.tag); j >= 0 && s.frame[j+len(s.tag)] == 0x1d && bytes.IndexByte(s.frame[j+len(s.tag):begin], 0x1e) < 0 {
			fr.listed = true
			fr.jobs = parseJobs(strings.ToValidUTF8(string(s.frame[j+len(s.tag)+1:begin]), "\uFFFD"))
			begin = j
		}
		ok = parseFields(&fr, fields)
	} else {
		begin = e
	}
	_, _ = s.w().Write(s.frame[:begin])
	if ok {
		s.cwd = fr.cwd
	}
	if ok && s.active && fr.pid == s.pid && fr.number > s.after && (fr.id == s.id || s.anyID) {
		_ = s.outf.Flush()
		s.active = false
		select {
		case s.done <- fr:
		default:
		}
	} else if !ok && !unexpanded {
		_, _ = s.w().Write(s.frame[begin : e+len(s.end)])
	} else if fr.pid == s.pid {
		s.repeats++
	}
	next := append([]byte(nil), s.frame[e+len(s.end):]...)
	s.inFrame, s.frame = false, s.frame[:0]
	return next
}

// takeDrained returns how many discard records came and the bytes they
// count, and clears both.
func (s *stream) takeDrained() (records, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	records, n = s.drains, s.drained
	s.drains, s.drained = 0, 0
	return records, n
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

// parseFields reads what follows a marker's last tag, up to its end tag:
// 0x1f and the fields process ID, command number, id, job count, status (with
// a leading + when it came from exit or set -e), the length of PS1, the
// shell's flags ($-) and working directory, separated by 0x1f. It reports whether b has that
// shape. A working directory equal to fr.cwd (the last marker's) keeps
// that string.
func parseFields(fr *frame, b []byte) bool {
	rest, ok := bytes.CutPrefix(b, []byte{0x1f})
	if !ok {
		return false
	}
	var fields [7][]byte
	for i := range fields {
		if fields[i], rest, ok = bytes.Cut(rest, []byte{0x1f}); !ok {
			return false
		}
	}
	var err0, err1, err2, err3, err4, err5 error
	fr.pid, err0 = strconv.Atoi(string(fields[0]))
	fr.number, err1 = strconv.ParseInt(string(fields[1]), 10, 64)
	fr.id, err5 = strconv.ParseInt(string(fields[2]), 10, 64)
	fr.jobCount, err2 = strconv.Atoi(string(fields[3]))
	status, override := bytes.CutPrefix(fields[4], []byte{'+'})
	fr.status, err3 = strconv.Atoi(string(status))
	fr.psLen, err4 = strconv.Atoi(string(fields[5]))
	if err0 != nil || err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return false
	}
	if override {
		// The one-shot prompt holds "+N" where the template has "$?".
		fr.psLen -= len(fields[4]) - len("$?")
	}
	fr.override = override
	fr.errexit = bytes.IndexByte(fields[6], 'e') >= 0
	if string(rest) == fr.cwd {
		return true // the last marker's, kept in fr: no new string
	}
	fr.cwd = strings.ToValidUTF8(string(rest), "\uFFFD")
	return true
}

// jobLine matches a line of `jobs -l`: "[1]+ 12345 Running    sleep 100 &".
// A pipeline's further processes are on indented lines, which do not match.
var jobLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\[(\d+)\][+\- ]\s*(\d+)\s+(\S+(?: \S+)*?)(?:\s{2,}|\s+$|$)(.*)$`)
})

// parseJobs turns `jobs -l` output into the screen's entries: running jobs
// as "[1] 12345 command", stopped ones with " (stopped)"; finished ones are
// left out.
func parseJobs(text string) []string {
	var jobs []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		m := jobLine().FindStringSubmatch(line)
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
