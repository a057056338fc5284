package procs

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// sysProcAttr makes the kernel kill a child when the test binary dies, so an
// interrupted run leaves no sluice process behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// procState is the one-letter state of a process from /proc ("T" when
// stopped by SIGSTOP), or "" when it cannot be read.
func procState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name is in parentheses and may contain spaces; the state
	// follows the closing one.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+3 > len(s) {
		return ""
	}
	return s[i+2 : i+3]
}
