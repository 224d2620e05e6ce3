package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/unfold-dev/unfold/envs/bash"
)

// runBash is 2,000 round trips of `true` per round through four sides:
// envs/bash, a pexpect-driven bash, and the two floors.
func runBash(cfg *config) (*table, error) {
	const perRound = 2000
	dir, err := os.MkdirTemp(cfg.tmp, "bash-")
	if err != nil {
		return nil, err
	}
	sh, err := bash.New(bash.Options{Dir: dir})
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
	bare, err := startRaw([]string{"PS1=\x1eM\x1f", "TERM=dumb", "PATH=" + os.Getenv("PATH")}, "bash", "--norc", "--noprofile", "--noediting", "-i")
	if err != nil {
		return nil, err
	}
	defer bare.close()
	if err := bare.until(marker); err != nil {
		return nil, err
	}
	cat, err := startRaw(nil, "cat")
	if err != nil {
		return nil, err
	}
	defer cat.close()

	ours := &row{label: "unfold envs/bash", per: "command"}
	pexR := &row{label: "pexpect (delaybeforesend=None)", per: "command"}
	bareR := &row{label: "floor: bare bash on a pty, minimal marker", per: "command"}
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
				ds, err := timeN(n, func() error { return bare.roundTrip([]byte("true\n"), marker) })
				if round >= 0 {
					bareR.s.add(round, ds)
				}
				return err
			},
			func() error {
				ds, err := timeN(n, func() error { return cat.roundTrip([]byte("x\n"), []byte("x\n")) })
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
		rows: []*row{ours, pexR, bareR, catR},
		ratios: []ratio{
			{label: "pexpect / unfold", num: pexR, den: ours, target: "target: at least 5x"},
			{label: "unfold / bare bash", num: ours, den: bareR, target: "target: at most 1.5x"},
			{label: "unfold / pty cat", num: ours, den: catR},
		},
	}, nil
}
