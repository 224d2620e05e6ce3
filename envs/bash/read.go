package bash

import (
	"bytes"
	"context"
	"time"

	"github.com/unfold-dev/unfold/internal/term"
)

// readSize is how much one read of the terminal takes at most.
const readSize = 64 << 10

// idleDrain is how long the terminal goes unread after a command before a
// goroutine starts reading it for background output. A command that
// follows sooner takes the terminal over without a hand-off.
const idleDrain = 20 * time.Millisecond

// event is what [proc.next] saw.
type event int

const (
	evFrame    event = iota // the command's marker
	evExited                // the shell ended
	evCtx                   // the context is done
	evDeadline              // the deadline passed
)

// claim takes the terminal over for a command; the caller then reads it
// with next and gives it back with release.
func (p *proc) claim() {
	p.claiming.Store(true)
	p.disarm()
	if p.live.Load() > 0 {
		// A drain that runs, or is about to, sees claiming when woken.
		p.reader.Wake()
	}
	p.readMu.Lock()
	p.claiming.Store(false)
}

// release gives the terminal back after a command; a drain starts after
// idleDrain unless another command claims it first.
func (p *proc) release() {
	p.reader.SpinUntil(time.Time{}) // the drain waits in the kernel
	p.readMu.Unlock()
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	if !p.stopped {
		p.drains.Add(1)
		p.live.Add(1)
		p.idle.Reset(idleDrain)
	}
}

// disarm cancels a drain that has not started.
func (p *proc) disarm() {
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	if p.idle.Stop() {
		p.live.Add(-1)
		p.drains.Done()
	}
}

// drain reads the terminal between commands, until a command claims it or
// the terminal closes.
func (p *proc) drain() {
	defer p.drains.Done()
	defer p.live.Add(-1)
	if !p.readMu.TryLock() {
		return
	}
	defer p.readMu.Unlock()
	// claim sets claiming before it wakes the reader: a wake-up before
	// this look is seen here, one after it ends the wait in Read.
	for !p.claiming.Load() {
		n, err := p.read(time.Time{})
		if err != nil {
			return
		}
		// A command that ran on after control came back and left the
		// terminal with VMIN 0 has the shell read an end of file at its
		// prompt over and over, with a notice each time (see fixModes):
		// the modes are set back now, not at the next command. Or a
		// process group holds the terminal (see reclaim).
		if bytes.Contains(p.buf[:n], eofNoticeBytes) {
			_, _ = term.FixModes(p.master)
			p.reclaim()
		}
	}
}

// read waits for the terminal's output until deadline (see term.Reader),
// feeds what it reads to the stream, and records the terminal's end when
// it returns an error. Only the holder of readMu calls it.
func (p *proc) read(deadline time.Time) (int, error) {
	n, err := p.reader.Read(p.buf, deadline)
	if n > 0 {
		p.stream.feed(p.buf[:n])
	}
	if err != nil {
		p.endRead()
	}
	return n, err
}

// kick wakes a command's goroutine from its wait in next, to look at the
// shell's end or the context again.
func (p *proc) kick() {
	p.reader.Wake()
}

// endRead records that the terminal is closed or hung up.
func (p *proc) endRead() {
	p.readOnce.Do(func() { close(p.readDone) })
}

// next reads the terminal into the stream, as the holder of readMu, until
// the expected marker, the shell's end, ctx being done, or deadline. ctx
// and the shell's end are noticed at once when they call kick.
func (p *proc) next(ctx context.Context, deadline time.Time) (frame, event) {
	for {
		select {
		case fr := <-p.stream.done:
			return fr, evFrame
		default:
		}
		select {
		case <-p.readDone:
			return p.waitEnded(ctx, deadline)
		default:
		}
		// A kick after these looks ends the wait in Read; one before
		// them is seen here (and ends the next wait at once).
		if ctx.Err() != nil {
			// The marker may be written and not read yet: a Ctrl-C
			// now would only make the shell prompt again.
			if fr, ok := p.pending(); ok {
				return fr, evFrame
			}
			return frame{}, evCtx
		}
		if !p.alive() {
			return frame{}, evExited
		}
		if _, err := p.read(deadline); err != nil {
			continue
		}
		// Checked after every read, not only one that found nothing, so
		// that output that never pauses cannot hold off the deadline.
		if !time.Now().Before(deadline) {
			if fr, ok := p.pending(); ok {
				return fr, evFrame
			}
			return frame{}, evDeadline
		}
	}
}

// awaitRepeat reads the terminal until the stream has dropped a repeated
// prompt of this shell's since it counted before, or for d at most.
func (p *proc) awaitRepeat(before int, d time.Duration) {
	deadline := time.Now().Add(d)
	for p.stream.repeated() == before && time.Now().Before(deadline) && p.alive() {
		if _, err := p.read(deadline); err != nil {
			return
		}
	}
}

// pending reads what the terminal holds right now, a few reads at most,
// and returns the expected marker's frame if that brought it.
func (p *proc) pending() (frame, bool) {
	for range 4 {
		select {
		case fr := <-p.stream.done:
			return fr, true
		default:
		}
		if _, err := p.read(time.Now()); err != nil {
			break
		}
	}
	select {
	case fr := <-p.stream.done:
		return fr, true
	default:
		return frame{}, false
	}
}

// waitEnded is next once the terminal is closed: nothing more can arrive.
func (p *proc) waitEnded(ctx context.Context, deadline time.Time) (frame, event) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case fr := <-p.stream.done:
		return fr, evFrame
	case <-p.exited:
		return frame{}, evExited
	case <-ctx.Done():
		return frame{}, evCtx
	case <-t.C:
		return frame{}, evDeadline
	}
}

// drainOutput reads, as the holder of readMu, what the shell wrote before
// it ended, for a short while.
func (p *proc) drainOutput() {
	deadline := time.Now().Add(100 * time.Millisecond)
	for {
		select {
		case <-p.readDone:
			return
		default:
		}
		if n, err := p.read(deadline); err == nil && n == 0 && !time.Now().Before(deadline) {
			return
		}
	}
}
