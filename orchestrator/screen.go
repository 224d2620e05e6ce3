package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// DefaultMaxLines is the screen height used when an environment's screen
// leaves MaxLines at 0 (docs/design.md, the orchestrator protocol).
const DefaultMaxLines = 50

// maxScreenBytes bounds one screen's content after line truncation: a screen
// of a few very long lines is cut here, with a notice.
const maxScreenBytes = 64 << 10

// errorScreenLines is the height of a screen that reports a failing Screen
// call (docs/design.md).
const errorScreenLines = 10

// Bounds of the wait for screens.
const (
	// screenWait is the longest wait for the screens after a command, and
	// for [Orchestrator.Screens].
	screenWait = 5 * time.Second
	// screenFloor is the least wait for the screens after a command whose
	// time limit has passed.
	screenFloor = 250 * time.Millisecond
	// screenSlice is how long the screens are drawn one after another
	// before the rest are drawn at once.
	screenSlice = 5 * time.Millisecond
)

// Screens collects the screen of every environment, truncated to its
// MaxLines, plus the orchestrator's own screen ([ScreenName]) when spec files
// failed to load. An environment whose Screen fails or panics gets a screen
// reporting the failure instead; the others are unaffected. The screens
// of [QuickScreener]s are drawn by the caller; the others apart from it, a
// slow one holding no other, and waited for 5 seconds at most: an
// environment that has not drawn its screen by then gets the last one it
// drew, marked as such.
func (o *Orchestrator) Screens() map[string]envs.Screen {
	return o.screensBy(time.Now().Add(screenWait))
}

