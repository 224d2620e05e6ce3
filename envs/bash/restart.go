package bash

import (
	"fmt"
	"os"

	"github.com/unfold-dev/unfold/envs"
)

// lostState says what ending the shell lost, for a note that begins
// "... so it was ended; ".
func (s *Shell) lostState() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "the next command starts a new shell in " + s.cwd + ". Variables, functions, aliases and background jobs are lost."
}

// died reports a shell that ended during a command, after collecting its
// last output and ending what it left running.
func (s *Shell) died(p *proc) outcome {
	p.drainOutput()
	_ = p.stop()
	<-p.exited
	s.mu.Lock()
	cwd := s.cwd
	s.mu.Unlock()
	return outcome{died: true, note: fmt.Sprintf("[The shell ended during this command (%s). The next command starts a new shell in %s; variables, functions, aliases and background jobs are lost.]", p.status, cwd)}
}

// restart replaces a shell that ended with a new one in the last working
// directory, and returns the note for the response.
func (s *Shell) restart(old *proc) (*proc, string, error) {
	_ = old.stop()
	s.mu.Lock()
	dir := s.cwd
	s.mu.Unlock()
	where := dir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = s.startDir
		where = fmt.Sprintf("%s (%s no longer exists)", dir, where)
	}
	p, err := startProc(s.bashPath, dir, s.env, s.resources)
	if err != nil {
		return nil, "", fmt.Errorf("start %s: %v", s.bashPath, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = p.stop()
		return nil, "", envs.ErrClosed
	}
	s.p, s.cwd, s.jobs, s.running = p, dir, nil, nil
	return p, fmt.Sprintf("[The shell had ended (%s); started a new one in %s. Variables, functions, aliases and background jobs from before were lost.]", old.status, where), nil
}
