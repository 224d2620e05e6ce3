//go:build linux && (386 || amd64 || arm || mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || s390x || sparc64)

package term

import "golang.org/x/sys/unix"

// poll(2) and epoll_wait(2), which the architectures that came before
// Linux's generic system call table have beside ppoll and epoll_pwait.
var (
	legacyPoll  = []int{unix.SYS_POLL}
	legacyEpoll = []int{unix.SYS_EPOLL_WAIT}
)