// screensAfter collects the screens after a command (see screensBy), by
// the command's deadline (its timeout counted from its arrival, or ctx's):
// not past [screenWait] from now, and not before [screenFloor] from now.
func (o *Orchestrator) screensAfter(ctx context.Context, cmd Command) map[string]envs.Screen {
	now := time.Now()
	deadline := now.Add(screenWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if end := cmd.Arrived.Add(cmd.Timeout); cmd.Timeout > 0 && end.Before(deadline) {
		deadline = end
	}
	if floor := now.Add(screenFloor); deadline.Before(floor) {
		deadline = floor
	}
	return o.screensBy(deadline)
}

// screensBy is Screens with the wait ending at deadline. A screen it
// returns unmarked began to be drawn after the call did: a drawing under
// way from before is waited for and then started again.
func (o *Orchestrator) screensBy(deadline time.Time) map[string]envs.Screen {
	after := time.Now()
	o.mu.RLock()
	list := make([]*entry, 0, len(o.names))
	quick := true
	for _, n := range o.names {
		e := o.envs[n]
		list = append(list, e)
		quick = quick && e.quick
	}
	loadErrs := o.loadErrs
	o.mu.RUnlock()
	out := make(map[string]envs.Screen, len(list)+1)
	if quick {
		for _, e := range list {
			out[e.name] = o.screen(e)
		}
	} else {
		o.drawApart(list, after, deadline, out)
	}
	if len(loadErrs) > 0 {
		out[ScreenName] = o.fit(envs.Screen{Content: loadErrorScreen(loadErrs)})
	}
	return out
}

// drawApart puts in out the screens of list: the quick ones ([QuickScreener])
// drawn by the caller, the others apart from it and waited for until
// deadline, each one begun after the time after.
func (o *Orchestrator) drawApart(list []*entry, after, deadline time.Time, out map[string]envs.Screen) {
	shots := make([]<-chan struct{}, len(list))
	again := make([]bool, len(list)) // the drawing waited for began before after
	var todo []*entry                // the screens this call draws
	for i, e := range list {
		if e.quick {
			continue
		}
		var mine bool
		if shots[i], mine, again[i] = e.shot.begin(after); mine {
			todo = append(todo, e)
		}
	}
	// One goroutine draws them in turn, and once screenSlice has passed
	// the ones not started yet get goroutines of their own, so that a slow
	// screen holds no other: most screens take microseconds, and a
	// goroutine for each would cost more than the drawing.
	var next atomic.Int64
	draw := func(all bool) {
		for {
			k := int(next.Add(1)) - 1
			if k >= len(todo) {
				return
			}
			e := todo[k]
			e.shot.finish(o.screen(e))
			if !all {
				return
			}
		}
	}
	if len(todo) > 0 {
		go draw(true)
	}
	for _, e := range list {
		if e.quick {
			out[e.name] = o.screen(e)
		}
	}
	handedOut := len(todo) <= 1
	wait := time.Until(deadline)
	if !handedOut {
		wait = min(wait, screenSlice)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	late := false
	for i, e := range list {
		if e.quick {
			continue
		}
	wait:
		for !late {
			select {
			case <-shots[i]:
				if !again[i] {
					break wait
				}
				// It began before the command ended, so it may show the
				// state from before: it is drawn again.
				var mine bool
				if shots[i], mine, again[i] = e.shot.begin(after); mine {
					go o.redraw(e)
				}
			case <-t.C:
				if handedOut {
					late = true
					break
				}
				handedOut = true
				for range len(todo) - int(next.Load()) {
					go draw(false)
				}
				t.Reset(time.Until(deadline))
			}
		}
		out[e.name] = e.shot.get(e.name, o, after)
	}
}

// redraw draws e's screen, begun by the caller.
func (o *Orchestrator) redraw(e *entry) { e.shot.finish(o.screen(e)) }

// Screen returns the truncated screen of the environment called name.
func (o *Orchestrator) Screen(name string) (envs.Screen, bool) {
	o.mu.RLock()
	e, ok := o.envs[name]
	o.mu.RUnlock()
	if !ok {
		return envs.Screen{}, false
	}
	return o.screen(e), true
}

// Previewer is implemented by environments that remember what their
// screen showed the agent: the editor checks an edit against the lines its
// views last drew. Preview returns the screen as Screen does without
// counting it as shown. It must not block on a running command.
type Previewer interface {
	Preview() (envs.Screen, error)
}

// Preview returns the truncated screen of the environment called name, or
// the orchestrator's own ([ScreenName]) while spec files fail to load,
// drawn for something other than the agent (a tool description, a
// resource a client polls): an environment that is a [Previewer] does not
// count it as shown. [Orchestrator.Screen] and [Orchestrator.Screens] are
// for screens that go to the agent.
func (o *Orchestrator) Preview(name string) (envs.Screen, bool) {
	o.mu.RLock()
	e, ok := o.envs[name]
	loadErrs := o.loadErrs
	o.mu.RUnlock()
	if name == ScreenName && !ok {
		if len(loadErrs) == 0 {
			return envs.Screen{}, false
		}
		return o.fit(envs.Screen{Content: loadErrorScreen(loadErrs)}), true
	}
	if !ok {
		return envs.Screen{}, false
	}
	return o.draw(e, true), true
}

func (o *Orchestrator) screen(e *entry) envs.Screen { return o.draw(e, false) }

// QuickScreener is implemented by environments whose Screen never blocks:
// it copies state kept under a lock that no command holds for long, and
// waits for no process, pipe or code of the user's. Their screens
// are drawn on the caller's goroutine; the others are drawn on goroutines
// of their own and waited for until the command's deadline, which costs
// about twice as much per command. QuickScreen is a marker: it is never
// called. The built-in bash, python, interactive and editor environments
// are quick; a declarative environment (its State is the user's) and a
// process environment are not.
type QuickScreener interface {
	QuickScreen()
}

// shot is an environment's screen as drawn for the agent last, and the
// drawing under way.
type shot struct {
	mu      sync.Mutex    // guards the fields below
	last    envs.Screen   // truncated; valid when at is set
	from    time.Time     // when the drawing of last began
	at      time.Time     // when last was drawn
	pending chan struct{} // closed when the drawing under way ends; nil when none is
	began   time.Time     // when the drawing under way began
}

// begin returns the channel closed when the drawing of the screen ends,
// whether the caller is to draw it (mine), and whether that drawing began
// before the time after (before), so that the caller waits for it and
// begins again: a drawing under way is waited for rather than started
// again, so that a Screen call that never returns holds one goroutine, not
// one per command.
func (c *shot) begin(after time.Time) (done <-chan struct{}, mine, before bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending != nil {
		return c.pending, false, c.began.Before(after)
	}
	c.pending, c.began = make(chan struct{}), time.Now()
	return c.pending, true, false
}

// finish ends the drawing begun, with its screen s.
func (c *shot) finish(s envs.Screen) {
	c.mu.Lock()
	done := c.pending
	c.last, c.from, c.at, c.pending = s, c.began, time.Now(), nil
	c.mu.Unlock()
	close(done)
}

// get returns the screen drawn last, saying so unless its drawing began
// at or after the time after.
func (c *shot) get(name string, o *Orchestrator, after time.Time) envs.Screen {
	c.mu.Lock()
	last, from, at := c.last, c.from, c.at
	c.mu.Unlock()
	switch {
	case !at.IsZero() && !from.Before(after):
		return last
	case at.IsZero():
		return o.fit(envs.Screen{Content: fmt.Sprintf("[%s did not draw its screen in time; it is shown with a later response.]", name), MaxLines: errorScreenLines})
	}
	note := fmt.Sprintf("[%s did not draw its screen in time: this is the one it drew %v ago.]", name, envs.Round(time.Since(at)))
	return o.fit(envs.Screen{Content: note + "\n" + last.Content, MaxLines: last.MaxLines})
}

func (o *Orchestrator) draw(e *entry, preview bool) envs.Screen {
	s, err := callScreen(e, preview)
	if err != nil {
		return o.fit(envs.Screen{
			Content:  "[Error getting screen from " + e.name + ":\n" + err.Error() + "]",
			MaxLines: errorScreenLines,
		})
	}
	return o.fit(s)
}

// callScreen calls Screen, or Preview for a preview when the environment
// has it, turning a panic into an error carrying the trace.
func callScreen(e *entry, preview bool) (s envs.Screen, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New(panicTrace(p, "callScreen", debug.Stack()))
		}
	}()
	if p, ok := e.env.(Previewer); ok && preview {
		return p.Preview()
	}
	return e.env.Screen()
}

