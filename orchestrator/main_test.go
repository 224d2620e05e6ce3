package orchestrator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeEnvVar selects the fake-process mode: when the test binary runs with
// it set, it acts as a process environment instead of running tests.
const fakeEnvVar = "UNFOLD_TEST_PROCESS"

// spun is what the fake process's spin command writes, so that its loop
// is not taken away.
var spun int

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnvVar); mode != "" {
		os.Exit(fakeProcess(mode))
	}
	os.Exit(m.Run())
}

// fakeProcess is a process environment for tests. Commands:
//
//	inc            add one to the counter
//	get            the counter
//	echo <text>    the text
//	sleep          wait for SIGINT, then answer "interrupted"
//	hang           ignore SIGINT and never answer
//	exit <code>    exit at once without answering
//	garbage        write a line that is not a reply
//	big <n>        answer with n bytes of output
//	stderr <text>  write text to stderr, then exit 4
//	error <text>   answer with an error reply
//	phased <first> <file> <second>
//	               send the output first, wait for file, answer second
//	ask <question> send the question, ask for input, answer "got <line>"
//	asklong <n>    ask for input with a question of n "Q"s and a "?"
//	flood <n>      answer with the lines "line 1" to "line n"
//	sh <script>    run script with sh, answer with its output
//
// Mode "counter" serves those; "stubborn" also ignores SIGTERM and the
// shutdown request; "deaf" never reads its stdin; "noscreen" never answers screen requests; "crash" exits
// at once with a message on stderr.
func fakeProcess(mode string) int {
	if mode == "deaf" {
		time.Sleep(time.Hour)
		return 0
	}
	if mode == "crash" {
		fmt.Fprintln(os.Stderr, "crash: missing configuration")
		return 2
	}
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, syscall.SIGINT)
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	count := 0
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	respond := func(output string, ok bool) {
		send(map[string]any{"type": "response", "output": output, "success": ok})
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	reqs := make(chan []byte)
	go func() {
		defer close(reqs)
		for in.Scan() {
			reqs <- append([]byte(nil), in.Bytes()...)
		}
	}()
	for line := range reqs {
		var req struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			send(map[string]any{"type": "error", "message": "bad request: " + err.Error()})
			continue
		}
		switch req.Type {
		case "screen":
			if mode == "noscreen" {
				continue
			}
			content := "Counter: " + strconv.Itoa(count)
			if mode == "escapes" {
				content = "scr \x1b]52;c;ZXZpbA==\x07 \x1b[2J\x1b[8mhidden\x1b[0m \r\rZ"
			}
			send(map[string]any{"type": "screen", "content": content, "max_lines": 5})
			continue
		case "shutdown":
			if mode == "stubborn" {
				continue
			}
			return 0
		case "execute":
		default:
			send(map[string]any{"type": "error", "message": "unknown request type " + req.Type})
			continue
		}
		word, arg, _ := strings.Cut(req.Command, " ")
		switch word {
		case "inc":
			count++
			respond("ok", true)
		case "get":
			respond(strconv.Itoa(count), true)
		case "echo":
			respond(arg, true)
		case "sleep":
			<-ints
			respond("interrupted", false)
		case "hang":
			// SIGINT keeps going to ints, which nobody reads.
			time.Sleep(time.Hour)
		case "exit":
			code, _ := strconv.Atoi(arg)
			return code
		case "spin":
			// Processor time until a limit ends the process.
			for n := 0; ; n++ {
				spun = n
			}
		case "raw":
			// What a program meant for a terminal: sequences, a carriage
			// return and backspaces.
			send(map[string]any{"type": "output", "output": "out \x1b[31mred\x1b[0m\n"})
			if arg == "ask" {
				send(map[string]any{"type": "input", "prompt": "pass\x1b]0;title\x07word\x1b[2J? "})
				<-reqs
			}
			respond("A\x1b[2JB\x1b]0;title\x07C\rprogress 1\rprogress 2\b\bX", true)
		case "garbage":
			out.WriteString("hello from print debugging\n")
			out.Flush()
		case "big":
			n, _ := strconv.Atoi(arg)
			respond(strings.Repeat("b", n), true)
		case "stderr":
			fmt.Fprintln(os.Stderr, arg)
			return 4
		case "error":
			send(map[string]any{"type": "error", "message": arg})
		case "phased":
			f := strings.Fields(arg)
			send(map[string]any{"type": "output", "output": f[0] + "\n"})
			stopped := false
			for !stopped {
				if _, err := os.Stat(f[1]); err == nil {
					break
				}
				select {
				case <-ints:
					stopped = true
				case <-time.After(20 * time.Millisecond):
				}
			}
			if stopped {
				respond("interrupted", false)
			} else {
				respond(f[2], true)
			}
		case "ask", "asklong":
			if word == "asklong" {
				n, _ := strconv.Atoi(arg)
				arg = strings.Repeat("Q", n) + "?"
			} else {
				send(map[string]any{"type": "output", "output": arg})
			}
			send(map[string]any{"type": "input", "prompt": arg})
			select {
			case <-ints:
				respond("interrupted", false)
			case line, ok := <-reqs:
				var req struct {
					Type string  `json:"type"`
					Text *string `json:"text"`
					EOF  bool    `json:"eof"`
				}
				switch {
				case !ok || json.Unmarshal(line, &req) != nil || req.Type != "input":
					send(map[string]any{"type": "error", "message": "want an input request"})
				case req.EOF:
					respond("end of input", false)
				default:
					respond("got "+*req.Text, true)
				}
			}
		case "sh":
			out, err := exec.Command("sh", "-c", arg).CombinedOutput()
			respond(string(out), err == nil)
		case "flood":
			n, _ := strconv.Atoi(arg)
			var b strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			respond(b.String(), true)
		default:
			respond("unknown command: "+req.Command, false)
		}
	}
	return 0
}

// fakeVars are the environment variables that run the test binary as a
// fake process in mode. A race-enabled binary sleeps a second at exit
// unless told otherwise.
func fakeVars(mode string) map[string]string {
	return map[string]string{fakeEnvVar: mode, "GORACE": "atexit_sleep_ms=0"}
}
