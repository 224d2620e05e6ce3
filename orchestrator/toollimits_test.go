package orchestrator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

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
				"timeout": "Seconds after which the command is interrupted (default 2).",
				"hard":    "Interrupt the command when the timeout passes; this environment always does.",
				"quiet":   "Seconds without new output after which control comes back while the command runs on (default 600).",
			}},
		{name: "hard_budget", spec: `{"kind":"process","executable":"sh","description":"d","timeout":1.5,"hard":true,"budget":500}`,
			desc: "Run a command in the e environment and return its output. A command is interrupted after 1.5s. Control comes back after 30s without new output while it runs on: then send an empty command to wait, C-c to interrupt it, or text to answer it when it waits for input. Its section shows its state and the commands it accepts.",
			fields: map[string]string{
				"timeout": "Seconds after which the command is interrupted (default 1.5).",
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
