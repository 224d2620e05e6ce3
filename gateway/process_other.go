//go:build !linux

package gateway

import "syscall"

// sysProcAttr puts a server in a process group of its own, so that a
// terminal's Ctrl-C reaches unfold, which stops it, and not the server,
// and stopping it signals the group.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
