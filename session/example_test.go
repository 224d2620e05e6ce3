package session_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/session"
)

// CommandRan is an event: a command ran in an environment.
type CommandRan struct {
	Command string
}

// used counts the commands that ran. Declare slices once, at package level.
var used = session.NewSlice[map[string]int]("example.used", nil)

func Example() {
	sess := session.New()
	// A reducer is pure: it copies the map instead of changing the old one.
	err := session.On(sess, used, func(old map[string]int, e CommandRan) map[string]int {
		next := make(map[string]int, len(old)+1)
		for k, v := range old {
			next[k] = v
		}
		next[e.Command]++
		return next
	})
	if err != nil {
		panic(err)
	}

	before := session.Get(sess, used)
	for _, cmd := range []string{"ls", "cat", "ls"} {
		if err := sess.Dispatch(CommandRan{Command: cmd}); err != nil {
			panic(err)
		}
	}
	after := session.Get(sess, used)

	fmt.Println("before:", before)
	fmt.Println("after:", after)
	fmt.Println("events:", sess.Seq())
	// Output:
	// before: map[]
	// after: map[cat:1 ls:2]
	// events: 3
}

func ExampleSession_ReplayLog() {
	newSession := func() *session.Session {
		sess := session.New()
		if err := session.RegisterEvent[CommandRan](sess, "command_ran"); err != nil {
			panic(err)
		}
		count := func(old map[string]int, e CommandRan) map[string]int {
			next := map[string]int{e.Command: old[e.Command] + 1}
			for k, v := range old {
				if k != e.Command {
					next[k] = v
				}
			}
			return next
		}
		if err := session.On(sess, used, count); err != nil {
			panic(err)
		}
		return sess
	}

	sess := newSession()
	_ = sess.Dispatch(CommandRan{Command: "make"})
	_ = sess.Dispatch(CommandRan{Command: "make"})
	var saved bytes.Buffer
	if err := sess.WriteLog(&saved); err != nil {
		panic(err)
	}

	resumed := newSession()
	if err := resumed.ReplayLog(strings.NewReader(saved.String())); err != nil {
		panic(err)
	}
	fmt.Println(session.Get(resumed, used), resumed.Seq())
	// Output:
	// map[make:2] 2
}
