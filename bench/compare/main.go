package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// config is what the command line sets.
type config struct {
	peers   string // directory whose node_modules holds the npm peers
	scripts string // directory holding peer.cjs and peer_pexpect.py
	unfold  string // the unfold binary, for the serve workload
	python  string // the Python with pexpect
	rounds  int
	out     string
	only    []string
	command string // how run.sh was invoked, for the report
	tmp     string
}

// row is one side of one workload.
type row struct {
	label string
	s     sample
	// per is the unit one iteration covers ("render", "command").
	per string
}

// ratio compares two rows: num's median over den's.
type ratio struct {
	label    string
	num, den *row
	target   string
}

// table is one workload's results.
type table struct {
	name   string
	desc   string
	rows   []*row
	ratios []ratio
	notes  []string
}

// workloadDef names a workload and the function that runs it.
type workloadDef struct {
	name string
	run  func(*config) (*table, error)
}

var workloads = []workloadDef{
	{"render", runRender},
	{"budget", runBudget},
	{"scale", runScale},
	{"tokens", runTokens},
	{"bash", runBash},
	{"editor", runEditor},
	{"serve", runServe},
	{"skills", runSkills},
	{"startup", runStartup},
}

func main() {
	var cfg config
	var only string
	flag.StringVar(&cfg.peers, "peers", "", "the `DIR` run.sh installed the npm peers into (DIR/node_modules)")
	flag.StringVar(&cfg.scripts, "scripts", "bench/compare", "the `DIR` holding peer.cjs and peer_pexpect.py")
	flag.StringVar(&cfg.unfold, "unfold", "", "the unfold `binary` for the serve and startup workloads")
	flag.StringVar(&cfg.python, "python", "/usr/bin/python3", "the Python with pexpect installed")
	flag.IntVar(&cfg.rounds, "rounds", 5, "how many rounds each workload runs")
	flag.StringVar(&cfg.out, "out", "", "write the report as markdown to `FILE` (bench/RESULTS.md)")
	flag.StringVar(&only, "only", "", "comma-separated workloads to run (default all: render,budget,scale,tokens,bash,editor,serve,skills,startup)")
	flag.StringVar(&cfg.command, "command", "", "the command that started the run, recorded in the report")
	flag.Parse()
	if cfg.rounds < 1 {
		fatalf("-rounds %d: want 1 or more", cfg.rounds)
	}
	if only != "" {
		cfg.only = strings.Split(only, ",")
		for _, n := range cfg.only {
			if !slices.ContainsFunc(workloads, func(w workloadDef) bool { return w.name == n }) {
				fatalf("-only: unknown workload %q (want render, budget, scale, tokens, bash, editor, serve, skills or startup)", n)
			}
		}
	}
	abs, err := filepath.Abs(cfg.scripts)
	if err != nil {
		fatalf("%v", err)
	}
	cfg.scripts = abs
	tmp, err := os.MkdirTemp("", "unfold-compare-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	cfg.tmp = tmp

	machineBefore := machine()
	start := time.Now()
	var tables []*table
	var failed []string
	for _, w := range workloads {
		if cfg.only != nil && !slices.Contains(cfg.only, w.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "compare: %s (%d rounds)\n", w.name, cfg.rounds)
		t, err := w.run(&cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "compare: %s: %v\n", w.name, err)
			failed = append(failed, fmt.Sprintf("%s: %v", w.name, err))
			continue
		}
		printTable(os.Stdout, t)
		tables = append(tables, t)
	}
	elapsed := time.Since(start)
	if cfg.out != "" {
		kept := keptSections(cfg.out)
		f, err := os.Create(cfg.out)
		if err != nil {
			fatalf("%v", err)
		}
		writeReport(f, &cfg, machineBefore, loadavg(), start, elapsed, tables, failed)
		_, err = f.WriteString(kept)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fatalf("%v", err)
		}
		fmt.Fprintf(os.Stderr, "compare: wrote %s\n", cfg.out)
	}
	if len(failed) > 0 {
		os.Exit(1)
	}
}

// keptMarker starts the part of the report that other benchmarks write
// (go test -bench runs that need the module's internal packages); a new
// report keeps it.
const keptMarker = "<!-- kept by compare: sections below come from go test benchmarks -->"

// keptSections returns the part of the report at file from keptMarker on,
// or "".
func keptSections(file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	_, after, ok := strings.Cut(string(data), keptMarker)
	if !ok {
		return ""
	}
	return "\n" + keptMarker + after
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...)
	os.Exit(2)
}

// nodeWorker starts peer.cjs with the npm peers on NODE_PATH.
func nodeWorker(cfg *config) (*worker, error) {
	if cfg.peers == "" {
		return nil, errors.New("no -peers directory: run bench/compare/run.sh, which installs the npm peers")
	}
	cmd := exec.Command("node", filepath.Join(cfg.scripts, "peer.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(cfg.peers, "node_modules"))
	return startWorker("node peer", cmd)
}

// loadWorkload writes w where the Node.js worker reads it.
func loadWorkload(cfg *config, node *worker, w *workload) error {
	file := filepath.Join(cfg.tmp, "workload.json")
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return err
	}
	var ok struct{}
	return node.call(map[string]any{"op": "load", "file": file}, &ok)
}

// peerBatch is a Node.js worker's reply to a timed request.
type peerBatch struct {
	NS         []int64 `json:"ns"`
	Bytes      int     `json:"bytes"`
	Tokens     int     `json:"tokens"`
	TextTokens int     `json:"textTokens"`
	Count      int     `json:"count"`
}

// rotate runs the sides of one round, starting at a different side each
// round so that none always runs first.
// A negative round (the warm-up) starts at the first.
func rotate(round int, sides ...func() error) error {
	round = max(round, 0)
	for i := range sides {
		if err := sides[(round+i)%len(sides)](); err != nil {
			return err
		}
	}
	return nil
}

func printTable(w io.Writer, t *table) {
	fmt.Fprintf(w, "\n== %s: %s\n", t.name, t.desc)
	for _, r := range t.rows {
		lo, hi := r.s.spread()
		fmt.Fprintf(w, "  %-44s median %10s  rounds %s..%s  p99 %s  n=%d\n", r.label, human(r.s.median()), human(lo), human(hi), human(r.s.p99()), r.s.count())
	}
	for _, q := range t.ratios {
		fmt.Fprintf(w, "  %-44s %.2fx  %s\n", q.label, float64(q.num.s.median())/float64(q.den.s.median()), q.target)
	}
	for _, n := range t.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}
