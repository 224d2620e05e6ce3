// Soak runs `unfold serve` through a long mixed session over pipes and
// reports whether it stays healthy: 100,000 commands by default, to bash,
// python and the editor, with bad lines among them.
//
// # What it checks
//
//   - every line is answered, with the kind of answer it should get;
//   - resident memory of the server and of its environments' processes,
//     sampled through the run, levels off (the last samples stay within a
//     margin of the middle ones);
//   - open file descriptors and threads do not grow;
//   - goroutines do not grow: a goroutine dump (SIGQUIT with
//     GOTRACEBACK=all) at the end of the long run is compared with one at
//     the end of a short run;
//   - at end of input the server shuts every environment down and exits 0.
//
// # Running
//
//	go build -o /tmp/unfold ./cmd/unfold
//	go run ./bench/soak -unfold /tmp/unfold [-n 100000]
//
// It exits 1 when a check fails. It sends traffic only over pipes to a
// process it starts, and stops by itself.
package main
