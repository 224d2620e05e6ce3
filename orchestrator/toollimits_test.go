package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/tools"
)

// TestCommandInputTagsFollowDescriptions: the description tags of the
// limit fields of CommandInput are the descriptions limitTexts fills in,
// with the package defaults, so an environment with its own limits
// describes its fields in the words of the tags.
func TestCommandInputTagsFollowDescriptions(t *testing.T) {
	typ := reflect.TypeFor[CommandInput]()
	for _, tc := range []struct{ field, format, dflt string }{
		{"Timeout", timeoutDesc, strconv.FormatFloat(envs.DefaultWait.Seconds(), 'f', -1, 64)},
		{"Quiet", quietDesc, strconv.FormatFloat(envs.DefaultQuiet.Seconds(), 'f', -1, 64)},
		{"Budget", budgetDesc, strconv.Itoa(envs.DefaultBudget)},
	} {
		f, ok := typ.FieldByName(tc.field)
		if !ok {
			t.Fatalf("CommandInput has no field %s", tc.field)
		}
		if got, want := f.Tag.Get("description"), fmt.Sprintf(tc.format, "default "+tc.dflt); got != want {
			t.Errorf("%s tag:\n got %q\nwant %q", tc.field, got, want)
		}
	}
}

// TestCommandToolNamesLimits: an environment's command tool says the
// limits that environment has, from its spec file, its registration or
// the orchestrator's output budget, and says the defaults in the words it
// always did when it has those.
func TestCommandToolNamesLimits(t *testing.T) {
	const defaultDesc = "Run a command in the e environment and return its output. Control comes back after 30s without new output, or at the timeout, while the command runs on: then send an empty command to wait, C-c to interrupt it, or text to answer it when it waits for input. Its section shows its state and the commands it accepts."
	defaults := map[string]string{
		"timeout": "Seconds after which control comes back while the command runs on (default 120); with hard, the command is interrupted then instead.",
		"hard":    "Interrupt the command when the timeout passes instead of giving control back.",
		"quiet":   "Seconds without new output after which control comes back while the command runs on (default 30).",
		"budget":  "Tokens the output may take before its middle is left out and the whole output saved to a file (default 8000).",
	}
	for _, tc := range []struct {
		name   string
		spec   string // a process spec file for e; "" registers e by code
		reg    []RegisterOption
		opts   []Option
		desc   string
		fields map[string]string // what differs from defaults
	}{
		{name: "defaults", desc: defaultDesc},
		{name: "default_spec", spec: `{"kind":"process","executable":"sh","description":"d"}`, desc: defaultDesc},
		{name: "hard_spec", spec: `{"kind":"process","executable":"sh","description":"d","timeout":2,"hard":true,"quiet":600}`,
			desc: "Run a command in the e environment and return its output. A command is interrupted after 2s. Control comes back after 10m0s without new output while it runs on: then send an empty command to wait, C-c to interrupt it, or text to answer it when it waits for input. Its section shows its state and the commands it accepts.",
			fields: map[string]string{
				"timeout": "Seconds after which the command is interrupted: at most 2 (this environment's limit), the default.",
				"hard":    "Interrupt the command when the timeout passes; this environment always does.",
				"quiet":   "Seconds without new output after which control comes back while the command runs on (default 600).",
			}},
		{name: "hard_budget", spec: `{"kind":"process","executable":"sh","description":"d","timeout":1.5,"hard":true,"budget":500}`,
			desc: "Run a command in the e environment and return its output. A command is interrupted after 1.5s. Control comes back after 30s without new output while it runs on: then send an empty command to wait, C-c to interrupt it, or text to answer it when it waits for input. Its section shows its state and the commands it accepts.",
			fields: map[string]string{
				"timeout": "Seconds after which the command is interrupted: at most 1.5 (this environment's limit), the default.",
				"hard":    "Interrupt the command when the timeout passes; this environment always does.",
				"budget":  "Tokens the output may take before its middle is left out and the whole output saved to a file (default 500).",
			}},
		{name: "soft_spec", spec: `{"kind":"process","executable":"sh","description":"d","timeout":300}`, desc: defaultDesc,
			fields: map[string]string{
				"timeout": "Seconds after which control comes back while the command runs on (default 300); with hard, the command is interrupted then instead.",
			}},
		{name: "registered", reg: []RegisterOption{Limits(envs.Defaults{Quiet: -1, Wait: -1}), Budget(-1)},
			desc: "Run a command in the e environment and return its output. Control comes back at the timeout while the command runs on: then send an empty command to wait, C-c to interrupt it, or text to answer it when it waits for input. Its section shows its state and the commands it accepts.",
			fields: map[string]string{
				"timeout": "Seconds after which control comes back while the command runs on (default: none); with hard, the command is interrupted then instead.",
				"quiet":   "Seconds without new output after which control comes back while the command runs on (default: never).",
				"budget":  "Tokens the output may take before its middle is left out and the whole output saved to a file (default: no bound).",
			}},
		{name: "output_budget", opts: []Option{WithOutputBudget(2000)}, reg: []RegisterOption{Limits(envs.Defaults{Quiet: 45 * time.Second})},
			desc: "Run a command in the e environment and return its output. Control comes back after 45s without new output, or at the timeout, while the command runs on: then send an empty command to wait, C-c to interrupt it, or text to answer it when it waits for input. Its section shows its state and the commands it accepts.",
			fields: map[string]string{
				"quiet":  "Seconds without new output after which control comes back while the command runs on (default 45).",
				"budget": "Tokens the output may take before its middle is left out and the whole output saved to a file (default 2000).",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := mustNew(t, append(tc.opts, trivialProcesses())...)
			defer o.Close()
			if tc.spec == "" {
				if err := o.Register("e", &testEnv{}, tc.reg...); err != nil {
					t.Fatal(err)
				}
			} else if err := o.LoadSpecs(writeProject(t, map[string]string{"e.json": tc.spec})); err != nil {
				t.Fatal(err)
			}
			tool, err := o.CommandTool("e")
			if err != nil {
				t.Fatal(err)
			}
			if got := tool.Description(); got != tc.desc {
				t.Errorf("description:\ngot  %s\nwant %s", got, tc.desc)
			}
			var schema struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(tool.InputSchema(), &schema); err != nil {
				t.Fatal(err)
			}
			for field, def := range defaults {
				want := def
				if d, ok := tc.fields[field]; ok {
					want = d
				}
				if got := schema.Properties[field].Description; got != want {
					t.Errorf("%s:\ngot  %s\nwant %s", field, got, want)
				}
			}
		})
	}
}

