package term

import "golang.org/x/sys/unix"

// The system calls readsTerminal tells apart, as /proc/<pid>/syscall
// numbers them on this architecture. Every Linux architecture has read,
// pselect6, ppoll, epoll_pwait and epoll_pwait2; only the older ones have
// poll and epoll_wait too (see syscalls_legacy_linux.go).
var (
	sysRead   = unix.SYS_READ
	sysSelect = unix.SYS_PSELECT6
	sysPolls  = append([]int{unix.SYS_PPOLL}, legacyPoll...)
	sysEpolls = append([]int{unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2}, legacyEpoll...)
)
