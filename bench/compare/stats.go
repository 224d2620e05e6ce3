package main

import (
	"fmt"
	"slices"
	"time"
)

// sample is what one side of a workload measured: the duration of every
// iteration, grouped by round.
type sample struct {
	rounds [][]time.Duration
}

func (s *sample) add(round int, ds []time.Duration) {
	for len(s.rounds) <= round {
		s.rounds = append(s.rounds, nil)
	}
	s.rounds[round] = append(s.rounds[round], ds...)
}

// median is the median over every iteration of every round.
func (s *sample) median() time.Duration {
	var all []time.Duration
	for _, r := range s.rounds {
		all = append(all, r...)
	}
	return medianOf(all)
}

// p99 is the 99th percentile over every iteration.
func (s *sample) p99() time.Duration {
	var all []time.Duration
	for _, r := range s.rounds {
		all = append(all, r...)
	}
	if len(all) == 0 {
		return 0
	}
	slices.Sort(all)
	return all[min(len(all)-1, len(all)*99/100)]
}

// spread is the lowest and the highest of the per-round medians.
func (s *sample) spread() (lo, hi time.Duration) {
	for i, r := range s.rounds {
		m := medianOf(r)
		if i == 0 || m < lo {
			lo = m
		}
		if m > hi {
			hi = m
		}
	}
	return lo, hi
}

func (s *sample) count() int {
	n := 0
	for _, r := range s.rounds {
		n += len(r)
	}
	return n
}

func medianOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// human formats a duration with three significant digits in a unit that
// suits it.
func human(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
	default:
		return fmt.Sprintf("%d ns", d)
	}
}

func nsToDurations(ns []int64) []time.Duration {
	ds := make([]time.Duration, len(ns))
	for i, n := range ns {
		ds[i] = time.Duration(n)
	}
	return ds
}

// timeN runs f n times and returns each duration; it stops at the first
// error.
func timeN(n int, f func() error) ([]time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := f(); err != nil {
			return ds, err
		}
		ds = append(ds, time.Since(t0))
	}
	return ds, nil
}

// timeFresh runs f n times, each on a new input that next makes before the
// clock starts, and returns each duration; it stops at the first error.
func timeFresh[T any](n int, next func() T, f func(T) error) ([]time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		in := next()
		t0 := time.Now()
		if err := f(in); err != nil {
			return ds, err
		}
		ds = append(ds, time.Since(t0))
	}
	return ds, nil
}
