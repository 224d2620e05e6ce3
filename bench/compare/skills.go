package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/internal/textgen"
	"github.com/unfold-dev/unfold/skills"
)

// skillCount is how many skills the skills workload loads.
const skillCount = 500

// runSkills loads 500 skills (textgen.WriteSkills: a 200-character
// description, 4 KB of instructions, a script and a reference each) side
// by side: unfold's loader, which reads the front matter only and checks
// the format's rules (a skill's files are listed when it opens); the same
// followed by reading every
// skill's instructions (what holding them at load costs); a Node.js loader
// as clients write one (read each SKILL.md whole, parse its front matter
// with js-yaml); and the file system's floor (open, read 1 KiB and close
// each SKILL.md). unfold and Node.js produce the same names and
// descriptions, checked before timing.
func runSkills(cfg *config) (*table, error) {
	dir, err := os.MkdirTemp(cfg.tmp, "skills-")
	if err != nil {
		return nil, err
	}
	if err := textgen.WriteSkills(dir, skillCount); err != nil {
		return nil, err
	}
	node, err := nodeWorker(cfg)
	if err != nil {
		return nil, err
	}
	defer node.close()
	if err := sameSkills(node, dir); err != nil {
		return nil, err
	}
	lazy := &row{label: "unfold skills.Load: 500 skills (front matter, rules)", per: "load"}
	eager := &row{label: "unfold skills.Load, then every SKILL.md read whole", per: "load"}
	peer := &row{label: "node + js-yaml: read each SKILL.md, parse its front matter", per: "load"}
	floor := &row{label: "floor: open, read 1 KiB, close each SKILL.md", per: "load"}
	load := func(instructions bool) func() error {
		return func() error {
			set, err := skills.Load(dir)
			if err == nil && set.Len() != skillCount {
				err = fmt.Errorf("loaded %d skills, want %d: %v", set.Len(), skillCount, set.Problems())
			}
			for _, k := range set.Skills() {
				if err == nil && instructions {
					_, err = k.Instructions()
				}
			}
			return err
		}
	}
	buf := make([]byte, 1024)
	open := func() error {
		for i := range skillCount {
			f, err := os.Open(filepath.Join(dir, fmt.Sprintf("skill-%03d", i), skills.FileName))
			if err != nil {
				return err
			}
			_, err = f.Read(buf)
			f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	add := func(r *row, round int, ds []time.Duration) {
		if round >= 0 {
			r.s.add(round, ds)
		}
	}
	var cpu time.Duration // processor time of the timed unfold loads
	sides := func(round, n int) error {
		return rotate(max(round, 0),
			func() error {
				before := cpuTime()
				ds, err := timeN(n, load(false))
				if round >= 0 {
					cpu += cpuTime() - before
				}
				add(lazy, round, ds)
				return err
			},
			func() error { ds, err := timeN(n, load(true)); add(eager, round, ds); return err },
			func() error {
				var b peerBatch
				if err := node.call(map[string]any{"op": "skills", "dir": dir, "iters": n}, &b); err != nil {
					return err
				}
				if b.Count != skillCount {
					return fmt.Errorf("node loaded %d skills, want %d", b.Count, skillCount)
				}
				add(peer, round, nsToDurations(b.NS))
				return nil
			},
			func() error { ds, err := timeN(n, open); add(floor, round, ds); return err })
	}
	if err := sides(-1, 2); err != nil {
		return nil, err
	}
	for round := range cfg.rounds {
		if err := sides(round, 5); err != nil {
			return nil, err
		}
	}
	return &table{
		name: "skills",
		desc: "loading 500 Agent Skills",
		rows: []*row{lazy, eager, peer, floor},
		ratios: []ratio{
			{label: "node + js-yaml / unfold", num: peer, den: lazy},
			{label: "unfold eager / unfold", num: eager, den: lazy},
			{label: "unfold / floor", num: lazy, den: floor},
		},
		notes: []string{
			fmt.Sprintf("target: 500 skills load in under 20 ms; unfold's median here is %s, using %s of processor time per load (user and system, both workers), which the machine's load sways less",
				human(lazy.s.median()), human(cpu/time.Duration(max(lazy.s.count(), 1)))),
			"unfold reads each SKILL.md up to the end of its front matter and checks every rule; a skill's files are listed when it opens; node reads each file whole and checks nothing",
			"both give the same 500 names and descriptions, checked before timing",
		},
	}, nil
}

// sameSkills checks that unfold and the Node.js loader read the same names
// and descriptions.
func sameSkills(node *worker, dir string) error {
	set, err := skills.Load(dir)
	if err != nil {
		return err
	}
	var ours []string
	for _, k := range set.Skills() {
		ours = append(ours, k.Name+"\t"+k.Description)
	}
	var theirs struct {
		List []string `json:"list"`
	}
	if err := node.call(map[string]any{"op": "skills", "dir": dir, "iters": 1, "list": true}, &theirs); err != nil {
		return err
	}
	if strings.Join(ours, "\n") != strings.Join(theirs.List, "\n") {
		return fmt.Errorf("unfold and node read different skills: %d and %d", len(ours), len(theirs.List))
	}
	return nil
}
