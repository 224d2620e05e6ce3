// Command counterproc drives a process environment written in Python through
// the orchestrator: project/env/counter.json declares it, project/env/counter.py
// implements the process-environment protocol (docs/process-environments.md).
//
// Run it from this directory (python3 must be installed):
//
//	go run . -project project
//
// It loads the project's spec files, runs a few commands in the counter
// environment and prints each response and the counter's screen.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/unfold-dev/unfold/orchestrator"
)

func main() {
	project := flag.String("project", "project", "the project directory, holding env/counter.json")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *project); err != nil {
		fmt.Fprintln(os.Stderr, "counterproc:", err)
		os.Exit(1)
	}
}

// run loads the project and runs the demonstration, writing what the agent
// would see to w.
func run(ctx context.Context, w io.Writer, project string) (err error) {
	o, err := orchestrator.New()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := o.Close(); err == nil {
			err = cerr
		}
	}()
	if err := o.LoadSpecs(project); err != nil {
		return err
	}
	fmt.Fprintf(w, "environments: %v\n", o.Names())
	for _, cmd := range []string{"add 5", "add 2", "sub x", "jump", "reset", "add 40"} {
		res := o.Execute(ctx, "counter", cmd)
		fmt.Fprintf(w, "\n> counter: %s\n%s\n(success: %v)\n", cmd, res.Response.Output, res.Response.Success)
	}
	s, _ := o.Screen("counter")
	fmt.Fprintf(w, "\nscreen (max %d lines):\n%s\n", s.MaxLines, s.Content)
	return nil
}
