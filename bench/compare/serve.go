package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// runServe sends commands through `unfold serve` over pipes, one at a time
// (each waits for its response line), and reports the round trip and
// commands per second for each kind of line.
func runServe(cfg *config) (*table, error) {
	if cfg.unfold == "" {
		return nil, errors.New("no -unfold binary: run bench/compare/run.sh, which builds it")
	}
	dir, err := os.MkdirTemp(cfg.tmp, "serve-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(dir+"/notes.txt", []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(cfg.unfold, "serve", "--project", dir)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	out := bufio.NewReaderSize(outPipe, 1<<20)
	readLine := func() ([]byte, error) {
		var line []byte
		for {
			chunk, err := out.ReadSlice('\n')
			line = append(line, chunk...)
			if err == nil {
				return line, nil
			}
			if err != bufio.ErrBufferFull || len(line) > maxReply {
				return line, err
			}
		}
	}
	kinds := []struct {
		row  *row
		line string
		want string
	}{
		{&row{label: "bash `true`", per: "command"}, `{"type":"command","environment":"bash","command":"true"}`, `"success":true`},
		{&row{label: "python `x = 1`", per: "command"}, `{"type":"command","environment":"python","command":"x = 1"}`, `"success":true`},
		{&row{label: "editor `search \"beta\" *.txt`", per: "command"}, `{"type":"command","environment":"editor","command":"search \"beta\" *.txt"}`, `"success":true`},
		{&row{label: "a line that is not JSON", per: "command"}, `not json`, `"type":"error"`},
	}
	var through []string
	sides := make([]func() error, len(kinds))
	var round, n int
	for i, k := range kinds {
		sides[i] = func() error {
			msg := []byte(k.line + "\n")
			t0 := time.Now()
			ds, err := timeN(n, func() error {
				if _, err := in.Write(msg); err != nil {
					return err
				}
				line, err := readLine()
				if err == nil && !bytes.Contains(line, []byte(k.want)) {
					err = fmt.Errorf("%s: got %.300s, want %s in it", k.line, line, k.want)
				}
				return err
			})
			if round >= 0 {
				k.row.s.add(round, ds)
				if round == cfg.rounds-1 {
					through = append(through, fmt.Sprintf("%s: %.0f commands/s over the last round", k.row.label, float64(n)/time.Since(t0).Seconds()))
				}
			}
			return err
		}
	}
	round, n = -1, 50
	if err := rotate(0, sides...); err != nil {
		return nil, err
	}
	for round = range cfg.rounds {
		n = 400
		if err := rotate(round, sides...); err != nil {
			return nil, err
		}
	}
	t := &table{name: "serve", desc: "one command line in, one response line out, through `unfold serve` over pipes (every response carries every screen)"}
	for _, k := range kinds {
		t.rows = append(t.rows, k.row)
		t.notes = append(t.notes, fmt.Sprintf("%s: %.0f commands/s at the median", k.row.label, float64(time.Second)/float64(k.row.s.median())))
	}
	t.notes = append(t.notes, through...)
	return t, nil
}
