//go:build linux

package bash_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// need skips the test when a program it runs is missing.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
}

// waitsFor fails the test unless resp says the command waits for input
// at a prompt that ends with prompt.
func waitsFor(t *testing.T, what string, resp envs.Response, prompt string) {
	t.Helper()
	if !resp.Running || !resp.Waiting || !strings.HasSuffix(resp.Prompt, prompt) {
		t.Fatalf("%s: got %+v, want it waiting for input at %q", what, resp, prompt)
	}
}

// TestInterruptREPL: Ctrl-C, or a hard limit, given to a REPL started from
// the shell (python3, sqlite3, node, a nested bash), whether it runs
// something or waits at its prompt, stops what runs, as in a terminal: the
// REPL handles it and is back at its prompt, where the response leaves it,
// waiting for input, its state kept, rather than have it killed.
func TestInterruptREPL(t *testing.T) {
	for _, c := range []struct {
		name, start, prompt string
		set, slow, check    string
		want                string
	}{
		{"python3", "python3 -q", ">>>", "x = 42", "import time; time.sleep(100)", "print(x)", "42"},
		{"sqlite3", "sqlite3 -interactive", "sqlite>", "create table t(a); insert into t values (42);",
			"with recursive c(n) as (select 1 union all select n+1 from c) select count(*) from c;", "select a from t;", "42"},
		{"node", "node", ">", "var x = 42", "while (true) {}", "x", "42"},
		{"nested bash", "PS1='inner$ ' bash --norc --noprofile -i", "inner$", "x=42", "sleep 100", "echo $x", "42"},
	} {
		t.Run(c.name, func(t *testing.T) {
			need(t, strings.Fields(strings.TrimPrefix(c.start, "PS1='inner$ ' "))[0])
			s := newShell(t)
			run(t, s, "outer=kept")
			prompt := c.prompt
			waitsFor(t, "start", run(t, s, c.start), prompt)
			waitsFor(t, "set", run(t, s, c.set), prompt)
			for _, how := range []string{"C-c while it runs", "hard limit", "C-c at its prompt"} {
				var resp envs.Response
				switch how {
				case "C-c while it runs":
					ctx, cancel := context.WithTimeout(context.Background(), quick)
					r, err := s.ExecuteLimited(ctx, c.slow, envs.Limits{Quiet: 500 * time.Millisecond})
					cancel()
					if err != nil || !r.Running || r.Waiting {
						t.Fatalf("%s: got %+v, %v, want it running", c.slow, r, err)
					}
					resp = run(t, s, envs.Interrupt)
				case "hard limit":
					resp = runWithin(t, s, 500*time.Millisecond, c.slow)
				default:
					resp = run(t, s, envs.Interrupt)
				}
				waitsFor(t, how, resp, prompt)
				if !strings.Contains(resp.Output, "Interrupted it with Ctrl-C: the program handled it and waits for input again") ||
					strings.Contains(resp.Output, "It ignored") {
					t.Errorf("%s: got %q, want a note that the program handled Ctrl-C and waits again, and no signal beyond it", how, resp.Output)
				}
				if resp := run(t, s, c.check); !resp.Waiting || !strings.Contains(resp.Output, c.want) {
					t.Fatalf("%s, then %s: got %+v, want %s from the same REPL", how, c.check, resp, c.want)
				}
			}
			if strings.Contains(c.name, "bash") {
				// Ctrl-C typed at a nested shell's prompt is echoed as ^C
				// once per signal: one, not a SIGINT sent again and again.
				resp := run(t, s, envs.Interrupt)
				if n := strings.Count(resp.Output, "^C"); n > 1 {
					t.Errorf("C-c at the nested prompt: got %q, want at most one ^C", resp.Output)
				}
			}
			run(t, s, envs.EndOfInput)
			if resp := run(t, s, envs.Interrupt); resp.Running {
				run(t, s, envs.Interrupt)
			}
			want(t, s, "echo $outer", "kept", true)
		})
	}
}

// TestInterruptPager: a pager redraws its prompt on Ctrl-C and still waits
// for a key: the first C-c leaves it waiting, saying so; a second one in a
// row ends it (SIGTERM), so C-c always gets out in the end.
func TestInterruptPager(t *testing.T) {
	need(t, "less", "seq")
	s := newShell(t)
	resp := run(t, s, "seq 1 1000 | less -+F")
	if !resp.Waiting {
		t.Fatalf("less: got %+v, want it waiting for a key", resp)
	}
	resp = run(t, s, envs.Interrupt)
	if !resp.Waiting || !strings.Contains(resp.Output, "Send C-c again, with nothing typed between, to end it (SIGTERM).") {
		t.Fatalf("C-c to less: got %+v, want it waiting again, with how to end it", resp)
	}
	resp = run(t, s, envs.Interrupt)
	if resp.Running || !strings.Contains(resp.Output, "It handled Ctrl-C and went back to its prompt again, so this second "+envs.Interrupt+" sent SIGTERM to its process group and it ended.") {
		t.Errorf("C-c again: got %+v, want less ended by SIGTERM, the note saying it had handled Ctrl-C", resp)
	}
	want(t, s, "echo alive", "alive", true)
}

