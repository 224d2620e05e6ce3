package python

import (
	"context"
	"encoding/json"
	"time"
)

// outcome is what happened to one command in the interpreter.
type outcome struct {
	output  string
	reply   reply
	replied bool
	// interrupted is ctx.Err() when the context ended while the code ran.
	interrupted error
	// elapsed is how long the code had run when it was interrupted.
	elapsed time.Duration
	// killed: the code did not stop within the grace period.
	killed bool
	// died says how the interpreter ended when it did during the command
	// (or broke the protocol); "" when it lives.
	died string
}

// run sends code to the driver and waits for its reply. When ctx ends
// first, the process group gets SIGINT (KeyboardInterrupt in the code); if
// no reply comes within grace, the group is killed.
func (p *proc) run(ctx context.Context, code string, grace time.Duration) outcome {
	var o outcome
	line, _ := json.Marshal(request{Code: code})
	begin := time.Now()
	if err := p.send(ctx, append(line, '\n')); err != nil {
		// A partly written request leaves the protocol unusable.
		o.interrupted, o.elapsed = ctx.Err(), time.Since(begin)
		p.kill()
		o.died = "the command could not be sent to Python (" + err.Error() + "), so the process was killed"
	} else {
		o.wait(ctx, p, grace, begin)
	}
	sk, _ := p.out.sync()
	o.output = sk.String()
	return o
}

func (o *outcome) wait(ctx context.Context, p *proc, grace time.Duration, begin time.Time) {
	done := ctx.Done()
	var graceC <-chan time.Time
	for {
		select {
		case rep, ok := <-p.replies:
			if !ok && p.waitExit(stopStep) {
				// The reply stream ends when the interpreter does.
				o.died = exitDescription(p.waitErr)
				return
			}
			if !ok || rep.Status == "protocol" {
				p.kill()
				o.died = "the Python driver stopped answering (" + protocolProblem(rep, ok) + ") and was killed"
				return
			}
			o.reply, o.replied = rep, true
			return
		case <-p.exited:
			// A reply may have raced the exit.
			select {
			case rep, ok := <-p.replies:
				if ok && rep.Status != "protocol" {
					o.reply, o.replied = rep, true
				}
			default:
			}
			if !o.replied {
				o.died = exitDescription(p.waitErr)
			}
			return
		case <-done:
			select {
			case rep, ok := <-p.replies:
				// The code finished as the context ended: no interrupt.
				if ok && rep.Status != "protocol" {
					o.reply, o.replied = rep, true
					return
				}
			default:
			}
			o.interrupted, o.elapsed = ctx.Err(), time.Since(begin)
			done = nil
			signalGroup(p.cmd, sigInterrupt)
			t := time.NewTimer(grace)
			defer t.Stop()
			graceC = t.C
		case <-graceC:
			p.kill()
			o.killed = true
			return
		}
	}
}

func protocolProblem(rep reply, ok bool) string {
	if !ok {
		return "its reply stream closed"
	}
	return rep.Error
}
