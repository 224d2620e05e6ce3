// Package procs keeps track of the processes an environment starts, so that
// closing the environment ends every one of them, and sets their resource
// limits.
//
// # Groups
//
// A [Group] holds one run of an environment's program and everything it
// starts, including processes that called setsid or left their process
// group. Where a cgroup (version 2) can be made under this process's own,
// the program starts inside it (clone3 with CLONE_INTO_CGROUP), its
// descendants stay there whatever they do, and [Group.Kill] ends them all
// (cgroup.kill). Elsewhere the group scans /proc for the program's
// descendants and for processes whose environment carries the group's
// mark ([Group.Env]), a variable that descendants inherit unless they
// clear their environment; orphans re-parented away are found by the mark.
//
//	g := procs.NewGroup()
//	defer g.Close()
//	cmd.Env = append(cmd.Env, g.Env())
//	err := g.Start(cmd, cmd.Start)
//	...
//	err = g.Kill() // SIGTERM, then SIGKILL, to every member
//
// # Orphans
//
// [AdoptOrphans] makes this process a subreaper: what a dead program
// leaves behind comes to it instead of PID 1, which in many containers
// never reaps, and it reaps each such orphan when it ends. It reaps only
// zombie children that no pidfd of the process refers to; os holds one for
// every child an exec.Cmd or os.Process started until its Wait, so those
// keep their exit statuses wherever they were started.
//
// # Resource limits
//
// [Limits] are set on a started process with prlimit(2) and inherited by
// what it starts: address space, CPU seconds, processes and file size.
package procs