// TestEventLoopQuestion: a question asked by a program that reads its
// terminal in an event loop (node's readline, as npm init and inquirer
// prompts do) is seen waiting at once, an empty command sees it waiting
// still, and the answer is typed to it.
func TestEventLoopQuestion(t *testing.T) {
	need(t, "node")
	s := newShell(t)
	for _, c := range []struct{ name, script, reply string }{
		{"readline", "require('readline').createInterface({input: process.stdin, output: process.stdout}).question('Project name? ', a => { console.log('hi', a); process.exit(0) })", "hi myproj"},
		{"stdin data", "process.stdout.write('Project name? '); process.stdin.once('data', a => { console.log('hi', String(a).trim()); process.exit(0) })", "hi myproj"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), quick)
			defer cancel()
			// A quiet limit far beyond the test: only the wait for input
			// gives control back early.
			resp, err := s.ExecuteLimited(ctx, "node -e \""+c.script+"\"", envs.Limits{Quiet: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			waitsFor(t, "node", resp, "Project name?")
			// An empty command keeps waiting: the question, shown by the
			// response before, is still the output's unfinished line.
			ctx, cancel = context.WithTimeout(context.Background(), quick)
			defer cancel()
			if resp, err = s.ExecuteLimited(ctx, "", envs.Limits{Quiet: time.Hour}); err != nil {
				t.Fatal(err)
			}
			waitsFor(t, "node, sent an empty command", resp, "Project name?")
			if resp := run(t, s, "myproj"); resp.Running || !resp.Success || !strings.HasSuffix(resp.Output, c.reply) {
				t.Errorf("answer: got %+v, want it done with %q", resp, c.reply)
			}
		})
	}
}

// TestWatchingNotAsking: a program that watches its terminal in an event
// loop as it works is not asking anything: node once it has read an answer
// and closed its readline (libuv keeps the terminal in its epoll set), as
// npm init and create-* tools do between questions; script, which
// forwards the terminal to the program it runs, as ssh and docker run -it
// do. While such a program works, having printed whole lines, the response
// says it runs, and text sent is not typed, where it would answer the next
// question unseen; that question, when it comes, is seen and answered.
func TestWatchingNotAsking(t *testing.T) {
	need(t, "node", "script")
	dir := t.TempDir()
	built := filepath.Join(dir, "built")
	files := map[string]string{
		"ask.js": `const readline = require('readline'), fs = require('fs');
let rl = readline.createInterface({input: process.stdin, output: process.stdout});
rl.question('Project name? ', a => {
  rl.close();
  console.log('downloading template...');
  const tick = setInterval(() => {
    if (!fs.existsSync(process.argv[2])) return;
    clearInterval(tick);
    rl = readline.createInterface({input: process.stdin, output: process.stdout});
    rl.question('Remove existing files and continue? (y/N) ', b => { console.log('ANSWER2=[' + b + ']'); rl.close() });
  }, 50);
});
`,
		"build.sh": `echo building...
while [ ! -e "$1" ]; do sleep 0.05; done
read -p "Deploy to production? " a
echo "a=$a"
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, command, first, answer, working, question, reply string }{
		{"node after a question", "node " + filepath.Join(dir, "ask.js") + " " + built, "Project name?", "myproj", "downloading template...", "Remove existing files and continue? (y/N)", "ANSWER2=[y]"},
		{"script", "script -qc 'bash " + filepath.Join(dir, "build.sh") + " " + built + "' /dev/null", "", "", "building...", "Deploy to production?", "a=y"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(built)
			s := newShell(t)
			limited := func(command string, quiet time.Duration) envs.Response {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), quick)
				defer cancel()
				resp, err := s.ExecuteLimited(ctx, command, envs.Limits{Quiet: quiet})
				if err != nil {
					t.Fatalf("Execute(%q): %v", command, err)
				}
				return resp
			}
			resp := limited(c.command, time.Second)
			if c.first != "" {
				waitsFor(t, "the first question", resp, c.first)
				resp = limited(c.answer, time.Second)
			}
			if !resp.Running || resp.Waiting || !strings.Contains(resp.Output, c.working) {
				t.Fatalf("at work: got %+v, want it running, not waiting, after %q", resp, c.working)
			}
			if resp = limited("y", time.Second); !resp.Running || resp.Waiting || !strings.Contains(resp.Output, envs.NotReadingNote()) {
				t.Fatalf("text sent while it works: got %+v, want it not typed: %q", resp, envs.NotReadingNote())
			}
			if err := os.WriteFile(built, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			// A quiet limit far beyond the test: only the question gives
			// control back.
			waitsFor(t, "the question after the work", limited("", time.Hour), c.question)
			if resp := run(t, s, "y"); resp.Running || !resp.Success || !strings.HasSuffix(resp.Output, c.reply) {
				t.Errorf("answer: got %+v, want it done with %q", resp, c.reply)
			}
		})
	}
}
