//go:build linux && !(386 || amd64 || arm || mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || s390x || sparc64)

package term

// Architectures on Linux's generic system call table (arm64, riscv64,
// loong64) have no poll(2) or epoll_wait(2): their C libraries call ppoll
// and epoll_pwait.
var legacyPoll, legacyEpoll []int
