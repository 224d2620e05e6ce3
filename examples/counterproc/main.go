// Command counterproc drives a process environment written in Python through
// the orchestrator: project/env/counter.json declares it, project/env/counter.py
// implements the process-environment protocol (docs/process-environments.md).
//
// Run it from anywhere in the repository (python3 must be installed):
//
//	go run ./examples/counterproc
//
// It finds the project next to its source (or takes -project DIR), loads
// the project's spec files, runs a few commands in the counter environment
// and prints each response and the counter's screen.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/unfold-dev/unfold/orchestrator"
)

func main() {
	project := flag.String("project", sourceProject(), "the project directory, holding env/counter.json")
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
	if !slices.Contains(o.Names(), "counter") {
		return fmt.Errorf("%s declares no counter environment (env/counter.json): give -project DIR, the example's project directory", project)
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

// sourceProject is the project directory next to this file, as the
// compiler saw it: go run finds it from any directory. A build without
// the source's path (-trimpath) looks in the working directory.
func sourceProject() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "project")
	}
	return "project"
}