// fit applies the default height and truncates the content.
func (o *Orchestrator) fit(s envs.Screen) envs.Screen {
	if s.MaxLines <= 0 {
		s.MaxLines = o.maxLines
	}
	s.Content = Truncate(s.Content, s.MaxLines)
	return s
}

// Truncate cuts content to at most maxLines lines (a final newline does not
// start a line). When lines are cut, the first maxLines-1 lines are kept and
// the last line says how many were cut:
//
//	[... 12 more lines cut: this screen shows at most 50 lines]
//
// Content longer than 64 KiB after that is cut at a character
// boundary, with a notice line too. maxLines below 1 counts as 1.
func Truncate(content string, maxLines int) string {
	maxLines = max(maxLines, 1)
	n := lineCount(content)
	if n > maxLines {
		keep := maxLines - 1
		cut := n - keep
		end := 0
		for range keep {
			end += strings.IndexByte(content[end:], '\n') + 1
		}
		content = content[:end] + fmt.Sprintf("[... %d more lines cut: this screen shows at most %d lines]", cut, maxLines)
	}
	if len(content) > maxScreenBytes {
		kept := utf8cut.Prefix(content, maxScreenBytes)
		cut := len(content) - len(kept)
		content = strings.TrimRight(kept, "\n") + fmt.Sprintf("\n[... %d more bytes cut: this screen shows at most %d bytes]", cut, maxScreenBytes)
	}
	return content
}

// lineCount counts lines; a trailing newline ends the last line rather than
// starting an empty one.
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func loadErrorScreen(errs []error) string {
	var b strings.Builder
	b.WriteString("Environment spec files that failed to load (fix them: they are read again before the next command):")
	for _, err := range errs {
		b.WriteString("\n- ")
		b.WriteString(err.Error())
	}
	return b.String()
}
