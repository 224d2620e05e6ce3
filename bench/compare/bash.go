package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/internal/ptyfloor"
)

// runBash is 2,000 round trips of `true` per round through four sides:
// envs/bash, a pexpect-driven bash, and the two floors.
func runBash(cfg *config) (*table, error) {
	const perRound = 2000
	dir, err := os.MkdirTemp(cfg.tmp, "bash-")
	if err != nil {
		return nil, err
	}
	sh, err := bash.New(bash.WithDir(dir))
	if err != nil {
		return nil, err
	}
	defer sh.Close()
	py := exec.Command(cfg.python, filepath.Join(cfg.scripts, "peer_pexpect.py"))
	py.Dir = dir
	pex, err := startWorker("pexpect peer", py)
	if err != nil {
		return nil, err
	}
	defer pex.close()
	marker := []byte("\x1eM\x1f")
	bareEnv := []string{"PS1=\x1eM\x1f", "TERM=dumb", "PATH=" + os.Getenv("PATH")}
	bashArgs := []string{"--norc", "--noprofile", "--noediting", "-i"}
	bare, err := ptyfloor.Start(0, bareEnv, "bash", bashArgs...)
	if err != nil {
		return nil, err
	}
	defer bare.Close()
	if err := bare.Until(marker); err != nil {
		return nil, err
	}
	// The same bash read the way envs/bash reads its shell: in the
	// reading goroutine, busy-waiting for the reply at first.
	spun, err := ptyfloor.Start(bash.DefaultSpin, bareEnv, "bash", bashArgs...)
	if err != nil {
		return nil, err
	}
	defer spun.Close()
	if err := spun.Until(marker); err != nil {
		return nil, err
	}
	cat, err := ptyfloor.Start(0, nil, "cat")
	if err != nil {
		return nil, err
	}
	defer cat.Close()

	ours := &row{label: "unfold envs/bash", per: "command"}
	pexR := &row{label: "pexpect (delaybeforesend=None)", per: "command"}
	bareR := &row{label: "floor: bare bash on a pty, minimal marker", per: "command"}
	spunR := &row{label: "floor: bare bash, read spinning as unfold", per: "command"}
	catR := &row{label: "floor: pty running cat", per: "command"}
	ctx := context.Background()
	sides := func(round, n int) error {
		return rotate(max(round, 0),
			func() error {
				ds, err := timeN(n, func() error {
					resp, err := sh.Execute(ctx, "true")
					if err == nil && !resp.Success {
						err = fmt.Errorf("true failed: %s", resp.Output)
					}
					return err
				})
				if round >= 0 {
					ours.s.add(round, ds)
				}
				return err
			},
			func() error {
				var b peerBatch
				if err := pex.call(fmt.Sprint(n), &b); err != nil {
					return err
				}
				if round >= 0 {
					pexR.s.add(round, nsToDurations(b.NS))
				}
				return nil
			},
			func() error {
				ds, err := timeN(n, func() error { return bare.RoundTrip([]byte("true\n"), marker) })
				if round >= 0 {
					bareR.s.add(round, ds)
				}
				return err
			},
			func() error {
				ds, err := timeN(n, func() error { return spun.RoundTrip([]byte("true\n"), marker) })
				if round >= 0 {
					spunR.s.add(round, ds)
				}
				return err
			},
			func() error {
				ds, err := timeN(n, func() error { return cat.RoundTrip([]byte("x\n"), []byte("x\n")) })
				if round >= 0 {
					catR.s.add(round, ds)
				}
				return err
			})
	}
	if err := sides(-1, 200); err != nil {
		return nil, err
	}
	for round := range cfg.rounds {
		if err := sides(round, perRound); err != nil {
			return nil, err
		}
	}
	return &table{
		name: "bash",
		desc: fmt.Sprintf("round trip of `true` in a persistent bash, %d per round per side", perRound),
		rows: []*row{ours, pexR, bareR, spunR, catR},
		ratios: []ratio{
			{label: "pexpect / unfold", num: pexR, den: ours, target: "target: at least 5x"},
			{label: "unfold / bare bash", num: ours, den: bareR, target: "target: at most 1.5x"},
			{label: "unfold / bare bash read spinning", num: ours, den: spunR},
			{label: "unfold / pty cat", num: ours, den: catR},
		},
	}, nil
}
