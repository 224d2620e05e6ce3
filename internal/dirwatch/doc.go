// Package dirwatch tells whether a directory changed since it was last
// asked, at the cost of one system call when nothing did, and without a
// goroutine.
//
// A [Watcher] follows one directory, which need not exist yet: its
// creation, removal or renaming in its parent, and the creation, removal,
// renaming, writing and attribute changes of the entries in it that a
// filter accepts. [Watcher.Changed] reads what happened since the last
// call without waiting.
//
// # Why not a goroutine
//
// On Linux the watcher reads inotify's queue itself. The kernel queues an
// event before the call that made the change returns, so a question asked
// after a change (a file written, then a command sent) sees it. Watchers
// that deliver events from a goroutine over a channel (fsnotify) see the
// same events some microseconds to milliseconds later: asked at once, they
// miss the change.
//
// Elsewhere [New] fails with [errors.ErrUnsupported]; on Linux it fails
// when the system's inotify limits are reached (instances per user,
// watches per user). Callers then look at the directory themselves.
//
//	w, err := dirwatch.New("/project/env", func(name string) bool { return strings.HasSuffix(name, ".json") })
//	if err != nil {
//		// scan the directory on every question instead
//	}
//	defer w.Close()
//	changed, err := w.Changed()
package dirwatch