// TestSpecHardTimeoutIsACeiling: a spec file's hard timeout is the most a
// command gets, in an interactive environment as in a process one: the
// call's own timeout, hard or not, interrupts the command when it comes
// sooner and does not keep it running past the spec's. The commands run
// until they are interrupted; a call that is not interrupted by a timeout
// is cancelled after a minute, which its answer tells apart.
func TestSpecHardTimeoutIsACeiling(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []struct {
		name  string
		spec  map[string]any
		quick string // a command that answers at once
		block string // a command that runs until it is interrupted
	}{
		{"interactive", map[string]any{"kind": "interactive", "command": "python3 -i -q", "prompt": ">>> "}, "1", "import time; time.sleep(1000)"},
		{"process", map[string]any{"kind": "process", "executable": exe, "env": fakeVars("counter")}, "get", "sleep"},
	} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for name, timeout := range map[string]float64{"short": 3, "long": 600} {
				spec := maps.Clone(kind.spec)
				spec["description"], spec["timeout"], spec["hard"] = "d", timeout, true
				b, err := json.Marshal(spec)
				if err != nil {
					t.Fatal(err)
				}
				files[name+".json"] = string(b)
			}
			o := mustNew(t, WithInteractive(newInteractive))
			defer o.Close()
			if err := o.LoadSpecs(writeProject(t, files)); err != nil {
				t.Fatal(err)
			}
			for _, row := range []struct{ env, input string }{
				{"short", `{"timeout":600,"hard":true}`},
				{"short", `{"timeout":600}`},
				{"long", `{"timeout":0.5,"hard":true}`},
				{"long", `{"timeout":0.5}`},
			} {
				tool, err := o.CommandTool(row.env)
				if err != nil {
					t.Fatal(err)
				}
				// Started first, so that the start does not count.
				if res, err := tool.Call(context.Background(), tools.Context{}, json.RawMessage(`{"command":"`+kind.quick+`"}`)); err != nil || !res.Success {
					t.Fatalf("%s: first command: got %+v, %v", row.env, res, err)
				}
				input := strings.Replace(row.input, "{", `{"command":"`+kind.block+`",`, 1)
				ctx, cancel := context.WithCancel(context.Background())
				watchdog := time.AfterFunc(time.Minute, cancel)
				res, err := tool.Call(ctx, tools.Context{}, json.RawMessage(input))
				watchdog.Stop()
				cancel()
				out, _ := res.Value.(CommandOutput)
				if err != nil || res.Success || out.Running || !strings.Contains(res.Message, "timed out") {
					t.Errorf("%s %s: got %+v, %v; want the command interrupted by a timeout", row.env, input, res, err)
				}
			}
		})
	}
}
