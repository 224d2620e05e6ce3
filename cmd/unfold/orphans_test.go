//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// orphanEnvs are a process environment and an interactive program that
// each start `sleep 1000` on "spawn" and then die on "die" or "quit",
// leaving the sleep an orphan.
var orphanEnvs = map[string]string{
	"env/pe.json": `{"kind":"process","executable":"sh","args":["env/pe.sh"],"description":"Spawns and dies"}`,
	"env/pe.sh": `while IFS= read -r line; do
  case "$line" in
    *'"type":"screen"'*) printf '{"type":"screen","content":"pe","max_lines":3}\n' ;;
    *'"command":"spawn"'*) sleep 1000 </dev/null >/dev/null 2>&1 & printf '{"type":"response","output":"child %d","success":true}\n' "$!" ;;
    *'"command":"die"'*) exit 3 ;;
    *'"type":"shutdown"'*) exit 0 ;;
    *) printf '{"type":"error","message":"unknown request"}\n' ;;
  esac
done
`,
	"env/fk.json": `{"kind":"interactive","command":"python3 env/fk.py","prompt":"fk> $","description":"Spawns and quits"}`,
	"env/fk.py": `import subprocess, sys
while True:
    sys.stdout.write("fk> ")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line or line.strip() == "quit":
        sys.exit(0)
    if line.strip() == "spawn":
        print("child %d" % subprocess.Popen(["sleep", "1000"]).pid)
`,
}

// TestServeReapsOrphans: processes that environments' programs leave
// behind when they die or quit, and that unfold kills on restart, or that
// end by themselves (a double fork in bash), do not stay zombies: unfold
// adopts and reaps them. The test process stands in for a PID 1 that does
// not reap: it is a subreaper too, so what unfold does not adopt comes to
// it and stays a zombie. The programs' own exit statuses still reach
// unfold (exit status 3), so reaping never takes a child an exec.Cmd waits
// for.
func TestServeReapsOrphans(t *testing.T) {
	needBash(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skip("cannot become a subreaper:", err)
	}
	var sleeps []int
	t.Cleanup(func() {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		for _, pid := range sleeps {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	})
	project := t.TempDir()
	for name, text := range orphanEnvs {
		path := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd, stdin, stdout, stderr := startBinary(t, "serve", "--builtins", "bash", "--project", project)
	unfold := cmd.Process.Pid
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	send := func(env, command string) string {
		t.Helper()
		fmt.Fprintf(stdin, `{"type":"command","environment":%q,"command":%q,"timeout":30}`+"\n", env, command)
		if !lines.Scan() {
			t.Fatalf("%s: %s: no response; stderr:\n%s", env, command, stderr.String())
		}
		var msg struct {
			Response struct{ Output string }
		}
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
			t.Fatalf("%s: %s: %v in %s", env, command, err, lines.Text())
		}
		return msg.Response.Output
	}
	child := regexp.MustCompile(`child (\d+)`)
	spawn := func(env string) {
		t.Helper()
		out := send(env, "spawn")
		m := child.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: spawn answered %q; want the child's process id", env, out)
		}
		pid, _ := strconv.Atoi(m[1])
		sleeps = append(sleeps, pid)
	}
	for range 3 {
		spawn("pe")
		if out := send("pe", "die"); !strings.Contains(out, "exit status 3") {
			t.Errorf("pe: die answered %q; want it to say exit status 3", out)
		}
		spawn("fk")
		send("fk", "quit")
	}
	spawn("pe")
	spawn("fk")
	// A double fork: the sleep is re-parented, then ends by itself.
	if out := send("bash", "(sleep 0.2 &); echo forked"); !strings.Contains(out, "forked") {
		t.Errorf("bash answered %q; want forked", out)
	}
	// Each restart killed the last generation's sleep; the double fork's
	// ends after 0.2 s. None may stay a zombie, under unfold or here.
	noZombies(t, unfold, sleeps[:len(sleeps)-2])
	if out := send("bash", "echo still here"); !strings.Contains(out, "still here") {
		t.Errorf("bash answered %q after the restarts; want it to work", out)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve: %v; stderr:\n%s", err, stderr.String())
	}
	noZombies(t, unfold, sleeps)
}

// noZombies waits until none of pids, and no child of unfold or of this
// process that is sleep, is a zombie; it fails naming those that stay.
func noZombies(t *testing.T, unfold int, pids []int) {
	t.Helper()
	self := os.Getpid()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		out, err := exec.Command("ps", "-eo", "pid=,ppid=,stat=,comm=").Output()
		if err != nil {
			t.Skip("ps is not available:", err)
		}
		for line := range strings.Lines(string(out)) {
			f := strings.Fields(line)
			if len(f) < 4 || !strings.HasPrefix(f[2], "Z") {
				continue
			}
			pid, _ := strconv.Atoi(f[0])
			ppid, _ := strconv.Atoi(f[1])
			known := false
			for _, p := range pids {
				known = known || p == pid
			}
			if known || (f[3] == "sleep" && (ppid == unfold || ppid == self)) {
				left = append(left, strings.Join(f, " "))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("zombies left (pid ppid stat comm): %s", strings.Join(left, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
