package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/gateway"
)

// pidServer returns python3 and the path of testdata/pidserver.py, a
// server that writes its process id to DIR/NAME.pid.
func pidServer(t *testing.T) (py, script string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; the server is a Python script")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to tell which processes live")
	}
	script, err = filepath.Abs(filepath.Join("testdata", "pidserver.py"))
	if err != nil {
		t.Fatal(err)
	}
	return py, script
}

// stayServer runs pidserver.py as server name, writing to dir, without
// exiting at the end of its input; with wrapped, behind sh -c, which
// writes its own process id to dir/NAME-sh.pid.
func stayServer(py, script, dir, name string, wrapped bool, modes ...string) gateway.ServerConfig {
	args := append([]string{script, dir, name, "stay"}, modes...)
	if !wrapped {
		return gateway.ServerConfig{Name: name, Command: py, Args: args}
	}
	// "; true" keeps sh from replacing itself with python.
	line := `echo $$ > "$0/$1-sh.pid"; "$2" "$3" "$0" "$1" stay ` + strings.Join(modes, " ") + `; true`
	return gateway.ServerConfig{Name: name, Command: "sh", Args: []string{"-c", line, dir, name, py, script}}
}

// readPids reads dir/NAME.pid for each name.
func readPids(t *testing.T, dir string, names ...string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n+".pid"))
		pid, perr := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || perr != nil {
			t.Fatalf("%s.pid: %v %v", n, err, perr)
		}
		pids[n] = pid
	}
	return pids
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

// noneAlive fails for each process of pids that runs, and kills it.
func noneAlive(t *testing.T, pids map[string]int, after string) {
	t.Helper()
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) outlived %s", name, pid, after)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// started starts a gateway for cfgs, waits for every server to list its
// tools and returns it.
func started(t *testing.T, cfgs ...gateway.ServerConfig) *gateway.Gateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	g, err := gateway.New(ctx, cfgs, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, u := range g.Upstreams() {
		if err := u.Err(); err != nil || !u.Running() {
			t.Fatalf("server %s did not start: %v", u.Name(), err)
		}
	}
	return g
}

// TestCloseStopsEveryProcess: servers that do not exit at the end of
// their input, one of them behind sh -c, are all gone once Close returns:
// the servers are stopped together, and the whole of each, a wrapper's
// child too. Each one's stdin is closed first, its stdout still open: the
// goodbye it writes there as its input ends meets no closed pipe.
func TestCloseStopsEveryProcess(t *testing.T) {
	py, script := pidServer(t)
	dir := t.TempDir()
	g := started(t,
		stayServer(py, script, dir, "a", false),
		stayServer(py, script, dir, "b", false),
		stayServer(py, script, dir, "c", false),
		stayServer(py, script, dir, "w", true),
	)
	pids := readPids(t, dir, "a", "b", "c", "w", "w-sh")
	for name, pid := range pids {
		if !alive(pid) {
			t.Fatalf("%s (pid %d) is not running before Close", name, pid)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	noneAlive(t, pids, "Close")
	// Each got SIGTERM once the input of every one had ended: they were
	// stopped together, not one after another.
	for _, name := range []string{"a", "b", "c", "w"} {
		data, err := os.ReadFile(filepath.Join(dir, name+".term"))
		if got, want := string(data), "a b c w"; err != nil || got != want {
			t.Errorf("%s: when it got SIGTERM, the servers whose input had ended were %q (%v), want %q", name, got, err, want)
		}
	}
}

// TestCloseKillsWhatIgnoresSIGTERM: a server behind sh -c that ignores
// both the end of its input and SIGTERM is killed with its wrapper.
func TestCloseKillsWhatIgnoresSIGTERM(t *testing.T) {
	py, script := pidServer(t)
	dir := t.TempDir()
	g := started(t, stayServer(py, script, dir, "t", true, "noterm"))
	pids := readPids(t, dir, "t", "t-sh")
	if err := g.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	noneAlive(t, pids, "Close")
}

// helperEnv names the project a helper process (this test binary, run by
// TestServersDieWithTheGateway) starts a gateway for.
const helperEnv = "GATEWAY_TEST_HELPER_PROJECT"

// TestHelperProcess is not a test: run with helperEnv set, it starts a
// gateway for the project's .mcp.json, says "ready" once the servers
// listed their tools, and waits to be killed.
func TestHelperProcess(t *testing.T) {
	project := os.Getenv(helperEnv)
	if project == "" {
		return
	}
	cfgs, _, err := gateway.LoadConfigs(project, nil, nil)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	g, err := gateway.New(context.Background(), cfgs, gateway.Options{})
	if err == nil {
		err = g.Wait(context.Background())
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

// TestServersDieWithTheGateway: when the process that runs the gateway is
// killed (SIGKILL: it cannot stop them), the servers it started, which do
// not exit at the end of their input, die with it.
func TestServersDieWithTheGateway(t *testing.T) {
	py, script := pidServer(t)
	project := t.TempDir()
	conf := fmt.Sprintf(`{"mcpServers": {"a": {"command": %q, "args": [%q, %q, "a", "stay"]}, "b": {"command": %q, "args": [%q, %q, "b", "stay"]}}}`,
		py, script, project, py, script, project)
	if err := os.WriteFile(filepath.Join(project, gateway.ProjectConfig), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	helper.Env = append(os.Environ(), helperEnv+"="+project)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("the helper said %q; stderr:\n%s", line, stderr.String())
	}
	pids := readPids(t, project, "a", "b")
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	// The kernel signals them as the helper dies: a moment to be reaped.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pids["a"]) && !alive(pids["b"]) {
			break
		}
	}
	noneAlive(t, pids, "the gateway's process")
}

// TestCloseStopsStartOfACall: a server a call starts again (it died) is
// still starting when Close comes: Close waits for that start too, and
// the server is gone once it returns.
func TestCloseStopsStartOfACall(t *testing.T) {
	py, script := pidServer(t)
	dir := t.TempDir()
	g := started(t, stayServer(py, script, dir, "s", false, "slowagain"))
	first := readPids(t, dir, "s")["s"]
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	u := g.Upstreams()[0]
	for u.Running() {
		time.Sleep(10 * time.Millisecond)
	}
	called := make(chan error, 1)
	go func() {
		_, err := u.CallTool(context.Background(), "echo", json.RawMessage(`{}`))
		called <- err
	}()
	var again int
	for deadline := time.Now().Add(time.Minute); again == 0 || again == first; {
		select {
		case err := <-called:
			t.Fatalf("the call ended before the server started again: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the call did not start the server again within a minute")
		}
		if data, err := os.ReadFile(filepath.Join(dir, "s.pid")); err == nil {
			again, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
	}
	g.Close()
	noneAlive(t, map[string]int{"s started again": again}, "Close")
}
