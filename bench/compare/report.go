package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// machine describes the machine and the tools, for the report.
func machine() []string {
	var lines []string
	add := func(k, v string) {
		if v = strings.TrimSpace(v); v != "" {
			lines = append(lines, k+": "+v)
		}
	}
	add("kernel", run("uname", "-srm"))
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, v, _ := strings.Cut(l, ":")
				add("cpu", v)
				break
			}
		}
	}
	add("cores", fmt.Sprint(runtime.NumCPU()))
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		add("memory", strings.TrimPrefix(strings.SplitN(string(data), "\n", 2)[0], "MemTotal:"))
	}
	add("load average at start", loadavg())
	add("go", runtime.Version())
	add("node", run("node", "--version"))
	add("bash", strings.SplitN(run("bash", "--version"), "\n", 2)[0])
	return lines
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func run(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// peerVersions reads the installed peers' versions.
func peerVersions(cfg *config) []string {
	var out []string
	for _, p := range []string{"@vscode/prompt-tsx", "gpt-tokenizer", "js-tiktoken", "js-yaml"} {
		data, err := os.ReadFile(filepath.Join(cfg.peers, "node_modules", p, "package.json"))
		if err != nil {
			continue
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(data, &pkg) == nil {
			out = append(out, p+" "+pkg.Version+" (npm)")
		}
	}
	if v := run(cfg.python, "-c", "import pexpect, sys; print(pexpect.__version__, 'on Python', sys.version.split()[0])"); v != "" {
		out = append(out, "pexpect "+v+" (Debian python3-pexpect)")
	}
	return out
}

func writeReport(w io.Writer, cfg *config, mach []string, loadEnd string, start time.Time, elapsed time.Duration, tables []*table, failed []string) {
	fmt.Fprintf(w, "# unfold side by side\n\n")
	fmt.Fprintf(w, "Written by `bench/compare/run.sh` on %s (%s, %d rounds). Numbers from a shared, noisy machine: compare the ratios, which come from one run where the sides alternate, more than the absolute times.\n\n",
		start.UTC().Format("2006-01-02 15:04 MST"), elapsed.Round(time.Second), cfg.rounds)
	fmt.Fprintf(w, "## Machine\n\n")
	for _, l := range mach {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintf(w, "- load average at end: %s\n", loadEnd)
	for _, p := range peerVersions(cfg) {
		fmt.Fprintf(w, "- peer: %s\n", p)
	}
	fmt.Fprintf(w, "\n## Commands\n\n```\n")
	if cfg.command != "" {
		fmt.Fprintf(w, "%s\n", cfg.command)
	}
	args := []string{filepath.Base(os.Args[0])}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		args = append(args, a)
	}
	fmt.Fprintf(w, "%s\n```\n\n", strings.Join(args, " "))
	fmt.Fprintf(w, "Median is over every iteration of every round; \"rounds\" is the lowest and highest per-round median; a ratio is the first side's median over the second's (above 1 means unfold is faster, except where unfold is the first side).\n\n")
	for _, t := range tables {
		fmt.Fprintf(w, "## %s\n\n%s.\n\n", t.name, t.desc)
		fmt.Fprintf(w, "| side | median | rounds (low .. high) | p99 | iterations |\n| --- | ---: | ---: | ---: | ---: |\n")
		for _, r := range t.rows {
			lo, hi := r.s.spread()
			fmt.Fprintf(w, "| %s | %s | %s .. %s | %s | %d |\n", r.label, human(r.s.median()), human(lo), human(hi), human(r.s.p99()), r.s.count())
		}
		if len(t.ratios) > 0 {
			fmt.Fprintf(w, "\n| ratio | value | target |\n| --- | ---: | --- |\n")
			for _, q := range t.ratios {
				fmt.Fprintf(w, "| %s | %.2fx | %s |\n", q.label, float64(q.num.s.median())/float64(q.den.s.median()), strings.TrimPrefix(q.target, "target: "))
			}
		}
		if len(t.notes) > 0 {
			fmt.Fprintln(w)
			for _, n := range t.notes {
				fmt.Fprintf(w, "- %s\n", n)
			}
		}
		fmt.Fprintln(w)
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "## Workloads that failed\n\n")
		for _, f := range failed {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
}
