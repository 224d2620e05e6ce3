//go:build unix

package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxLine bounds one response line read from the server.
const maxLine = 64 << 20

func main() {
	bin := flag.String("unfold", "", "the unfold `binary` to soak")
	n := flag.Int("n", 100000, "how many lines to send")
	samples := flag.Int("samples", 20, "how many times to sample memory, threads and fds")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "soak: -unfold is required: go build -o /tmp/unfold ./cmd/unfold")
		os.Exit(2)
	}
	failed := false
	check := func(ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark, failed = "FAIL", true
		}
		fmt.Printf("%s %s\n", mark, fmt.Sprintf(format, args...))
	}

	short, err := soak(*bin, 2000, 2, true)
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: short run: %v\n", err)
		os.Exit(1)
	}
	t0 := time.Now()
	long, err := soak(*bin, *n, *samples, true)
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: long run: %v\n", err)
		os.Exit(1)
	}
	elapsed := time.Since(t0)
	clean, err := soak(*bin, 500, 1, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: clean run: %v\n", err)
		os.Exit(1)
	}

	fmt.Printf("soak: %d lines in %s (%.0f lines/s)\n\n", *n, elapsed.Round(time.Millisecond), float64(*n)/elapsed.Seconds())
	fmt.Printf("%10s %12s %14s %8s %6s %9s\n", "lines", "server RSS", "children RSS", "threads", "fds", "children")
	for _, s := range long.samples {
		fmt.Printf("%10d %9.1f MB %11.1f MB %8d %6d %9d\n", s.lines, mb(s.rss), mb(s.childRSS), s.threads, s.fds, s.children)
	}
	fmt.Println()
	check(long.answered == *n && long.wrong == 0, "every line answered as expected: %d of %d answered, %d wrong", long.answered, *n, long.wrong)
	first, mid, last := long.samples[0], long.samples[len(long.samples)/2], long.samples[len(long.samples)-1]
	check(last.rss <= mid.rss+mid.rss/4+4<<20, "server memory levels off: %.1f MB at the middle, %.1f MB at the end", mb(mid.rss), mb(last.rss))
	check(last.childRSS <= mid.childRSS+mid.childRSS/4+4<<20, "environment processes' memory levels off: %.1f MB at the middle, %.1f MB at the end", mb(mid.childRSS), mb(last.childRSS))
	check(last.fds <= first.fds, "no fd growth: %d at the first sample, %d at the end", first.fds, last.fds)
	check(last.threads <= first.threads+4, "no thread growth: %d at the first sample, %d at the end", first.threads, last.threads)
	check(last.children <= first.children, "no process growth: %d children at the first sample, %d at the end", first.children, last.children)
	check(long.goroutines > 0 && long.goroutines <= short.goroutines+2, "no goroutine growth: %d after %d lines, %d after %d lines", short.goroutines, 2000, long.goroutines, *n)
	check(clean.exit == 0 && clean.leftChildren == 0, "end of input: exit status %d, %d environment processes left", clean.exit, clean.leftChildren)
	if failed {
		os.Exit(1)
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// sample is one look at the server.
type sample struct {
	lines         int
	rss, childRSS int64
	threads, fds  int
	children      int
}

type result struct {
	answered, wrong int
	samples         []sample
	goroutines      int // from the dump, when dumped
	exit            int
	leftChildren    int
}

// line returns the i-th line of the mixed session and what its answer
// must contain.
func line(i int) (string, string) {
	ok, fail, protoErr := `"success":true`, `"success":false`, `"type":"error"`
	switch i % 20 {
	case 0:
		return cmd("bash", fmt.Sprintf("echo line %d", i)), ok
	case 1:
		return cmd("bash", "true"), ok
	case 2:
		return cmd("bash", "x=$((x+1)); cd sub; cd ..; printf '%s\\n' \"$x\" > counter.txt"), ok
	case 3:
		return cmd("bash", "false"), fail
	case 4:
		return cmd("bash", "seq 1 200 | tail -n 3"), ok
	case 5:
		return cmd("python", fmt.Sprintf("n = %d", i)), ok
	case 6:
		return cmd("python", "n * 2"), ok
	case 7:
		return cmd("python", "items = [str(k) for k in range(500)]; len(items)"), ok
	case 8:
		return cmd("python", "raise ValueError('soak')"), fail
	case 9:
		return cmd("python", "print(open('counter.txt').read().strip())"), ok
	case 10:
		return cmd("editor", `search "beta" *.txt`), ok
	case 11:
		return cmd("editor", `view missing.txt /^a$/ /^b$/`), fail
	case 12:
		return cmd("editor", "close 999"), fail
	case 13:
		return cmd("editor", "edit notes.txt 1-1\nbeta"), fail // no view shows it
	case 14:
		return "not json", protoErr
	case 15:
		return `{"type":"command","environment":"bash"}`, protoErr
	case 16:
		return cmd("nowhere", "ls"), "Unknown environment: nowhere"
	case 17:
		return `{"type":"command","environment":"bash","command":"true","extra":` + strings.Repeat("1", 2000) + `}`, `"type"`
	case 18:
		return cmd("bash", "echo \"$(printf 'é€😀%.0s' {1..50})\""), ok
	default:
		return "", protoErr
	}
}

func cmd(env, command string) string {
	return fmt.Sprintf(`{"type":"command","environment":%s,"command":%s}`, strconv.Quote(env), strconv.Quote(command))
}

// soak runs one server through n lines, sampling `samples` times; with
// dump it ends the server with SIGQUIT and counts the goroutines in the
// dump, otherwise it closes stdin and checks the shutdown.
func soak(bin string, n, samples int, dump bool) (*result, error) {
	dir, err := os.MkdirTemp("", "unfold-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		return nil, err
	}
	c := exec.Command(bin, "serve", "--project", dir)
	c.Env = append(os.Environ(), "GOTRACEBACK=all")
	var stderr bytes.Buffer
	c.Stderr = &capped{b: &stderr, max: 32 << 20}
	in, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	pid := c.Process.Pid
	res := &result{}
	br := bufio.NewReaderSize(out, 1<<20)
	every := max(n/max(samples, 1), 1)
	for i := 0; i < n; i++ {
		l, want := line(i)
		if _, err := io.WriteString(in, l+"\n"); err != nil {
			return nil, fmt.Errorf("line %d: write: %w", i, err)
		}
		resp, err := readLine(br)
		if err != nil {
			return nil, fmt.Errorf("line %d (%.80s): no answer: %w (stderr: %.2000s)", i, l, err, stderr.String())
		}
		res.answered++
		if !bytes.Contains(resp, []byte(want)) {
			res.wrong++
			if res.wrong <= 5 {
				fmt.Fprintf(os.Stderr, "soak: line %d %.100q: got %.300q, want %q in it\n", i, l, resp, want)
			}
		}
		if (i+1)%every == 0 {
			res.samples = append(res.samples, look(pid, i+1))
		}
	}
	if dump {
		// The dump is taken while the server serves: SIGQUIT ends it,
		// and only then does its input end.
		go io.Copy(io.Discard, br)
		_ = c.Process.Signal(syscall.SIGQUIT)
		_ = c.Wait()
		in.Close()
		res.goroutines = len(regexp.MustCompile(`(?m)^goroutine \d+ .*\[`).FindAllIndex(stderr.Bytes(), -1))
		return res, nil
	}
	before := childPids(pid)
	in.Close()
	go io.Copy(io.Discard, br)
	err = c.Wait()
	res.exit = c.ProcessState.ExitCode()
	time.Sleep(200 * time.Millisecond)
	for _, p := range before {
		if syscall.Kill(p, 0) == nil {
			res.leftChildren++
		}
	}
	_ = err
	return res, nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			return line, nil
		}
		if err != bufio.ErrBufferFull || len(line) > maxLine {
			return line, err
		}
	}
}

// look samples the server's RSS, threads and fds, and its children's RSS.
func look(pid, lines int) sample {
	s := sample{lines: lines}
	s.rss, s.threads = status(pid)
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		s.fds = len(ents)
	}
	for _, c := range descendants(pid) {
		rss, _ := status(c)
		s.childRSS += rss
		s.children++
	}
	return s
}

// status reads VmRSS (bytes) and Threads from /proc/pid/status.
func status(pid int) (rss int64, threads int) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			rss = kb << 10
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		}
	}
	return rss, threads
}

// childPids lists the direct children of pid.
func childPids(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses.
		i := bytes.LastIndexByte(data, ')')
		f := strings.Fields(string(data[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// descendants lists every process below pid.
func descendants(pid int) []int {
	var out []int
	for _, c := range childPids(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex // guards b
	b   *bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
